/**
 * `herald events prune --before <date>`: the daily retention job (`applyRetention`) run now with
 * that date as its cutoff: finished events (dispatched, dropped, failed, partial) created before
 * it, with the webhook payload log, job runs and message threads of that age, and whatever has
 * expired anyway (token sign-outs, plugin store entries). Pending and deferred events stay.
 * `herald events stats`: counts of the event log by status, by provider and by event type.
 */
import type { Core } from '../core.ts';
import { withCore } from './context.ts';
import type { Messages } from './i18n.ts';
import { CliError, EXIT, out, printJson, table } from './output.ts';

const DAY_MS = 86_400_000;

/** A cutoff: an ISO 8601 date or date-time (a date alone is midnight UTC), or `<n>d`, that many days ago. */
export function parseCutoff(value: string, now: Date): Date {
  const v = value.trim();
  const days = /^(\d{1,5})d$/.exec(v);
  let at: Date;
  if (days) at = new Date(now.getTime() - Number(days[1]) * DAY_MS);
  else if (/^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:?\d{2})?)?$/.test(v)) {
    at = new Date(/^\d{4}-\d{2}-\d{2}$/.test(v) ? `${v}T00:00:00Z` : v.replace(' ', 'T'));
  } else at = new Date(Number.NaN);
  if (Number.isNaN(at.getTime())) throw new CliError('events.bad_date', { value }, EXIT.usage);
  if (at.getTime() > now.getTime()) throw new CliError('events.future_date', { value }, EXIT.usage);
  return at;
}

export async function pruneEvents(m: Messages, o: { before: string }): Promise<void> {
  const now = new Date();
  const cutoff = parseCutoff(o.before, now);
  await withCore(m, 'existing', 'always', async (core) => {
    // The job's cutoff is `now - retention days`: a retention of exactly (now - cutoff) puts it at the date asked for.
    const view = Object.create(core) as Core;
    view.config = { ...core.config, eventLogRetentionDays: (now.getTime() - cutoff.getTime()) / DAY_MS };
    view.clock = { now: () => now };
    // Loaded only here.
    const { applyRetention } = await import('../relay/retention.ts');
    const deleted = cutoff.getTime() === now.getTime() ? 0 : await applyRetention(view);
    out(m.t('events.pruned', { count: deleted, before: m.date(cutoff.toISOString()) }));
    const left = await core.db.get<{ n: unknown }>(`SELECT COUNT(*) AS n FROM event_log WHERE created_at < ?`, [
      cutoff.toISOString(),
    ]);
    const kept = Number(left?.n ?? 0);
    if (kept) out(m.t('events.kept_unfinished', { count: kept }));
  });
}

interface Count {
  n: unknown;
}

export async function eventStats(m: Messages, o: { json?: boolean }): Promise<void> {
  await withCore(m, 'existing', 'always', async (core) => {
    const db = core.db;
    const total = Number((await db.get<Count>('SELECT COUNT(*) AS n FROM event_log'))?.n ?? 0);
    const range = await db.get<{ first: string | null; last: string | null }>(
      'SELECT MIN(created_at) AS first, MAX(created_at) AS last FROM event_log',
    );
    const byStatus = (
      await db.all<Count & { status: string }>(
        'SELECT dispatch_status AS status, COUNT(*) AS n FROM event_log GROUP BY dispatch_status ORDER BY ' +
          'n DESC, status',
      )
    ).map((r) => ({ status: r.status, count: Number(r.n) }));
    const byProvider = (
      await db.all<Count & { kind: string; id: string | null; name: string | null; email: string | null }>(
        `SELECT e.provider_kind AS kind, e.provider_id AS id, p.name AS name, u.email AS email, COUNT(*) AS n
         FROM event_log e LEFT JOIN providers p ON p.id = e.provider_id LEFT JOIN users u ON u.id = p.user_id
        GROUP BY e.provider_kind, e.provider_id, p.name, u.email ORDER BY n DESC, kind, name`,
      )
    ).map((r) => ({ provider_id: r.id, kind: r.kind, name: r.name, owner: r.email, count: Number(r.n) }));
    const byType = (
      await db.all<Count & { type: string; kind: string }>(
        'SELECT provider_kind AS kind, event_type AS type, COUNT(*) AS n FROM event_log GROUP BY ' +
          'provider_kind, event_type ORDER BY n DESC, kind, type',
      )
    ).map((r) => ({ kind: r.kind, event_type: r.type, count: Number(r.n) }));
    const deferred = Number((await db.get<Count>('SELECT COUNT(*) AS n FROM deferred_dispatch'))?.n ?? 0);
    if (o.json) {
      printJson({
        total,
        first_at: range?.first ?? null,
        last_at: range?.last ?? null,
        deferred,
        by_status: byStatus,
        by_provider: byProvider,
        by_type: byType,
        retention_days: core.config.eventLogRetentionDays,
      });
      return;
    }
    if (!total) out(m.t('events.empty'));
    else out(m.t('events.total', { count: total, first: m.date(range!.first!), last: m.date(range!.last!) }));
    const days = core.config.eventLogRetentionDays;
    out(days > 0 ? m.t('events.retention', { count: days }) : m.t('events.retention_off'));
    if (deferred) out(m.t('events.deferred', { count: deferred }));
    if (!total) return;
    out();
    for (const line of table(
      [m.t('events.col_status'), m.t('events.col_count')],
      byStatus.map((r) => [r.status, String(r.count)]),
    ))
      out(line);
    out();
    for (const line of table(
      [m.t('events.col_provider'), m.t('events.col_kind'), m.t('events.col_owner'), m.t('events.col_count')],
      byProvider.map((r) => [r.name ?? m.t('events.deleted_provider'), r.kind, r.owner ?? '', String(r.count)]),
    ))
      out(line);
    out();
    for (const line of table(
      [m.t('events.col_type'), m.t('events.col_kind'), m.t('events.col_count')],
      byType.map((r) => [r.event_type, r.kind, String(r.count)]),
    ))
      out(line);
  });
}
