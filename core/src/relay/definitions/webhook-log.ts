/**
 * The webhook requests a provider or a bot received, as `GET /api/providers/{id}/webhook-log` and
 * `GET /api/bots/{id}/webhook-log` answer them (inbound/payload-log.ts reads them).
 */
import Type from 'typebox';
import { Uuid } from '../../http/schemas.ts';
import { Nullable, Time } from './common.ts';

export const WebhookLogEntryView = Type.Object({
  id: Uuid,
  received_at: Time,
  /** What the service answered. */
  status_code: Type.Integer(),
  error_message: Nullable(Type.String()),
  /** The start of the payload, secrets redacted. */
  payload_excerpt: Nullable(Type.String()),
  source_ip: Nullable(Type.String()),
  /** The events it recorded. */
  event_ids: Type.Array(Type.String()),
});
export const WebhookLog = Type.Object({ entries: Type.Array(WebhookLogEntryView) });
