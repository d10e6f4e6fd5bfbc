/**
 * What the assistant reads of the relay: the caller's events by words and filters, counts over a
 * period, and where one event's notifications went. Every query is bound to the caller's user id,
 * whatever the model asks.
 *
 * The words of an event are those of its messages (the rendered title and body in both languages,
 * with the caller's own templates, plus provider and type), kept in `event_search` and full-text
 * indexed like memory entries (see fts.ts). Events are indexed when a search first needs them:
 * the newest unindexed ones, at most INDEX_PER_SEARCH per search, so the pipeline itself writes
 * nothing more per event. A template changed later does not change the words of events already
 * indexed.
 */
import type { Core } from '../core.ts';
import type { Queryable } from '../db/database.ts';
import { Database as Db } from '../db/database.ts';
import { redactObject } from '../logging/redact.ts';
import { catalogOf, oneLine, overridesFor, renderEvent } from '../relay/routes/templates.ts';
import { DISPATCH_STATUSES, SEVERITIES } from '../relay/vocabulary.ts';
import { excerpt, ftsQuery, ftsTerms } from './fts.ts';
import { langOf } from './lab-strings.ts';
import { int } from './paths.ts';

/**
 * An `event_log` row joined with its provider's name, as the tools read it. Open beyond the columns
 * named here: the template renderer reads the payload's own fields through it.
 */
export interface EventRow {
  id: string;
  user_id: string;
  provider_id: string | null;
  provider_kind: string;
  provider_name: string | null;
  event_type: string;
  severity: string;
  dispatch_status: string;
  occurred_at: string;
  payload: unknown;
  details: unknown;
  test: unknown;
  [column: string]: unknown;
}
const EVENT_SELECT =
  'SELECT e.*, p.name AS provider_name FROM event_log e LEFT JOIN providers p ON p.id = e.provider_id';

/** A `deliveries` row joined with its target's name and kind. */
interface DeliveryRow {
  target_id: string;
  target_name: string | null;
  target_kind: string | null;
  status: string;
  attempts: number | string;
  reason: string | null;
  last_error: string | null;
  last_status_code: number | string | null;
  sent_at: string | null;
  send_mode: string | null;
  next_attempt_at: string | null;
  digest_id: string | null;
}

/** One delivery of an event as the tools and the event context show it: what is not set is left out. */
export interface DeliveryShown {
  target: string;
  target_kind: string | null;
  status: string;
  attempts: number;
  reason?: string;
  last_error?: string;
  last_status_code?: number;
  sent_at?: string;
  send_mode?: string;
  deferred_until?: string | null;
  in_digest?: string;
}

/** Events indexed per transaction, and at most per search. */
const INDEX_BATCH = 500;
export const INDEX_PER_SEARCH = 5000;

/** Bounds of what the event tools return: results, characters per message and detail, characters in all. */
export const EVENT_LIMITS = { results: 10, messageChars: 200, detailChars: 300, totalChars: 4000 };

/** Writes the search words of the caller's events that have none yet, newest first, at most INDEX_PER_SEARCH. */
export async function indexEvents(core: Core, userId: string): Promise<number> {
  const db = core.db;
  const catalog = catalogOf(core);
  let done = 0;
  while (done < INDEX_PER_SEARCH) {
    const rows = await db.all<EventRow>(
      `${EVENT_SELECT}
      WHERE e.user_id = ? AND NOT EXISTS (SELECT 1 FROM event_search s WHERE s.event_id = e.id) ORDER BY e.id DESC LIMIT
      ?`,
      [userId, INDEX_BATCH],
    );
    if (!rows.length) break;
    const types = rows.map((r) => r.event_type);
    const overrides = {
      en: await overridesFor(db, userId, types, 'en'),
      ru: await overridesFor(db, userId, types, 'ru'),
    };
    const values = rows.map((r) => {
      const parts = new Set<string>();
      for (const l of ['en', 'ru'] as const) {
        const m = renderEvent(catalog, r, l, overrides[l].get(r.event_type));
        if (m.title.trim()) parts.add(m.title.trim());
        if (m.body.trim()) parts.add(m.body.trim());
      }
      for (const x of [r.provider_name, r.provider_kind, r.event_type]) if (x) parts.add(String(x));
      return [r.id, [...parts].join('\n').slice(0, 8000)];
    });
    await db.tx(async (q) => {
      for (const [id, content] of values) {
        await q.run(
          'INSERT INTO event_search (event_id, user_id, content) VALUES (?, ?, ?) ON CONFLICT (event_id) DO NOTHING',
          [id, userId, content],
        );
      }
    });
    done += rows.length;
    if (rows.length < INDEX_BATCH) break;
  }
  return done;
}

export interface EventFilter {
  query?: string;
  provider?: string;
  event_type?: string;
  severity?: string;
  dispatch_status?: string;
  since?: string;
  until?: string;
  last_hours?: number;
}

/**
 * A period from since/until or the last N hours; null bounds are open. Throws a sentence for the model on a bad time.
 */
export function period(
  f: Pick<EventFilter, 'since' | 'until' | 'last_hours'>,
  now: Date,
  defaultHours?: number,
): { since: string | null; until: string | null } {
  const at = (v: string | undefined, name: string): string | null => {
    if (v === undefined || v === null || v === '') return null;
    const d = new Date(String(v));
    if (Number.isNaN(d.getTime()))
      throw new ToolInputError(`${name} "${String(v).slice(0, 40)}" is not an ISO 8601 time.`);
    return d.toISOString();
  };
  const until = at(f.until, 'until');
  let since = at(f.since, 'since');
  const hours = f.last_hours !== undefined && f.last_hours !== null ? Number(f.last_hours) : defaultHours;
  if (!since && hours !== undefined) {
    if (!Number.isFinite(hours) || hours <= 0 || hours > 24 * 366)
      throw new ToolInputError('last_hours must be a number of hours between 1 and 8784.');
    since = new Date((until ? Date.parse(until) : now.getTime()) - hours * 3_600_000).toISOString();
  }
  return { since, until };
}

/** A tool argument the model got wrong: said back to it as the tool's error. */
export class ToolInputError extends Error {}

/** The WHERE clause of the filters (without words), on `event_log e` joined to `providers p`. */
function filterSql(
  userId: string,
  f: EventFilter,
  range: { since: string | null; until: string | null },
): { where: string; params: unknown[] } {
  let where = 'e.user_id = ?';
  const params: unknown[] = [userId];
  if (f.provider) {
    const p = String(f.provider).trim().slice(0, 200);
    where += ' AND (e.provider_id = ? OR LOWER(p.name) = LOWER(?) OR e.provider_kind = ?)';
    params.push(p, p, p);
  }
  if (f.event_type) {
    where += ' AND e.event_type = ?';
    params.push(String(f.event_type).slice(0, 100));
  }
  if (f.severity) {
    if (!(SEVERITIES as readonly string[]).includes(f.severity))
      throw new ToolInputError(`severity must be one of ${SEVERITIES.join(', ')}.`);
    where += ' AND e.severity = ?';
    params.push(f.severity);
  }
  if (f.dispatch_status) {
    if (!(DISPATCH_STATUSES as readonly string[]).includes(f.dispatch_status))
      throw new ToolInputError(`dispatch_status must be one of ${DISPATCH_STATUSES.join(', ')}.`);
    where += ' AND e.dispatch_status = ?';
    params.push(f.dispatch_status);
  }
  if (range.since) {
    where += ' AND e.occurred_at >= ?';
    params.push(range.since);
  }
  if (range.until) {
    where += ' AND e.occurred_at < ?';
    params.push(range.until);
  }
  return { where, params };
}

export interface EventHit {
  id: string;
  occurred_at: string;
  provider: string;
  provider_kind: string;
  event_type: string;
  severity: string;
  dispatch_status: string;
  message: string;
  detail?: string;
  test?: boolean;
}

/**
 * The caller's events matching the filter, newest first (at most `limit`), each with its message
 * in `locale`. With words, events holding all of them come first; when none does, those holding any.
 */
export async function searchEvents(
  core: Core,
  userId: string,
  f: EventFilter,
  locale: string,
  limit: number,
): Promise<{ events: EventHit[]; since: string | null; until: string | null; more: boolean }> {
  const db = core.db;
  const range = period(f, core.clock.now());
  const { where, params } = filterSql(userId, f, range);
  const terms = f.query ? ftsTerms(String(f.query).slice(0, 200)) : [];
  const order = 'ORDER BY e.id DESC LIMIT ?';
  let rows: EventRow[];
  if (!terms.length) {
    rows = await db.all<EventRow>(`${EVENT_SELECT} WHERE ${where} ${order}`, [...params, limit + 1] as never[]);
  } else {
    await indexEvents(core, userId);
    const run = (mode: 'all' | 'any') => {
      const match = ftsQuery(db.dialect, terms, mode);
      return db.dialect === 'sqlite'
        ? db.all<EventRow>(
            `SELECT e.*, p.name AS provider_name FROM event_search_fts f JOIN event_search s ON s.rowid = f.rowid
            JOIN event_log e ON e.id = s.event_id LEFT JOIN providers p ON p.id = e.provider_id
            WHERE event_search_fts MATCH ? AND s.user_id = ? AND ${where} ${order}`,
            [match, userId, ...params, limit + 1] as never[],
          )
        : db.all<EventRow>(
            `SELECT e.*, p.name AS provider_name FROM event_search s JOIN event_log e ON e.id = s.event_id LEFT JOIN
              providers p ON p.id = e.provider_id
            WHERE s.user_id = ? AND to_tsvector('simple', s.content) @@ to_tsquery('simple', ?) AND ${where} ${order}`,
            [userId, match, ...params, limit + 1] as never[],
          );
    };
    rows = await run('all');
    if (!rows.length && terms.length > 1) rows = await run('any');
  }
  const more = rows.length > limit;
  rows = rows.slice(0, limit);
  const lang = langOf(locale);
  const overrides = await overridesFor(
    db,
    userId,
    rows.map((r) => r.event_type),
    lang,
  );
  const catalog = catalogOf(core);
  const events = rows.map((r) => {
    const m = renderEvent(catalog, r, lang, overrides.get(r.event_type));
    const message = oneLine(m).slice(0, EVENT_LIMITS.messageChars);
    const body = m.body.trim();
    const hit: EventHit = {
      id: r.id,
      occurred_at: r.occurred_at,
      provider: r.provider_name ?? r.provider_kind,
      provider_kind: r.provider_kind,
      event_type: r.event_type,
      severity: r.severity,
      dispatch_status: r.dispatch_status,
      message,
    };
    if (body && body !== message) hit.detail = excerpt(body, terms, EVENT_LIMITS.detailChars);
    if (Db.bool(r.test)) hit.test = true;
    return hit;
  });
  return { events, since: range.since, until: range.until, more };
}

/** Counts by provider, type, severity and dispatch status over a period, and the targets that failed most. */
export async function eventStats(core: Core, userId: string, f: EventFilter): Promise<Record<string, unknown>> {
  const db = core.db;
  const range = period(f, core.clock.now(), 24 * 7);
  const { where, params } = filterSql(userId, { ...f, query: undefined }, range);
  const from = 'FROM event_log e LEFT JOIN providers p ON p.id = e.provider_id';
  const top = 15;
  const count = async (col: string, name: string) =>
    (
      await db.all(
        `SELECT ${col} AS k, COUNT(*) AS n ${from} WHERE ${where} GROUP BY ${col} ORDER BY n DESC, k LIMIT ?`,
        [...params, top] as never[],
      )
    ).map((r) => ({ [name]: r.k as string, count: int(r.n) }));
  const total = int((await db.get(`SELECT COUNT(*) AS n ${from} WHERE ${where}`, params as never[]))?.n);
  const byProvider = (
    await db.all(
      `SELECT e.provider_id, p.name, e.provider_kind, COUNT(*) AS n ${from} WHERE ${where}
      GROUP BY e.provider_id, p.name, e.provider_kind ORDER BY n DESC, e.provider_kind LIMIT ?`,
      [...params, top] as never[],
    )
  ).map((r) => ({
    provider: (r.name ?? r.provider_kind) as string,
    provider_kind: r.provider_kind as string,
    count: int(r.n),
  }));
  const failing = (
    await db.all(
      `SELECT t.name, t.kind, COUNT(*) AS n FROM deliveries d JOIN event_log e ON e.id = d.event_id
      LEFT JOIN providers p ON p.id = e.provider_id JOIN targets t ON t.id = d.target_id
      WHERE d.user_id = ? AND d.status = 'failed' AND ${where} GROUP BY t.id, t.name, t.kind ORDER BY n DESC, t.name
      LIMIT 5`,
      [userId, ...params] as never[],
    )
  ).map((r) => ({ target: r.name as string, kind: r.kind as string, failed_deliveries: int(r.n) }));
  return {
    since: range.since,
    until: range.until ?? core.clock.now().toISOString(),
    total,
    by_provider: byProvider,
    by_event_type: await count('e.event_type', 'event_type'),
    by_severity: await count('e.severity', 'severity'),
    by_dispatch_status: await count('e.dispatch_status', 'dispatch_status'),
    failing_targets: failing,
  };
}

/** Where one of the caller's events went; undefined when it is not theirs (or does not exist). */
export async function deliveryStatus(
  core: Core,
  userId: string,
  eventId: string,
  locale: string,
): Promise<Record<string, unknown> | undefined> {
  const db = core.db;
  if (!/^[0-9a-f-]{36}$/i.test(eventId)) return undefined;
  const e = await db.get<EventRow>(`${EVENT_SELECT} WHERE e.id = ? AND e.user_id = ?`, [eventId, userId]);
  if (!e) return undefined;
  const lang = langOf(locale);
  const override = (await overridesFor(db, userId, [e.event_type], lang)).get(e.event_type);
  const deliveries = await deliveriesOf(db, userId, eventId);
  const history = await db.all<{
    action: string;
    created_at: string;
    target_id: string;
    target_name: string | null;
    actor_email: string | null;
    previous_status: string | null;
  }>(
    `SELECT h.action, h.created_at, h.target_id, t.name AS target_name, u.email AS actor_email, h.previous_status
      FROM delivery_history h LEFT JOIN targets t ON t.id = h.target_id LEFT JOIN users u ON u.id = h.actor_id
      WHERE h.event_id = ? AND h.user_id = ? ORDER BY h.created_at, h.id LIMIT 50`,
    [eventId, userId],
  );
  return {
    event: {
      id: e.id,
      occurred_at: e.occurred_at,
      provider: e.provider_name ?? e.provider_kind,
      provider_kind: e.provider_kind,
      event_type: e.event_type,
      severity: e.severity,
      dispatch_status: e.dispatch_status,
      message: oneLine(renderEvent(catalogOf(core), e, lang, override)),
      ...reasonOf(e.details),
    },
    deliveries,
    history: history.map((h) => ({
      action: h.action,
      at: h.created_at,
      target: h.target_name ?? h.target_id,
      by: h.actor_email ?? null,
      previous_status: h.previous_status,
    })),
    summary: {
      deferred: deliveries.some((d) => d.deferred_until !== undefined),
      digested: deliveries.some((d) => d.in_digest !== undefined),
      edited: deliveries.some((d) => d.send_mode === 'edit'),
      replayed: history.some((h) => h.action === 'replay'),
      resent: history.some((h) => h.action === 'resend'),
    },
  };
}

/** One event's deliveries, as the tools and the event context show them. */
export async function deliveriesOf(db: Queryable, userId: string, eventId: string): Promise<DeliveryShown[]> {
  const rows = await db.all<DeliveryRow>(
    `SELECT d.*, t.name AS target_name, t.kind AS target_kind FROM deliveries d LEFT JOIN targets t ON t.id =
      d.target_id
      WHERE d.event_id = ? AND d.user_id = ? ORDER BY d.created_at, d.id LIMIT 50`,
    [eventId, userId],
  );
  return rows.map((d) => {
    const out: DeliveryShown = {
      target: d.target_name ?? d.target_id,
      target_kind: d.target_kind ?? null,
      status: d.status,
      attempts: int(d.attempts),
    };
    if (d.reason) out.reason = d.reason;
    if (d.last_error) out.last_error = String(d.last_error).slice(0, 300);
    if (d.last_status_code !== null && d.last_status_code !== undefined) out.last_status_code = int(d.last_status_code);
    if (d.sent_at) out.sent_at = d.sent_at;
    if (d.send_mode) out.send_mode = d.send_mode;
    if (d.status === 'deferred') out.deferred_until = d.next_attempt_at;
    if (d.digest_id) out.in_digest = d.digest_id;
    return out;
  });
}

/** The event's `details.reason` (why it was dropped or held), when it has one. */
function reasonOf(details: unknown): { reason?: string } {
  const d = Db.json<unknown>(details, null);
  const reason = d && typeof d === 'object' ? (d as { reason?: unknown }).reason : undefined;
  return typeof reason === 'string' && reason ? { reason } : {};
}

/** The payload of an event as the assistant may read it: fields named like secrets redacted, bounded. */
export function shownPayload(raw: unknown, max = 3000): string {
  const text = JSON.stringify(redactObject(Db.json<Record<string, unknown>>(raw, {})));
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** Whether the user has any event (what the event tools could find). */
export async function hasEvents(db: Queryable, userId: string): Promise<boolean> {
  return Boolean(await db.get('SELECT 1 AS x FROM event_log WHERE user_id = ? LIMIT 1', [userId]));
}
