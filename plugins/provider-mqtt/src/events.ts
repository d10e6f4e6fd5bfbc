/** Event types of the MQTT provider. */

import type { EventSpec } from '@herald/plugin-api';
import { Type } from '@herald/plugin-api';
import { SeveritySchema } from './config.ts';

export const MqttMessagePayload = Type.Object({
  topic: Type.String(),
  title: Type.String(),
  body: Type.String(),
  /** From the mapping (`severity` through `severity_map`), `info` when unmapped. */
  severity: SeveritySchema,
  event_key: Type.Optional(Type.String()),
  /** The mapped values as text, keyed by mapping field; null when the message had no value there. */
  fields: Type.Record(Type.String(), Type.Union([Type.String(), Type.Null()])),
  /** True for a retained message the broker replayed on subscribing (only with `include_retained`). */
  retained: Type.Optional(Type.Boolean()),
});

export const StatusConnectedPayload = Type.Object({
  broker: Type.String(),
  first_connect: Type.Boolean(),
  /** The broker still had this client's session (and any QoS 1 messages queued for it). */
  session_present: Type.Boolean(),
  downtime_seconds: Type.Optional(Type.Integer({ minimum: 0 })),
});

export const StatusDisconnectedPayload = Type.Object({
  broker: Type.String(),
  reason: Type.String(),
  connected_seconds: Type.Integer({ minimum: 0 }),
});

export const EVENTS: Record<string, EventSpec> = {
  mqtt_message: {
    payload: MqttMessagePayload,
    quietHours: 'defer',
    // The declared default; each event carries its mapped severity (EmittedEvent.severity).
    severity: 'info',
    description: 'A message arrived on a subscribed topic.',
    // With `mapping.event_key` (a device id, `$topic`…): messages with the same key follow one notification.
    correlation: { key: ['event_key'] },
    example: {
      topic: 'lab/ups',
      title: 'On battery',
      body: 'The UPS in the lab runs on battery (charge 97 %).',
      severity: 'critical',
      event_key: 'lab/ups',
      fields: { title: 'On battery', body: null, severity: 'critical', event_key: 'lab/ups' },
    },
  },
  mqtt_status_connected: {
    payload: StatusConnectedPayload,
    quietHours: 'defer',
    severity: 'info',
    description: 'The connection to the broker is up (after start or an outage).',
    correlation: { key: ['broker'], thread: 'mqtt_connection' },
    example: { broker: 'broker.lan:1883', first_connect: false, session_present: true, downtime_seconds: 42 },
  },
  mqtt_status_disconnected: {
    payload: StatusDisconnectedPayload,
    quietHours: 'defer',
    severity: 'warning',
    description: 'An established connection to the broker was lost; Herald reconnects.',
    correlation: { key: ['broker'], thread: 'mqtt_connection' },
    example: { broker: 'broker.lan:1883', reason: 'connection closed by the broker', connected_seconds: 86_400 },
  },
};
