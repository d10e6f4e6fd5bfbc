/**
 * The JSON document published for one message. It carries what a target receives from the core
 * (`OutboundMessage`): the rendered title and text (plain), the event's type and severity, its
 * link, the provider, when the event happened and its payload (secrets redacted by the core), and
 * the ids a receiver needs to recognise a repeat. A quiet-hours digest stands for several events and
 * has no provider, time or payload of its own.
 */
import type { OutboundMessage, Severity } from '@herald/plugin-api';

export interface MqttDocument {
  title: string;
  text: string;
  severity: Severity;
  event_type: string;
  /** The event's link, when its payload has a `url`. */
  url?: string;
  locale: string;
  event_id: string;
  /** The same on every retry of one delivery (`<id>-<k>` for part k > 1 of a split message): deduplicate on it. */
  delivery_id: string;
  /** The provider the event came from. */
  provider?: { kind: string; name: string };
  /** When the event happened at its source. */
  occurred_at?: string;
  payload?: Record<string, unknown>;
  /** When Herald published it. */
  sent_at: string;
  /** Present for a test message sent from the API. */
  test?: true;
}

export function buildDocument(m: OutboundMessage, now: Date): MqttDocument {
  return {
    title: m.plainTitle,
    text: m.plainBody,
    severity: m.severity,
    event_type: m.eventType,
    ...(m.url ? { url: m.url } : {}),
    locale: m.locale,
    event_id: m.eventId,
    delivery_id: m.deliveryId,
    ...(m.provider ? { provider: m.provider } : {}),
    ...(m.occurredAt ? { occurred_at: m.occurredAt } : {}),
    ...(m.payload ? { payload: m.payload } : {}),
    sent_at: now.toISOString(),
    ...(m.test ? { test: true as const } : {}),
  };
}
