/** The event type the generic webhook emits. */

import type { EventSpec } from '@herald/plugin-api';
import { Type } from '@herald/plugin-api';
import { SeveritySchema } from './config.ts';

export const WebhookReceivedPayload = Type.Object({
  title: Type.String(),
  body: Type.String(),
  /** Severity from the mapping (`severity` path through `severity_map`), `info` when unmapped. */
  severity: SeveritySchema,
  source_ip: Type.String(),
  event_key: Type.Optional(Type.String()),
  /** The mapped values as text, keyed by mapping field; null when the request had no value. */
  fields: Type.Record(Type.String(), Type.Union([Type.String(), Type.Null()])),
});

export const events: Record<string, EventSpec> = {
  webhook_received: {
    payload: WebhookReceivedPayload,
    quietHours: 'defer',
    // The declared default; each event carries its mapped severity (EmittedEvent.severity).
    severity: 'info',
    description: 'A JSON or form request arrived on the webhook URL and was mapped to a notification',
    // With `mapping.event_key` (an alert fingerprint, Alertmanager's groupKey…): requests with the
    // same key follow one message, so "resolved" edits the "firing" one. Without it, none is correlated.
    correlation: { key: ['event_key'] },
    example: {
      title: 'Disk almost full',
      body: '/srv is 93% full on nas.local.',
      severity: 'warning',
      source_ip: '192.0.2.10',
      event_key: 'disk-srv',
      fields: { host: 'nas.local', usage: '93%' },
    },
  },
};
