/**
 * `POST /api/events/replay`: the caller's events (chosen by id, or by the event log's filter)
 * sent again to targets the caller chooses, rendered when sent with the templates and the
 * target's locale of today (the raw payload is kept; the text is not). A dry run renders the first
 * messages per target without queueing anything.
 */
import Type, { type Static } from 'typebox';
import { caller, requireUser } from '../../auth/guard.ts';
import type { Core } from '../../core.ts';
import { Database as Db } from '../../db/database.ts';
import { conflict, notFound, unprocessable } from '../../http/problem.ts';
import { accepted, errors, ok, Uuid } from '../../http/schemas.ts';
import type { App } from '../../http/server.ts';
import { redactObject } from '../../logging/redact.ts';
import type { Locale as LocaleT } from '../../plugin-api/index.ts';
import { type EventDbRow, ReplayPreview, ReplayQueued } from '../definitions/event.ts';
import type { TargetDbRow } from '../definitions/target.ts';
import { replayDeliveries } from '../pipeline/operations.ts';
import { renderMessage } from '../pipeline/render.ts';
import { EventTypeSchema } from '../vocabulary.ts';
import { relayIfRunning } from './common.ts';
import { EventFilterFields, eventFilterSql } from './event-filter.ts';
import { catalogOf, overridesFor } from './templates.ts';

/** Most events one replay request may take. */
export const REPLAY_MAX_EVENTS = 500;
/** Most targets one replay request may send to. */
export const REPLAY_MAX_TARGETS = 20;
/** Messages a dry run renders per target. */
export const PREVIEW_MESSAGES = 5;

// The event log's filter; an empty event type is refused here rather than read as no filter.
const Filter = Type.Object(
  { ...EventFilterFields, event_type: Type.Optional(EventTypeSchema) },
  { additionalProperties: false },
);

const Body = Type.Object(
  {
    event_ids: Type.Optional(Type.Array(Uuid, { minItems: 1, maxItems: REPLAY_MAX_EVENTS, uniqueItems: true })),
    filter: Type.Optional(Filter),
    target_ids: Type.Array(Uuid, { minItems: 1, maxItems: REPLAY_MAX_TARGETS, uniqueItems: true }),
    dry_run: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

type BodyT = Static<typeof Body>;

const DESCRIPTION =
  'Sends your recorded events again, to targets you choose, through the durable queue. The message is ' +
  `rendered when it is sent, from the event's stored payload with today's templates (your own template ` +
  `first) in each target's language, so a template changed since the event shows its new text. Choose events ` +
  `by \`event_ids\`, or by \`filter\` (the event log's filters: \`provider_id\`, \`event_type\`, ` +
  `\`dispatch_status\`, \`since\` inclusive, \`until\` exclusive), or both (events matching both); they are ` +
  `replayed oldest first. At most ${REPLAY_MAX_EVENTS} events (422 \`replay_over_limit\` with \`count\` and ` +
  `\`limit\` when more match; narrow the filter) and ${REPLAY_MAX_TARGETS} targets. Per event and target: a ` +
  'target the event never went to gets a new delivery; one it had a failed, dropped or sent delivery for ' +
  'gets it back as a new attempt under a new delivery id (the old attempt kept in the history, as a resend); ' +
  `one whose delivery is still queued, sending or deferred is skipped (listed in \`skipped\`). Each replayed ` +
  `delivery is recorded in the event's \`history\` as \`replay\` with who did it and when. With \`dry_run: ` +
  `true\` nothing is queued: the answer counts the events and shows, per target, the first ` +
  `${PREVIEW_MESSAGES} messages exactly as that target would get them (\`title\`/\`body\` in the target's ` +
  `format, \`plain_title\`/\`plain_body\` as text; fields named like secrets redacted). Another user's event ` +
  `or target, or an unknown one, is a 404; a disabled target is a 409 \`target_disabled\`; 422 ` +
  `\`replay_no_selection\` without \`event_ids\` or \`filter\`; 409 \`nothing_to_replay\` when no event ` +
  'matches (a dry run answers the count 0).';

/** The caller's events chosen by the body, oldest first; 404 when an id is not theirs, 422 over the bound. */
async function chosenEvents(core: Core, userId: string, b: BodyT): Promise<EventDbRow[]> {
  if (!b.event_ids && !b.filter) {
    throw unprocessable(
      'Choose the events to replay: send event_ids, a filter, or both.',
      [{ path: 'body', message: 'needs event_ids or filter' }],
      'replay_no_selection',
    );
  }
  const params: unknown[] = [userId];
  let where = `e.user_id = ?${eventFilterSql(b.filter ?? {}, params)}`;
  if (b.event_ids) {
    const owned = await core.db.all<{ id: string }>(
      `SELECT id FROM event_log WHERE user_id = ? AND id IN (${b.event_ids.map(() => '?').join(',')})`,
      [userId, ...b.event_ids],
    );
    if (owned.length !== b.event_ids.length) throw notFound('Event');
    where += ` AND e.id IN (${b.event_ids.map(() => '?').join(',')})`;
    params.push(...b.event_ids);
  }
  const count = Number(
    (await core.db.get<{ n: number }>(`SELECT COUNT(*) AS n FROM event_log e WHERE ${where}`, params as never[]))?.n ??
      0,
  );
  if (count > REPLAY_MAX_EVENTS) {
    throw unprocessable(
      `${count} events match; one replay takes at most ${REPLAY_MAX_EVENTS}. Narrow the filter (a shorter ` +
        'time range, one provider or type).',
      undefined,
      'replay_over_limit',
      { count, limit: REPLAY_MAX_EVENTS },
    );
  }
  return core.db.all<EventDbRow>(
    `SELECT e.*, p.name AS provider_name FROM event_log e LEFT JOIN providers p ON p.id = e.provider_id
    WHERE ${where} ORDER BY e.occurred_at, e.id`,
    params as never[],
  );
}

/** The caller's targets, in the order asked; 404 for one that is not theirs, 409 for a disabled one. */
async function chosenTargets(core: Core, userId: string, ids: string[]): Promise<TargetDbRow[]> {
  const rows = await core.db.all<TargetDbRow>(
    `SELECT * FROM targets WHERE user_id = ? AND id IN (${ids.map(() => '?').join(',')})`,
    [userId, ...ids],
  );
  if (rows.length !== ids.length) throw notFound('Target');
  const ordered = ids.map((id) => rows.find((r) => r.id === id)!);
  const off = ordered.find((r) => !Db.bool(r.enabled));
  if (off)
    throw conflict(`The target ${off.name} is disabled; enable it before replaying to it.`, 'target_disabled', {
      target: off.name,
    });
  return ordered;
}

/** The first events rendered for each target as it would get them now. */
async function preview(core: Core, userId: string, events: EventDbRow[], targets: TargetDbRow[]) {
  const catalog = catalogOf(core);
  const first = events.slice(0, PREVIEW_MESSAGES);
  const types = first.map((e) => e.event_type);
  const byLocale = new Map<LocaleT, Awaited<ReturnType<typeof overridesFor>>>();
  const out = [];
  for (const t of targets) {
    const locale: LocaleT = t.locale === 'ru' ? 'ru' : 'en';
    if (!byLocale.has(locale)) byLocale.set(locale, await overridesFor(core.db, userId, types, locale));
    const overrides = byLocale.get(locale)!;
    const plugin = core.plugins.target(t.kind);
    const formats = plugin?.def.manifest.limits?.formats ?? ['text' as const];
    out.push({
      target_id: t.id,
      target_name: t.name,
      target_kind: t.kind,
      locale,
      format: formats[0] ?? 'text',
      messages: first.map((e) => {
        const input = {
          deliveryId: '',
          eventId: e.id,
          eventType: e.event_type,
          severity: e.severity,
          locale,
          payload: redactObject(Db.json<Record<string, unknown>>(e.payload, {})),
          extras: Db.json<Record<string, string> | null>(e.extras, null),
          providerName: e.provider_name ?? undefined,
          providerKind: e.provider_kind,
          targetName: t.name,
          occurredAt: e.occurred_at,
          formats,
          override: overrides.get(e.event_type),
          test: Db.bool(e.test),
        };
        let m: ReturnType<typeof renderMessage>;
        let error: string | null = null;
        try {
          m = renderMessage(catalog, input);
        } catch (err) {
          // The dispatcher would fail this send: say so, and show the default template's text.
          error = (err as Error).message;
          m = renderMessage(catalog, { ...input, override: undefined });
        }
        return {
          event_id: e.id,
          event_type: e.event_type,
          occurred_at: e.occurred_at,
          title: m.title,
          body: m.body,
          plain_title: m.plainTitle ?? m.title,
          plain_body: m.plainBody ?? m.body,
          ...(error ? { template_error: error } : {}),
        };
      }),
    });
  }
  return out;
}

export async function replayRoutes(app: App, core: Core): Promise<void> {
  app.post(
    '/api/events/replay',
    {
      schema: {
        tags: ['relay'],
        summary: "Replay your events to chosen targets, rendered with today's templates (or preview it)",
        description: DESCRIPTION,
        body: Body,
        response: {
          ...ok('A dry run: how many events match and the first messages each target would get.', ReplayPreview),
          ...accepted('Queued: the events are replayed to the targets (`dry_run: false`).', ReplayQueued),
          ...errors(
            [404, 'An event or target named is not yours.'],
            [409, 'A target is disabled (`target_disabled`), or no event matches (`nothing_to_replay`).'],
          ),
        },
      },
      preHandler: requireUser(core),
    },
    async (req, reply) => {
      const user = caller(req);
      const b = req.body;
      const targets = await chosenTargets(core, user.id, b.target_ids);
      const events = await chosenEvents(core, user.id, b);
      if (b.dry_run)
        return {
          dry_run: true as const,
          events: events.length,
          targets: await preview(core, user.id, events, targets),
        };
      if (!events.length) throw conflict('No event matches; there is nothing to replay.', 'nothing_to_replay');
      const outcome = await replayDeliveries(
        core,
        events.map((e) => e.id),
        targets.map((t) => t.id),
        user.id,
      );
      relayIfRunning(core)?.dispatcher.wake();
      reply.code(202);
      return { dry_run: false as const, events: events.length, ...outcome };
    },
  );
}
