/**
 * The event log as the API shows it, defined once: an event with its deliveries and the history of
 * hand operations on them (`GET /api/events`, `GET /api/events/{id}`), a deferred notification
 * (`GET /api/deferred`), and the answers of resend, send-now, drop and replay. Events are written
 * by the pipeline (hot path), not through a definition of settings; this is what is read back.
 */
import Type, { type Static } from 'typebox';
import { Uuid } from '../../http/schemas.ts';
import { DispatchStatusSchema, SEVERITIES, type Severity, SeveritySchema } from '../vocabulary.ts';
import { JsonObject, Nullable, Time } from './common.ts';

/** A message as text: its title and body. */
export const RenderedView = Type.Object({ title: Type.String(), body: Type.String() });

/** One delivery of an event to a target. */
export const DeliveryView = Type.Object({
  id: Uuid,
  target_id: Uuid,
  target_name: Nullable(Type.String()),
  target_kind: Nullable(Type.String()),
  /** `queued`, `sending`, `deferred`, `in_digest`, `sent`, `failed` or `dropped`. */
  status: Type.String(),
  reason: Nullable(Type.String()),
  attempts: Type.Integer(),
  last_error: Nullable(Type.String()),
  last_status_code: Nullable(Type.Integer()),
  sent_at: Nullable(Time),
  /** While it waits for another attempt (queued after a failure) or for quiet hours to end: when. */
  next_attempt_at: Nullable(Time),
  updated_at: Time,
  /** Released at the end of quiet hours in a digest: the digest's event. */
  digest_event_id: Nullable(Uuid),
  /** How a sent delivery went out: `send` (a new message), `edit` (it updated the earlier one) or `reply`. */
  send_mode: Nullable(Type.String()),
  /** The message as this target received it, as plain text (rendered with the current templates). */
  rendered: RenderedView,
});

/** One hand operation on a delivery (resend, send now, drop, replay) and the attempt it replaced. */
export const DeliveryHistoryView = Type.Object({
  id: Uuid,
  action: Type.String(),
  at: Time,
  actor_id: Nullable(Uuid),
  actor_email: Nullable(Type.String()),
  target_id: Uuid,
  target_name: Nullable(Type.String()),
  delivery_id: Uuid,
  previous_delivery_id: Nullable(Uuid),
  previous: Type.Object({
    status: Type.String(),
    attempts: Type.Integer(),
    last_error: Nullable(Type.String()),
    last_status_code: Nullable(Type.Integer()),
    sent_at: Nullable(Time),
  }),
});

/** An event with its deliveries, their history and its readable message. */
export const EventView = Type.Object({
  id: Uuid,
  provider_id: Nullable(Uuid),
  provider_kind: Type.String(),
  provider_name: Nullable(Type.String()),
  event_type: Type.String(),
  severity: SeveritySchema,
  /** The event rendered as one line of plain text in the requested language. */
  message: Type.String(),
  /** The validated payload, fields named like secrets redacted. */
  payload: JsonObject,
  /** What the pipeline recorded about the dispatch (open JSON). */
  details: Type.Unknown(),
  tracker_ids: Nullable(Type.Array(Uuid)),
  dispatch_status: DispatchStatusSchema,
  occurred_at: Time,
  created_at: Time,
  /** Raised with "send a test event" (a sample payload), not by the source. */
  test: Type.Boolean(),
  deliveries: Type.Array(DeliveryView),
  history: Type.Array(DeliveryHistoryView),
});
export const EventList = Type.Object({ events: Type.Array(EventView) });

/** A delivery held back by quiet hours. */
export const DeferredView = Type.Object({
  id: Uuid,
  delivery_id: Uuid,
  event_id: Uuid,
  event_type: Type.String(),
  message: Nullable(Type.String()),
  tracker_id: Nullable(Uuid),
  tracker_name: Nullable(Type.String()),
  target_id: Uuid,
  target_name: Nullable(Type.String()),
  target_kind: Nullable(Type.String()),
  release_at: Time,
  created_at: Time,
});
export const DeferredList = Type.Object({ deferred: Type.Array(DeferredView) });

/** `POST /api/events/{id}/resend`: the new attempts. */
export const ResendAnswer = Type.Object({
  event_id: Uuid,
  resent: Type.Array(Type.Object({ delivery_id: Uuid, previous_delivery_id: Uuid, target_id: Uuid })),
});

/** `POST /api/deferred/{delivery_id}/send-now` and `/drop`: the delivery and its new status. */
export const SettleAnswer = Type.Object({ delivery_id: Uuid, event_id: Uuid, status: Type.String() });

/** One message of a replay's dry run, as the target would get it. */
export const ReplayPreviewMessage = Type.Object({
  event_id: Uuid,
  event_type: Type.String(),
  occurred_at: Time,
  /** In the target's format. */
  title: Type.String(),
  body: Type.String(),
  plain_title: Type.String(),
  plain_body: Type.String(),
  /** The caller's template failed to render (the dispatcher would fail this send); the default's text is shown. */
  template_error: Type.Optional(Type.String()),
});

/** `POST /api/events/replay` with `dry_run: true`: the count and the first messages per target. */
export const ReplayPreview = Type.Object({
  dry_run: Type.Literal(true),
  events: Type.Integer(),
  targets: Type.Array(
    Type.Object({
      target_id: Uuid,
      target_name: Type.String(),
      target_kind: Type.String(),
      locale: Type.String(),
      format: Type.String(),
      messages: Type.Array(ReplayPreviewMessage),
    }),
  ),
});

/** `POST /api/events/replay`: what was queued and what was left alone. */
export const ReplayQueued = Type.Object({
  dry_run: Type.Literal(false),
  events: Type.Integer(),
  queued: Type.Integer(),
  added: Type.Integer(),
  replaced: Type.Integer(),
  skipped: Type.Array(Type.Object({ event_id: Uuid, target_id: Uuid, status: Type.String() })),
});

export type EventRow = Static<typeof EventView>;

/**
 * An `event_log` row as read back (JSON as text or objects, booleans as the backend's), with its
 * provider's name from `LEFT JOIN providers p ... p.name AS provider_name`. The columns the view
 * shows as they are keep the view's types.
 */
export type EventDbRow = Pick<
  EventRow,
  | 'id'
  | 'provider_id'
  | 'provider_kind'
  | 'provider_name'
  | 'event_type'
  | 'severity'
  | 'dispatch_status'
  | 'occurred_at'
  | 'created_at'
> & {
  user_id: string;
  payload: unknown;
  extras: unknown;
  details: unknown;
  tracker_ids: unknown;
  test: unknown;
};

/** A stored severity as the vocabulary's; a value outside it (the pipeline writes none) reads as `info`. */
export function severityOf(v: unknown): Severity {
  return SEVERITIES.find((s) => s === v) ?? 'info';
}
