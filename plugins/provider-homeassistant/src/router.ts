/** Routes Home Assistant events to Herald events: filters, change detection and debounce. */
import type { EmittedEvent } from '@herald/plugin-api';
import type { HaConfig } from './config.ts';
import { EntityDebouncer } from './debounce.ts';
import { compileEntityFilter } from './entity-filter.ts';
import type { HaEvent } from './mapping.ts';
import {
  automationPayload,
  eventFiredPayload,
  firedAt,
  servicePayload,
  stateChangedPayload,
  toStateChange,
} from './mapping.ts';

/** Event types every connection subscribes to. */
export const BUILTIN_EVENT_TYPES = ['state_changed', 'automation_triggered', 'call_service'] as const;

/** Built-in types first, then the configured extra types without duplicates. */
export function subscribedEventTypes(config: HaConfig): string[] {
  return [...new Set<string>([...BUILTIN_EVENT_TYPES, ...(config.event_types ?? [])])];
}

export interface EventRouter {
  handle(event: HaEvent): void;
  /** Drops held (debounced) changes and their timers. */
  clear(): void;
}

export function createEventRouter(config: HaConfig, emit: (event: EmittedEvent) => void): EventRouter {
  const accepts = compileEntityFilter(config.entity_filters);
  const extra = new Set(
    (config.event_types ?? []).filter((t) => !(BUILTIN_EVENT_TYPES as readonly string[]).includes(t)),
  );
  const debouncer = new EntityDebouncer((config.entity_filters?.min_interval_seconds ?? 30) * 1000, (change) => {
    emit({ type: 'ha_state_changed', payload: stateChangedPayload(change), occurredAt: change.occurredAt });
  });
  return {
    handle(event) {
      switch (event.event_type) {
        case 'state_changed': {
          const change = toStateChange(event);
          if (change && accepts(change.entityId)) debouncer.offer(change);
          return;
        }
        case 'automation_triggered':
          emit({ type: 'automation_triggered', payload: automationPayload(event), occurredAt: firedAt(event) });
          return;
        case 'call_service':
          emit({ type: 'service_called', payload: servicePayload(event), occurredAt: firedAt(event) });
          return;
        default:
          if (extra.has(event.event_type))
            emit({ type: 'event_fired', payload: eventFiredPayload(event), occurredAt: firedAt(event) });
      }
    },
    clear: () => debouncer.clear(),
  };
}
