/**
 * An idle dispatcher asks the database every second whether anything is due: with nothing queued, deferred or
 * leased it only reads (no write statement, no transaction), so an idle service takes no write lock and commits
 * nothing (issue 27, idle CPU). Dispatch runs in the main thread here, where the statements can be watched.
 */
import t from 'tap';
import { startService } from '../helpers/service.ts';

/** What the dispatch loop reads and writes. */
const DISPATCH_TABLES = /\b(deliveries|deferred_dispatch|event_log)\b/;

t.test('an idle dispatcher reads and writes nothing', async (t) => {
  const s = await startService({ SERVICE_DISPATCH_THREAD: 'false' });
  t.teardown(() => s.stop());
  const db = s.service.core.db;
  await new Promise((r) => setTimeout(r, 300));
  const seen: string[] = [];
  let inTransaction = 0; // statements on those tables inside a transaction
  const all = db.all.bind(db);
  const get = db.get.bind(db);
  const run = db.run.bind(db);
  const tx = db.tx.bind(db);
  db.all = ((sql: string, p?: never[]) => (seen.push(sql), all(sql, p))) as typeof db.all;
  db.get = ((sql: string, p?: never[]) => (seen.push(sql), get(sql, p))) as typeof db.get;
  db.run = (sql, p) => (seen.push(sql), run(sql, p));
  // Other jobs may open inTransaction of their own (the leader's lease on PostgreSQL): those on the
  // dispatcher's tables are counted.
  db.tx = ((fn: Parameters<typeof db.tx>[0]) =>
    tx((q) => {
      const watched = (sql: string) => {
        if (DISPATCH_TABLES.test(sql)) inTransaction++;
      };
      return fn({
        dialect: q.dialect,
        all: (sql, p) => (watched(sql), q.all(sql, p)),
        get: (sql, p) => (watched(sql), q.get(sql, p)),
        run: (sql, p) => (watched(sql), q.run(sql, p)),
      } as typeof q);
    })) as typeof db.tx;
  t.teardown(() => {
    Object.assign(db, { all, get, run, tx });
  });
  await new Promise((r) => setTimeout(r, 2_500));
  const dueChecks = seen.filter((q) => /FROM deliveries/.test(q));
  t.ok(dueChecks.length >= 1, `the loop asked (${dueChecks.length} times)`);
  t.same(
    seen.filter((q) => /^\s*(UPDATE|INSERT|DELETE|WITH)/i.test(q) && DISPATCH_TABLES.test(q)),
    [],
    'no write statement on its tables',
  );
  t.equal(inTransaction, 0, 'no transaction on them');
});
