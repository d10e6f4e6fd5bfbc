/** Turns Home Assistant event messages into Herald event payloads. */
import type { Static } from '@herald/plugin-api';
import type { StateChange } from './debounce.ts';
import { domainOf } from './entity-filter.ts';
import type {
  AutomationTriggeredPayload,
  EventFiredPayload,
  ServiceCalledPayload,
  StateChangedPayload,
} from './events.ts';

/** The `event` object of a Home Assistant `{type: 'event'}` message. */
export interface HaEvent {
  event_type: string;
  data?: Record<string, unknown>;
  origin?: string;
  time_fired?: string;
  context?: unknown;
}

interface HaState {
  state?: unknown;
  attributes?: Record<string, unknown>;
}

const str = (v: unknown): string | undefined =>
  typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'boolean' ? String(v) : undefined;
const obj = (v: unknown): Record<string, unknown> | undefined =>
  v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;

/** `time_fired` as a Date, when it parses. */
export function firedAt(event: HaEvent): Date | undefined {
  const t = event.time_fired ? Date.parse(event.time_fired) : NaN;
  return Number.isFinite(t) ? new Date(t) : undefined;
}

/**
 * A `state_changed` event as a state change, or null when the state value did not change
 * (attribute-only updates) or the entity appeared or vanished (old or new state null, as on
 * every Home Assistant restart).
 */
export function toStateChange(event: HaEvent): StateChange | null {
  const data = event.data ?? {};
  const entityId = str(data.entity_id);
  const oldS = obj(data.old_state) as HaState | undefined;
  const newS = obj(data.new_state) as HaState | undefined;
  if (!entityId || !oldS || !newS) return null;
  const oldState = str(oldS.state);
  const newState = str(newS.state);
  if (oldState === undefined || newState === undefined || oldState === newState) return null;
  const attrs = newS.attributes ?? {};
  return {
    entityId,
    friendlyName: str(attrs.friendly_name) ?? str(oldS.attributes?.friendly_name) ?? entityId,
    oldState,
    newState,
    unit: str(attrs.unit_of_measurement),
    occurredAt: firedAt(event),
  };
}

export function stateChangedPayload(c: StateChange): Static<typeof StateChangedPayload> {
  const p: Static<typeof StateChangedPayload> = {
    entity_id: c.entityId,
    friendly_name: c.friendlyName,
    domain: domainOf(c.entityId),
    old_state: c.oldState,
    new_state: c.newState,
  };
  if (c.unit) p.unit = c.unit;
  return p;
}

export function automationPayload(event: HaEvent): Static<typeof AutomationTriggeredPayload> {
  const d = event.data ?? {};
  const entityId = str(d.entity_id) ?? 'automation.unknown';
  const p: Static<typeof AutomationTriggeredPayload> = { name: str(d.name) ?? entityId, entity_id: entityId };
  const source = str(d.source);
  if (source) p.source = source;
  return p;
}

/** Only the field names of service_data: values may be alarm codes, passwords or tokens. */
export function servicePayload(event: HaEvent): Static<typeof ServiceCalledPayload> {
  const d = event.data ?? {};
  return {
    domain: str(d.domain) ?? 'unknown',
    service: str(d.service) ?? 'unknown',
    service_data_keys: Object.keys(obj(d.service_data) ?? {}).sort(),
  };
}

const SECRET_FIELD = /pass|secret|token|key|auth|code|pin|csrf|cookie|credential|session/i;
const EXCERPT_MAX = 500;

/** JSON of `data` with secret-looking fields masked, cut to a short excerpt. */
export function dataExcerpt(data: unknown, max = EXCERPT_MAX): string {
  let json: string;
  try {
    json = JSON.stringify(data ?? {}, (k, v) => (k && SECRET_FIELD.test(k) ? '***' : v)) ?? '{}';
  } catch {
    json = '{}';
  }
  return json.length > max ? `${json.slice(0, max - 1)}…` : json;
}

export function eventFiredPayload(event: HaEvent): Static<typeof EventFiredPayload> {
  return { event_type: event.event_type, data_excerpt: dataExcerpt(event.data) };
}
