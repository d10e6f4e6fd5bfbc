/**
 * A digest at the end of quiet hours. A tracker whose `quiet_release` is `digest` does not release
 * its deferred notifications one by one when its window ends: the deferred deliveries due for each
 * target are claimed together and become ONE delivery of a `quiet_hours_digest` event to that
 * target, sent through the ordinary queue (lease, retries, pacing, self-monitoring), rendered from
 * the per-locale `quiet_hours_digest` template in the target's language and split into parts to
 * fit the target's size limit.
 *
 * The deliveries that went in it are `in_digest` (their events `pending`) while it is being sent,
 * then `sent` or `failed` with it; `digest_id` links each to the digest's event (not its delivery,
 * whose id changes on a resend; a resent or replayed digest lists the same items).
 */
import type { Core } from '../../core.ts';
import { Database, type Queryable } from '../../db/database.ts';
import { newId } from '../../http/ids.ts';
import type { Locale, MessageFormat, OutboundMessage, Severity, TargetLimits } from '../../plugin-api/index.ts';
import { localizeManifest } from '../../plugins/locales.ts';
import type { EventDbRow } from '../definitions/event.ts';
import type { TemplateCatalog } from '../templates/catalog.ts';
import { render } from '../templates/engine.ts';
import { renderMessage } from './render.ts';

/** The event type of a digest, and the provider kind its events are recorded under. */
export const DIGEST_TYPE = 'quiet_hours_digest';
export const DIGEST_SOURCE = 'herald';

/** Items listed per group; the rest are counted ("…and 12 more"). */
const ITEMS_PER_GROUP = 50;
const CHUNK = 400;
const RANK: Record<string, number> = { critical: 3, warning: 2, info: 1 };

/** Whether an event row (or its handed-off copy) is a digest. */
export const isDigest = (ev: { event_type?: unknown; provider_kind?: unknown }): boolean =>
  ev.event_type === DIGEST_TYPE && ev.provider_kind === DIGEST_SOURCE;

/**
 * The plural category of `n` in each language as flags, for templates:
 * `{{#if forms.ru.few}}события{{/if}}`. English has `one`/`other`, Russian `one`/`few`/`many`/`other`.
 */
export function pluralForms(n: number): Record<Locale, Record<string, boolean>> {
  const of = (l: Locale) => ({ [new Intl.PluralRules(l).select(n)]: true });
  return { en: of('en'), ru: of('ru') };
}

/** A digest always splits a long body into parts (never cuts it), within the target's declared length. */
export function digestLimits(limits: TargetLimits | undefined): TargetLimits | undefined {
  if (!limits || !(Number(limits.maxMessageLength) > 0)) return limits;
  return { ...limits, overflow: 'split' };
}

function marks(n: number): string {
  return Array.from({ length: n }, () => '?').join(',');
}

/**
 * Turns the due deferred deliveries of digest trackers into digests: one per target, each claimed
 * atomically (on PostgreSQL a per-target advisory lock, so two replicas never both build one for
 * the same target and window; on SQLite one writer at a time). `recompute` refreshes an event's
 * dispatch_status inside the claiming transaction. Returns the users whose deferred count fell.
 */
export async function releaseDigests(
  core: Core,
  recompute: (q: Queryable, eventId: string) => Promise<unknown>,
): Promise<{ digests: number; users: string[] }> {
  const now = core.clock.now().toISOString();
  const due = await core.db.all<{ target_id: string }>(
    `SELECT DISTINCT dd.target_id FROM deferred_dispatch dd JOIN trackers tr ON tr.id = dd.tracker_id
      WHERE dd.release_at <= ? AND tr.quiet_release = 'digest' LIMIT 100`,
    [now],
  );
  let digests = 0;
  const users = new Set<string>();
  for (const { target_id } of due) {
    const made = await core.db.tx((q) => claimDigest(core, q, target_id, now, recompute));
    if (made) {
      digests++;
      users.add(made.userId);
      core.metrics.eventLogTotal.inc({ status: 'pending', event_type: DIGEST_TYPE });
    }
  }
  return { digests, users: [...users] };
}

async function claimDigest(
  core: Core,
  q: Queryable,
  targetId: string,
  now: string,
  recompute: (q: Queryable, eventId: string) => Promise<unknown>,
): Promise<{ userId: string } | undefined> {
  if (q.dialect === 'postgresql') {
    // Another replica building this target's digest holds the lock: it takes every due row.
    const lock = await q.get<{ ok: boolean }>('SELECT pg_try_advisory_xact_lock(hashtext(CAST(? AS TEXT))) AS ok', [
      `herald:quiet-digest:${targetId}`,
    ]);
    if (!lock?.ok) return undefined;
  }
  const rows = await q.all<{ delivery_id: string; event_id: string; user_id: string }>(
    `DELETE FROM deferred_dispatch WHERE id IN (
       SELECT dd.id FROM deferred_dispatch dd JOIN trackers tr ON tr.id = dd.tracker_id
        WHERE dd.target_id = ? AND dd.release_at <= ? AND tr.quiet_release = 'digest')
     RETURNING delivery_id, event_id, user_id`,
    [targetId, now],
  );
  if (!rows.length) return undefined;
  const digestDelivery = newId();
  const eventId = newId();
  const eventIds: string[] = [];
  for (let i = 0; i < rows.length; i += CHUNK) {
    const part = rows.slice(i, i + CHUNK).map((r) => r.delivery_id);
    const moved = await q.all<{ event_id: string }>(
      `UPDATE deliveries SET status = 'in_digest', digest_id = ?, lease_until = NULL, next_attempt_at = ?, updated_at =
        ?
        WHERE status = 'deferred' AND id IN (${marks(part.length)}) RETURNING event_id`,
      [eventId, now, now, ...part],
    );
    eventIds.push(...moved.map((m) => m.event_id));
  }
  if (!eventIds.length) return undefined;
  let severity: Severity = 'info';
  for (let i = 0; i < eventIds.length; i += CHUNK) {
    const part = eventIds.slice(i, i + CHUNK);
    for (const r of await q.all<{ severity: string }>(
      `SELECT DISTINCT severity FROM event_log WHERE id IN (${marks(part.length)})`,
      part,
    )) {
      if ((RANK[r.severity] ?? 0) > RANK[severity]!) severity = r.severity as Severity;
    }
  }
  const userId = rows[0]!.user_id;
  const payload = { total: eventIds.length, forms: pluralForms(eventIds.length), released_at: now };
  await q.run(
    `INSERT INTO event_log (id, user_id, provider_id, provider_kind, event_type, severity, payload, extras, tracker_ids,
      dispatch_status, details, occurred_at, created_at, test)
    VALUES (?, ?, NULL, ?, ?, ?, ?, NULL, NULL, 'pending', NULL, ?, ?, ?)`,
    [eventId, userId, DIGEST_SOURCE, DIGEST_TYPE, severity, payload, now, now, false],
  );
  await q.run(
    `INSERT INTO deliveries (id, event_id, user_id, tracker_id, target_id, status, reason, attempts, next_attempt_at,
      lease_until, created_at, updated_at)
    VALUES (?, ?, ?, NULL, ?, 'queued', NULL, 0, ?, NULL, ?, ?)`,
    [digestDelivery, eventId, userId, targetId, now, now, now],
  );
  // Events in one order everywhere: concurrent digests of the same events lock their rows without deadlock.
  for (const id of [...new Set(eventIds)].sort()) await recompute(q, id);
  core.logs
    .get('relay')
    .info(
      { target_id: targetId, event_id: eventId, items: eventIds.length },
      'quiet hours ended: deferred notifications go out as one digest',
    );
  return { userId };
}

/**
 * After a delivery of the digest event settled: the deliveries in it follow (sent with it, or failed
 * with its error; a failed one is sent after all when the digest is resent). Call inside the
 * transaction that records the digest's own outcome; returns their events.
 */
export async function settleDigest(
  q: Queryable,
  digestEventId: string,
  outcome: { sentAt: string } | { failed: string; statusCode: number },
  now: string,
): Promise<string[]> {
  const rows =
    'sentAt' in outcome
      ? await q.all<{ event_id: string }>(
          `UPDATE deliveries SET status = 'sent', sent_at = ?, reason = 'sent in a quiet-hours digest', last_error =
            NULL, last_status_code = NULL, updated_at = ?
        WHERE digest_id = ? AND status IN ('in_digest', 'failed') RETURNING event_id`,
          [outcome.sentAt, now, digestEventId],
        )
      : await q.all<{ event_id: string }>(
          `UPDATE deliveries SET status = 'failed', last_error = ?, last_status_code = ?, updated_at = ?
        WHERE digest_id = ? AND status = 'in_digest' RETURNING event_id`,
          [`the quiet-hours digest failed: ${outcome.failed}`.slice(0, 1000), outcome.statusCode, now, digestEventId],
        );
  // Sorted: the caller locks each event's row to recompute it, in the same order as every other digest.
  return [...new Set(rows.map((r) => r.event_id))].sort();
}

/** An event in the digest, with the name of the tracker its delivery came through. */
type ItemRow = Pick<
  EventDbRow,
  | 'id'
  | 'user_id'
  | 'event_type'
  | 'severity'
  | 'payload'
  | 'extras'
  | 'provider_id'
  | 'provider_kind'
  | 'provider_name'
  | 'occurred_at'
  | 'test'
> & { tracker_name: string | null };

export interface DigestInput {
  deliveryId: string;
  /** The digest's own event (a column the row lacks reads as absent). */
  event: Partial<Pick<EventDbRow, 'id' | 'user_id' | 'severity' | 'payload'>>;
  locale: Locale;
  formats: MessageFormat[];
  targetName: string;
}

/**
 * The digest's message in the target's language: the items grouped by provider and event type,
 * counted, groups and items of the highest severity first, each item its event's one-line title
 * (the user's own template for the type when there is one).
 */
export async function renderDigest(core: Core, catalog: TemplateCatalog, d: DigestInput): Promise<OutboundMessage> {
  const db = core.db;
  const items = await db.all<ItemRow>(
    `SELECT e.id, e.user_id, e.event_type, e.severity, e.payload, e.extras, e.provider_id, e.provider_kind,
      e.occurred_at, e.test,
            p.name AS provider_name, tr.name AS tracker_name
       FROM deliveries d JOIN event_log e ON e.id = d.event_id LEFT JOIN providers p ON p.id = e.provider_id LEFT JOIN
       trackers tr ON tr.id = d.tracker_id
      WHERE d.digest_id = ? ORDER BY e.occurred_at, e.id`,
    [String(d.event.id)],
  );
  const types = [...new Set(items.map((i) => i.event_type))];
  const overrides = new Map<string, { title: string; body: string }>();
  if (types.length) {
    for (const o of await db.all<{ event_type: string; title: string; body: string }>(
      'SELECT event_type, title, body FROM templates WHERE user_id = ? AND locale = ? AND event_type IN ' +
        `(${marks(types.length)})`,
      [d.event.user_id, d.locale, ...types],
    )) {
      overrides.set(o.event_type, { title: o.title, body: o.body });
    }
  }
  const groups = new Map<
    string,
    {
      provider_name: string;
      provider_kind: string;
      event_type: string;
      event_label: string;
      rank: number;
      items: { summary: string; occurred_at: string; severity: string; rank: number }[];
    }
  >();
  for (const it of items) {
    const summary = renderMessage(catalog, {
      deliveryId: d.deliveryId,
      eventId: it.id,
      eventType: it.event_type,
      severity: it.severity,
      locale: d.locale,
      payload: Database.json(it.payload, {}),
      extras: Database.json(it.extras, null),
      providerName: it.provider_name ?? undefined,
      providerKind: it.provider_kind,
      trackerName: it.tracker_name ?? undefined,
      targetName: d.targetName,
      occurredAt: it.occurred_at,
      formats: ['text'],
      override: overrides.get(it.event_type),
      test: Database.bool(it.test),
    })
      .plainTitle.replace(/\s+/g, ' ')
      .trim();
    const key = `${it.provider_id ?? it.provider_kind}\u0000${it.event_type}`;
    let g = groups.get(key);
    if (!g) {
      const manifest = core.plugins.provider(it.provider_kind)?.def.manifest;
      const label = manifest ? localizeManifest(manifest, d.locale).events[it.event_type] : null;
      g = {
        provider_name: it.provider_name ?? it.provider_kind,
        provider_kind: it.provider_kind,
        event_type: it.event_type,
        event_label: label ?? it.event_type,
        rank: 0,
        items: [],
      };
      groups.set(key, g);
    }
    const rank = RANK[it.severity] ?? 0;
    g.rank = Math.max(g.rank, rank);
    g.items.push({ summary, occurred_at: it.occurred_at, severity: it.severity, rank });
  }
  const sorted = [...groups.values()].sort(
    (a, b) =>
      b.rank - a.rank || a.provider_name.localeCompare(b.provider_name) || a.event_type.localeCompare(b.event_type),
  );
  const severityOf = (rank: number) => (rank === 3 ? 'critical' : rank === 2 ? 'warning' : 'info');
  const ctxGroups = sorted.map((g) => {
    // Stable: within a severity, in the order they happened.
    const list = g.items
      .map((x, i) => ({ x, i }))
      .sort((a, b) => b.x.rank - a.x.rank || a.i - b.i)
      .map(({ x }) => x);
    const severity = severityOf(g.rank);
    return {
      provider_name: g.provider_name,
      provider_kind: g.provider_kind,
      event_type: g.event_type,
      event_label: g.event_label,
      severity,
      critical: severity === 'critical',
      warning: severity === 'warning',
      total: g.items.length,
      forms: pluralForms(g.items.length),
      items: list.slice(0, ITEMS_PER_GROUP).map((x) => ({
        summary: x.summary,
        occurred_at: x.occurred_at,
        severity: x.severity,
        critical: x.severity === 'critical',
        warning: x.severity === 'warning',
      })),
      more: Math.max(0, g.items.length - ITEMS_PER_GROUP),
      more_forms: pluralForms(Math.max(0, g.items.length - ITEMS_PER_GROUP)),
    };
  });
  const payload = Database.json<Record<string, unknown>>(d.event.payload, {});
  const ctx = {
    ...payload,
    total: items.length,
    forms: pluralForms(items.length),
    groups: ctxGroups,
    group_count: ctxGroups.length,
    critical_count: items.filter((i) => i.severity === 'critical').length,
    target_name: d.targetName,
  };
  const tpl = catalog.get(DIGEST_TYPE, d.locale);
  const format = d.formats[0] ?? 'text';
  const title = render(tpl.title, ctx, format);
  const body = render(tpl.body, ctx, format)
    .replace(/\n{3,}/g, '\n\n')
    .trim();
  const plainTitle = format === 'text' ? title : render(tpl.title, ctx, 'text');
  const plainBody =
    format === 'text'
      ? body
      : render(tpl.body, ctx, 'text')
          .replace(/\n{3,}/g, '\n\n')
          .trim();
  return {
    deliveryId: d.deliveryId,
    eventId: String(d.event.id),
    eventType: DIGEST_TYPE,
    severity: d.event.severity ?? 'info',
    locale: d.locale,
    format,
    title,
    body,
    plainTitle,
    plainBody,
  };
}

/**
 * After a failed attempt of a digest's delivery: when it failed for good, the deliveries in it fail
 * with its error. `recompute` refreshes their events' dispatch_status.
 */
export async function failDigestIfFinal(
  db: Database,
  digestDeliveryId: string,
  digestEventId: string,
  now: string,
  recompute: (eventId: string) => Promise<unknown>,
): Promise<void> {
  const st = await db.get<{ status: string; last_error: string | null; last_status_code: number | null }>(
    'SELECT status, last_error, last_status_code FROM deliveries WHERE id = ?',
    [digestDeliveryId],
  );
  if (st?.status !== 'failed') return;
  const events = await db.tx((q) =>
    settleDigest(
      q,
      digestEventId,
      { failed: st.last_error ?? 'unknown error', statusCode: Number(st.last_status_code ?? 0) },
      now,
    ),
  );
  for (const id of events) await recompute(id);
}
