/** Event types the Home Assistant provider emits, with their payload schemas and quiet-hours policy. */

import type { EventSpec } from '@herald/plugin-api';
import { Type } from '@herald/plugin-api';

const Opt = Type.Optional;

export const StateChangedPayload = Type.Object({
  entity_id: Type.String(),
  friendly_name: Type.String(),
  domain: Type.String(),
  old_state: Type.String(),
  new_state: Type.String(),
  /** `unit_of_measurement` of the new state, when the entity has one. */
  unit: Opt(Type.String()),
});

export const AutomationTriggeredPayload = Type.Object({
  name: Type.String(),
  entity_id: Type.String(),
  /** What triggered it, as Home Assistant describes it (e.g. `state of binary_sensor.door`). */
  source: Opt(Type.String()),
});

export const ServiceCalledPayload = Type.Object({
  domain: Type.String(),
  service: Type.String(),
  /** Names of the service_data fields only: their values may hold secrets (codes, passwords). */
  service_data_keys: Type.Array(Type.String()),
});

export const EventFiredPayload = Type.Object({
  event_type: Type.String(),
  /** The event data as short JSON with secret-looking fields masked. */
  data_excerpt: Type.String(),
});

export const StatusConnectedPayload = Type.Object({
  host: Type.String(),
  ha_version: Opt(Type.String()),
  /** True on the first connection after start, false after an outage. */
  first_connect: Type.Boolean(),
  /** Seconds since the previous connection was lost (reconnects only). */
  downtime_seconds: Opt(Type.Integer({ minimum: 0 })),
});

export const StatusDisconnectedPayload = Type.Object({
  host: Type.String(),
  reason: Type.String(),
  /** How long the lost connection had been up. */
  connected_seconds: Type.Integer({ minimum: 0 }),
});

/**
 * The four Home Assistant event types defer in quiet hours (the spec requires deferral, not loss).
 * Connection status rows defer too: a link blip at night is not worth waking anyone, and a
 * deferred pair (lost, back) still tells the morning reader what happened and for how long.
 */
export const EVENTS: Record<string, EventSpec> = {
  ha_state_changed: {
    payload: StateChangedPayload,
    quietHours: 'defer',
    severity: 'info',
    description: 'An entity changed state (filtered and debounced per entity).',
    // One message per entity, edited to its latest state.
    correlation: { key: ['entity_id'] },
    example: {
      entity_id: 'sensor.living_room_temperature',
      friendly_name: 'Living room temperature',
      domain: 'sensor',
      old_state: '21.5',
      new_state: '22.0',
      unit: '°C',
    },
  },
  automation_triggered: {
    payload: AutomationTriggeredPayload,
    quietHours: 'defer',
    severity: 'info',
    description: 'An automation ran.',
    example: { name: 'Porch light at sunset', entity_id: 'automation.porch_light_at_sunset', source: 'sun' },
  },
  service_called: {
    payload: ServiceCalledPayload,
    quietHours: 'defer',
    severity: 'info',
    description: 'A service was called (field names only).',
    example: { domain: 'light', service: 'turn_on', service_data_keys: ['entity_id', 'brightness'] },
  },
  event_fired: {
    payload: EventFiredPayload,
    quietHours: 'defer',
    severity: 'info',
    description: 'One of the configured extra event types fired.',
    example: { event_type: 'doorbell_pressed', data_excerpt: '{"button":"front"}' },
  },
  ha_status_connected: {
    payload: StatusConnectedPayload,
    quietHours: 'defer',
    severity: 'info',
    description: 'The connection to Home Assistant is up (after start or an outage).',
    correlation: { key: ['host'], thread: 'connection' },
    example: { host: 'homeassistant.local:8123', ha_version: '2024.6.1', first_connect: false, downtime_seconds: 95 },
  },
  ha_status_disconnected: {
    payload: StatusDisconnectedPayload,
    quietHours: 'defer',
    severity: 'warning',
    description: 'An established connection to Home Assistant was lost.',
    correlation: { key: ['host'], thread: 'connection' },
    example: { host: 'homeassistant.local:8123', reason: 'the connection closed', connected_seconds: 86400 },
  },
};
