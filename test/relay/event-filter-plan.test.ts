/**
 * The event log's filters are read from their indexes (migrations 0033 and 0034): a page of a rare type, of a status
 * few events have, or of a past time window is chosen from an index instead of walking the whole log newest first.
 * Checked on the plan each database makes for the very statement `GET /api/events` runs (`eventPageSql`), with
 * planner statistics as the service keeps them (SQLite: `PRAGMA optimize` when the service opens the file, and daily;
 * PostgreSQL: ANALYZE, with sequential scans off, since a table this small would otherwise be read whole).
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import type { Queryable } from '../../core/src/db/database.ts';
import { type EventFilter, eventPageSql } from '../../core/src/relay/routes/event-filter.ts';
import { startService } from '../helpers/service.ts';

const EVENTS = 3_000;
const DAY = 86_400_000;

t.test('each filter of the event log is planned on its own index', async (t) => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-test-'));
  t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  // The log keeps everything (the daily retention would take the older days at the restart).
  const env = { SERVICE_EVENT_LOG_RETENTION_DAYS: '0' };
  const first = await startService(env, { dataDir });
  const user = first.admin.id;
  const now = Date.now();
  const oldest = now - 60 * DAY;
  const provider = await first.service.core.db.get<{ id: string }>(
    'SELECT id FROM providers WHERE user_id = ? LIMIT 1',
    [user],
  );
  // A log of 60 days, half of it from one provider: one type in a thousand is rare, one event in a hundred
  // failed, the rest dispatched; none partial.
  await first.service.core.db.tx(async (q) => {
    for (let i = 0; i < EVENTS; i++) {
      const at = new Date(oldest + (i * 60 * DAY) / EVENTS).toISOString();
      const id = `${(oldest + i * 1000).toString(16).padStart(12, '0')}-7000-8000-${randomUUID().slice(-17)}`;
      await q.run(
        'INSERT INTO event_log (id, user_id, provider_id, provider_kind, event_type, dispatch_status, occurred_at, ' +
          'created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
        [
          id,
          user,
          i % 2 ? null : provider!.id,
          'example',
          i % 1000 === 0 ? 'rare' : 'common',
          i % 100 === 0 ? 'failed' : 'dispatched',
          at,
          at,
        ],
      );
    }
  });
  // Restarted as an operator would: SQLite gathers its statistics when the service opens the file.
  await first.stop();
  const s = await startService(env, { dataDir, setup: false });
  t.teardown(() => s.stop());
  const db = s.service.core.db;
  if (db.dialect === 'postgresql') await db.run('ANALYZE event_log');
  const plan = async (f: EventFilter): Promise<string> => {
    const params: unknown[] = [];
    const sql = eventPageSql(user, f, { limit: 50 }, params);
    if (db.dialect === 'sqlite') {
      const rows = await db.all<{ detail: string }>(`EXPLAIN QUERY PLAN ${sql}`, params as never[]);
      return rows.map((r) => r.detail).join(' | ');
    }
    return db.tx(async (q: Queryable) => {
      await q.run('SET LOCAL enable_seqscan = off');
      const rows = await q.all<{ 'QUERY PLAN': string }>(`EXPLAIN ${sql}`, params as never[]);
      return rows.map((r) => r['QUERY PLAN']).join(' | ');
    });
  };

  const cases: [string, EventFilter, string | RegExp][] = [
    ['a rare event type', { event_type: 'rare' }, 'event_log_user_type'],
    [
      'a provider and a status no event has',
      { provider_id: provider!.id, dispatch_status: 'partial' },
      'event_log_user_unsettled',
    ],
    ['a status few events have', { dispatch_status: 'failed' }, 'event_log_user_unsettled'],
    [
      'a day 45 days ago',
      { since: new Date(now - 45 * DAY).toISOString(), until: new Date(now - 44 * DAY).toISOString() },
      'event_log_user_occurred',
    ],
  ];
  if (db.dialect === 'sqlite') {
    // SQLite's statistics are a sample (analysis_limit): where they make a provider look rare, a provider with a
    // narrower filter beside it is still read from the narrower filter's index.
    await db.run(`DELETE FROM sqlite_stat4 WHERE idx = 'event_log_provider'`);
    await db.run(`UPDATE sqlite_stat1 SET stat = '3000 2 1' WHERE idx = 'event_log_provider'`);
    await db.run('ANALYZE sqlite_schema');
    cases.push([
      'a provider the statistics call rare, with a status',
      { provider_id: provider!.id, dispatch_status: 'partial' },
      'event_log_user_unsettled',
    ]);
    // A provider beside a status is checked in the status index itself (migration 0034), not in each event's row.
    cases.push([
      "a provider's failed events",
      { provider_id: provider!.id, dispatch_status: 'failed' },
      /COVERING INDEX event_log_user_unsettled/,
    ]);
    // With statistics SQLite knows a recent window holds few enough events to walk the newest first.
    cases.push(['the last day', { since: new Date(now - DAY).toISOString() }, /INDEX event_log_user \(/]);
  }
  for (const [what, f, index] of cases) t.match(await plan(f), index, `${what}: read from ${index}`);

  // The same statement answers what the filters ask, newest first.
  const page = async (f: EventFilter, limit = 50) => {
    const params: unknown[] = [];
    const rows = await db.all<{ id: string; event_type: string; dispatch_status: string; occurred_at: string }>(
      eventPageSql(user, f, { limit }, params),
      params as never[],
    );
    return rows;
  };
  const rare = await page({ event_type: 'rare' });
  t.equal(rare.length, EVENTS / 1000, 'every rare event');
  t.ok(
    rare.every((r) => r.event_type === 'rare'),
    'and nothing else',
  );
  const failed = await page({ dispatch_status: 'failed' }, 10);
  t.equal(failed.length, 10, 'a page of failed events');
  t.ok(
    failed.every((r) => r.dispatch_status === 'failed'),
    'all failed',
  );
  t.same(
    failed.map((r) => r.id),
    [...failed.map((r) => r.id)].sort().reverse(),
    'newest first',
  );
  const dispatched = await page({ dispatch_status: 'dispatched' }, 5);
  t.ok(
    dispatched.length === 5 && dispatched.every((r) => r.dispatch_status === 'dispatched'),
    'the status left out of the index is still found',
  );
  const since = new Date(now - 45 * DAY).toISOString();
  const until = new Date(now - 44 * DAY).toISOString();
  const day = await page({ since, until }, 200);
  t.equal(day.length, EVENTS / 60, 'the events of that day');
  t.ok(
    day.every((r) => r.occurred_at >= since && r.occurred_at < until),
    'and only those',
  );
});
