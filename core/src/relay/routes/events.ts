/**
 * The caller's event log and pending deferred notifications: `GET /api/events`, `GET /api/events/{id}`,
 * `POST /api/events/{id}/resend`, `GET /api/deferred`, `POST /api/deferred/{delivery_id}/send-now` and `/drop`.
 * Every change goes through the durable deliveries queue, so it works whichever replica serves the
 * request; the local dispatcher is only nudged.
 */
import Type, { type Static } from 'typebox';
import { caller, requireUser } from '../../auth/guard.ts';
import type { Core } from '../../core.ts';
import { Database as Db } from '../../db/database.ts';
import { accepted, errors, IdParams, ListQuery, Locale, ok, Uuid } from '../../http/schemas.ts';
import type { App } from '../../http/server.ts';
import { redactObject } from '../../logging/redact.ts';
import type { Locale as LocaleT } from '../../plugin-api/index.ts';
import { pickLocale } from '../../plugins/locales.ts';
import {
  DeferredList,
  type DeferredView,
  type DeliveryHistoryView,
  type DeliveryView,
  type EventDbRow,
  EventList,
  EventView,
  ResendAnswer,
  SettleAnswer,
} from '../definitions/event.ts';
import { resendDeliveries, settleDeferred } from '../pipeline/operations.ts';
import { owned, pageSql, relayIfRunning } from './common.ts';
import { EVENT_SELECT, EventFilterFields, eventPageSql } from './event-filter.ts';
import { replayRoutes } from './replay.ts';
import { catalogOf, oneLine, overridesFor, renderEvent } from './templates.ts';

const EventQuery = Type.Object({
  ...ListQuery.properties,
  ...EventFilterFields,
  locale: Type.Optional(Locale),
});

type Delivery = Static<typeof DeliveryView>;
type History = Static<typeof DeliveryHistoryView>;

/** A `deliveries` row with its target's name, kind and locale and its tracker's name. */
type DeliveryRow = Pick<
  Delivery,
  | 'id'
  | 'target_id'
  | 'target_name'
  | 'target_kind'
  | 'status'
  | 'reason'
  | 'last_error'
  | 'sent_at'
  | 'next_attempt_at'
  | 'updated_at'
  | 'digest_event_id'
  | 'send_mode'
> & {
  event_id: string;
  attempts: number | string | null;
  last_status_code: number | string | null;
  target_locale: string | null;
  tracker_name: string | null;
};

/** A `delivery_history` row with who did it (`actor_email`) and its target's name. */
type HistoryRow = Pick<
  History,
  'id' | 'action' | 'actor_id' | 'actor_email' | 'target_id' | 'target_name' | 'delivery_id' | 'previous_delivery_id'
> & {
  event_id: string;
  created_at: string;
  previous_status: string;
  previous_attempts: number | string | null;
  previous_error: string | null;
  previous_status_code: number | string | null;
  previous_sent_at: string | null;
};

/** A `deferred_dispatch` row with its target's name and kind and its tracker's name. */
type DeferredRow = Omit<Static<typeof DeferredView>, 'message'>;

/** Deliveries, hand-operation history and the readable message for a page of event rows. */
async function withDeliveries(
  core: Core,
  rows: EventDbRow[],
  userId: string,
  locale: LocaleT,
): Promise<Static<typeof EventView>[]> {
  const ids = rows.map((r) => r.id);
  const marks = ids.map(() => '?').join(', ');
  const deliveries = ids.length
    ? await core.db.all<DeliveryRow>(
        `SELECT d.id, d.event_id, d.target_id, d.status, d.reason, d.attempts, d.last_error, d.last_status_code,
          d.sent_at, d.updated_at, d.send_mode, d.next_attempt_at,
        t.name AS target_name, t.kind AS target_kind, d.digest_id AS digest_event_id, t.locale AS target_locale,
        tr.name AS tracker_name
      FROM deliveries d LEFT JOIN targets t ON t.id = d.target_id LEFT JOIN trackers tr ON tr.id = d.tracker_id
      WHERE d.event_id IN (${marks}) ORDER BY d.created_at, d.id`,
        ids,
      )
    : [];
  const history = ids.length
    ? await core.db.all<HistoryRow>(
        `SELECT h.*, u.email AS actor_email, t.name AS target_name FROM delivery_history h
      LEFT JOIN users u ON u.id = h.actor_id LEFT JOIN targets t ON t.id = h.target_id WHERE h.event_id IN (${marks})
      ORDER BY h.created_at, h.id`,
        ids,
      )
    : [];
  const catalog = catalogOf(core);
  const overrides = await overridesFor(
    core.db,
    userId,
    rows.map((r) => r.event_type),
    locale,
  );
  // Each delivery's text as its target got it: in the target's language, with its tracker's and target's names.
  const targetLocale = (d: DeliveryRow): LocaleT =>
    d.target_locale === 'en' || d.target_locale === 'ru' ? d.target_locale : locale;
  const overridesIn = new Map([[locale, overrides]]);
  for (const l of new Set(deliveries.map(targetLocale)))
    if (!overridesIn.has(l))
      overridesIn.set(
        l,
        await overridesFor(
          core.db,
          userId,
          rows.map((r) => r.event_type),
          l,
        ),
      );
  return rows.map((r) => ({
    id: r.id,
    provider_id: r.provider_id ?? null,
    provider_kind: r.provider_kind,
    provider_name: r.provider_name ?? null,
    event_type: r.event_type,
    severity: r.severity,
    message: oneLine(renderEvent(catalog, r, locale, overrides.get(r.event_type))),
    // Payloads come from outside services; fields named like secrets are never shown back.
    payload: redactObject(Db.json<Record<string, unknown>>(r.payload, {})),
    details: Db.json<unknown>(r.details, null),
    tracker_ids: Db.json<string[] | null>(r.tracker_ids, null),
    dispatch_status: r.dispatch_status,
    occurred_at: r.occurred_at,
    created_at: r.created_at,
    // Raised with "send a test event" (a sample payload), not by the source.
    test: Db.bool(r.test),
    deliveries: deliveries
      .filter((d) => d.event_id === r.id)
      .map((d) => ({
        id: d.id,
        target_id: d.target_id,
        target_name: d.target_name ?? null,
        target_kind: d.target_kind ?? null,
        status: d.status,
        reason: d.reason ?? null,
        attempts: Number(d.attempts ?? 0),
        last_error: d.last_error ?? null,
        last_status_code: d.last_status_code == null ? null : Number(d.last_status_code),
        sent_at: d.sent_at ?? null,
        // While a delivery waits for another attempt (queued after a failure) or for quiet hours to end: when.
        next_attempt_at:
          (d.status === 'queued' && Number(d.attempts) > 0) || d.status === 'deferred'
            ? (d.next_attempt_at ?? null)
            : null,
        updated_at: d.updated_at,
        // Released at the end of quiet hours in a digest: the digest's event.
        digest_event_id: d.digest_event_id ?? null,
        // How a sent delivery went out: `send` (a new message), `edit` (it updated the earlier message of the same
        // thing) or `reply`.
        send_mode: d.send_mode ?? null,
        // The message as this target received it, as plain text (rendered with the current templates).
        rendered: renderEvent(catalog, r, targetLocale(d), overridesIn.get(targetLocale(d))?.get(r.event_type), {
          tracker: d.tracker_name ?? undefined,
          target: d.target_name ?? undefined,
        }),
      })),
    history: history
      .filter((h) => h.event_id === r.id)
      .map((h) => ({
        id: h.id,
        action: h.action,
        at: h.created_at,
        actor_id: h.actor_id ?? null,
        actor_email: h.actor_email ?? null,
        target_id: h.target_id,
        target_name: h.target_name ?? null,
        delivery_id: h.delivery_id,
        previous_delivery_id: h.previous_delivery_id ?? null,
        previous: {
          status: h.previous_status,
          attempts: Number(h.previous_attempts ?? 0),
          last_error: h.previous_error ?? null,
          last_status_code: h.previous_status_code == null ? null : Number(h.previous_status_code),
          sent_at: h.previous_sent_at ?? null,
        },
      })),
  }));
}

const localeOf = (
  req: { query: { locale?: LocaleT }; headers: { 'accept-language'?: string } },
  user: { locale: string },
): LocaleT =>
  pickLocale({
    query: req.query.locale,
    user: user.locale,
    acceptLanguage: req.headers['accept-language'],
  });

/**
 * Wakes this replica's dispatcher (any replica's claims the rows anyway, within a second) and updates the backlog
 * check.
 */
async function nudge(core: Core, userId?: string): Promise<void> {
  const r = relayIfRunning(core);
  r?.dispatcher.wake();
  if (userId)
    await r?.monitor
      .checkBacklog(userId)
      .catch((err) => core.logs.get('relay').warn({ err }, 'checking the deferred backlog failed'));
}

const EVENT_DESCRIPTION =
  "Every event a provider emitted, as validated against its plugin's payload schema (fields named like " +
  'secrets are redacted), with one delivery per linked target and the history of hand operations on them ' +
  "(resend, send now, drop). `message` is the event rendered with the current templates (the caller's own " +
  "template first) in `locale` (default: the caller's language) as plain text: the title, or the body's " +
  "first line, at most 200 characters; it is computed on each request, not stored. Each delivery's " +
  "`rendered` (`title`, `body`) is the message as that target got it, as plain text: in the target's " +
  'language, with its tracker and target names, rendered the same way. `dispatch_status` is ' +
  '`pending` while a delivery is queued or sending, `deferred` while one waits out quiet hours, then ' +
  '`dispatched`, `partial`, `failed` or `dropped` (nothing to deliver: no linked target, the event type is ' +
  'off on the tracker, or quiet hours drop it). Filter by `provider_id`, `event_type`, `dispatch_status` ' +
  'and the time the event occurred (`since` inclusive, `until` exclusive, ISO 8601).';

export async function eventRoutes(app: App, core: Core): Promise<void> {
  const auth = requireUser(core);
  // Registered first: its static path takes precedence over /api/events/:id anyway.
  await replayRoutes(app, core);

  app.get(
    '/api/events',
    {
      schema: {
        tags: ['relay'],
        summary: 'List your recorded events, newest first, with their deliveries and a readable message',
        description: EVENT_DESCRIPTION,
        querystring: EventQuery,
        response: {
          ...ok(
            'Your events (`events`), newest first, each with its deliveries, history and readable `message`.',
            EventList,
          ),
        },
      },
      preHandler: auth,
    },
    async (req) => {
      const q = req.query;
      const user = caller(req);
      const params: unknown[] = [];
      const rows = await core.db.all<EventDbRow>(eventPageSql(user.id, q, q, params), params as never[]);
      return { events: await withDeliveries(core, rows, user.id, localeOf(req, user)) };
    },
  );

  app.get(
    '/api/events/:id',
    {
      schema: {
        tags: ['relay'],
        summary: 'Read one event with its deliveries and their history',
        description:
          'Each delivery shows its status (`queued`, `sending`, `deferred`, `in_digest`, `sent`, `failed`, ' +
          '`dropped`; `digest_event_id` names the quiet-hours digest it went out in), attempts, and the ' +
          'last error and HTTP status code the target plugin reported; `history` lists the hand operations ' +
          '(resend, send now, drop, replay) with who did them, when, and the record of the attempt they ' +
          'replaced. `message` as in the list (`?locale=`).',
        params: IdParams,
        querystring: Type.Object({ locale: Type.Optional(Locale) }),
        response: { ...ok('The event with its deliveries and their history.', EventView) },
      },
      preHandler: auth,
    },
    async (req) => {
      const user = caller(req);
      const id = req.params.id;
      await owned(core, 'event_log', id, user.id, 'Event');
      const row = await core.db.get<EventDbRow>(`${EVENT_SELECT} WHERE e.id = ?`, [id]);
      return (await withDeliveries(core, [row!], user.id, localeOf(req, user)))[0];
    },
  );

  app.post(
    '/api/events/:id/resend',
    {
      schema: {
        tags: ['relay'],
        summary: 'Resend one delivery of your event, or all its failed deliveries',
        description:
          'With `delivery_id`: that delivery (it must be `failed`, `dropped` or `sent`). Without: every ' +
          '`failed` delivery of the event. Each goes back to the durable queue as a new attempt under a ' +
          'new delivery id (a channel that recognises repeats by delivery id takes it as a new message), ' +
          "and the replaced attempt's record is kept in the event's `history` with who resent it and when. " +
          '409 `delivery_not_resendable` (still queued, sending or deferred), `nothing_to_resend` (no ' +
          "failed delivery), `target_deleted` (the failed deliveries' targets were deleted), " +
          "`target_disabled`. Another user's event or delivery is a 404.",
        params: IdParams,
        body: Type.Object({ delivery_id: Type.Optional(Uuid) }, { additionalProperties: false }),
        response: {
          ...accepted('Queued again: `event_id` and the new deliveries (`resent`).', ResendAnswer),
          ...errors([
            409,
            'Nothing can be resent: `delivery_not_resendable`, `nothing_to_resend`, `target_deleted`, ' +
              '`target_disabled` or `delivery_changed`.',
          ]),
        },
      },
      preHandler: auth,
    },
    async (req, reply) => {
      const user = caller(req);
      const event = await owned<Pick<EventDbRow, 'id' | 'user_id' | 'details'>>(
        core,
        'event_log',
        req.params.id,
        user.id,
        'Event',
      );
      const resent = await resendDeliveries(
        core,
        { id: event.id, user_id: event.user_id, details: Db.json(event.details, null) },
        user.id,
        req.body?.delivery_id,
      );
      await nudge(core);
      reply.code(202);
      return { event_id: event.id, resent };
    },
  );

  app.get(
    '/api/deferred',
    {
      schema: {
        tags: ['relay'],
        summary: 'List notifications held back by quiet hours',
        description:
          "Deliveries of event types whose quiet-hours policy is `defer`, each with the time its tracker's " +
          "quiet hours end (`release_at`), when they are sent, and the event's readable `message` (as in " +
          'the event log, `?locale=`). `delivery_id` names the delivery for send-now and drop.',
        querystring: Type.Object({ ...ListQuery.properties, locale: Type.Optional(Locale) }),
        response: { ...ok('The deliveries held back by quiet hours (`deferred`), newest first.', DeferredList) },
      },
      preHandler: auth,
    },
    async (req) => {
      const user = caller(req);
      const params: unknown[] = [user.id];
      const rows = await core.db.all<DeferredRow>(
        `SELECT d.id, d.delivery_id, d.event_id, d.event_type, d.tracker_id, d.target_id, d.release_at, d.created_at,
        t.name AS target_name, t.kind AS target_kind, tr.name AS tracker_name
      FROM deferred_dispatch d
      LEFT JOIN targets t ON t.id = d.target_id
      LEFT JOIN trackers tr ON tr.id = d.tracker_id
      WHERE d.user_id = ?${pageSql('d', req.query, params)}`,
        params as never[],
      );
      const eventIds = [...new Set(rows.map((r) => r.event_id))];
      const events = eventIds.length
        ? await core.db.all<EventDbRow>(
            `${EVENT_SELECT} WHERE e.id IN (${eventIds.map(() => '?').join(',')})`,
            eventIds,
          )
        : [];
      const locale = localeOf(req, user);
      const overrides = await overridesFor(
        core.db,
        user.id,
        events.map((e) => e.event_type),
        locale,
      );
      const catalog = catalogOf(core);
      const messages = new Map(
        events.map((e) => [e.id, oneLine(renderEvent(catalog, e, locale, overrides.get(e.event_type), {}))]),
      );
      return {
        deferred: rows.map((r) => ({
          id: r.id,
          delivery_id: r.delivery_id,
          event_id: r.event_id,
          event_type: r.event_type,
          message: messages.get(r.event_id) ?? null,
          tracker_id: r.tracker_id ?? null,
          tracker_name: r.tracker_name ?? null,
          target_id: r.target_id,
          target_name: r.target_name ?? null,
          target_kind: r.target_kind ?? null,
          release_at: r.release_at,
          created_at: r.created_at,
        })),
      };
    },
  );

  const DeliveryParams = Type.Object({ delivery_id: Uuid });
  app.post(
    '/api/deferred/:delivery_id/send-now',
    {
      schema: {
        tags: ['relay'],
        summary: 'Send a deferred notification now',
        description:
          'The delivery leaves the deferred list and goes to the durable queue, due at once, whatever its ' +
          "quiet hours; recorded in the event's `history`. 409 `not_deferred` when it no longer waits " +
          "(quiet hours ended meanwhile, or it was handled). Another user's delivery is a 404.",
        params: DeliveryParams,
        response: {
          ...accepted('Queued to be sent at once.', SettleAnswer),
          ...errors([409, 'The delivery no longer waits (`not_deferred`).']),
        },
      },
      preHandler: auth,
    },
    async (req, reply) => {
      const user = caller(req);
      const r = await settleDeferred(core, user.id, req.params.delivery_id, user.id, 'send_now');
      await nudge(core, user.id);
      reply.code(202);
      return r;
    },
  );

  app.post(
    '/api/deferred/:delivery_id/drop',
    {
      schema: {
        tags: ['relay'],
        summary: 'Drop a deferred notification',
        description:
          'The delivery leaves the deferred list as `dropped` and is never sent (a resend from the event ' +
          "log can still send it); recorded in the event's `history`. 409 `not_deferred` when it no longer " +
          "waits. Another user's delivery is a 404.",
        params: DeliveryParams,
        response: {
          ...ok('Dropped: it will not be sent.', SettleAnswer),
          ...errors([409, 'The delivery no longer waits (`not_deferred`).']),
        },
      },
      preHandler: auth,
    },
    async (req) => {
      const user = caller(req);
      const r = await settleDeferred(core, user.id, req.params.delivery_id, user.id, 'drop');
      await nudge(core, user.id);
      return r;
    },
  );
}
