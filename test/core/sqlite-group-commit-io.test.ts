/**
 * The SQLite group commit writes its WAL frames and nothing else: each unit's savepoint keeps the pages it changes in
 * a sub-journal, which must stay in memory (native-connect.ts, `temp_store`). On a temporary file every such page
 * would cost two more write system calls, ~40 a webhook event under a burst (issue 27).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import BetterSqlite from 'better-sqlite3';
import t from 'tap';
import { openNativeSqlite } from '../../core/src/db/native-connect.ts';

/** Write system calls made by the calling thread so far (Linux). */
function writeCalls(): number {
  const m = /^syscw: (\d+)$/m.exec(fs.readFileSync('/proc/thread-self/io', 'utf8'));
  if (!m) throw new Error('no syscw in /proc/thread-self/io');
  return Number(m[1]);
}

t.test('a group of units under savepoints writes only its WAL frames', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-group-io-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'g.db');
  const { db } = openNativeSqlite(file, { create: true });
  t.teardown(() => db.close());
  await db.run('CREATE TABLE t (id TEXT PRIMARY KEY, k TEXT NOT NULL, v TEXT NOT NULL)');
  await db.run('CREATE INDEX t_k ON t (k)');
  // Pages that exist before the group: a unit that changes one must journal it under its savepoint.
  const seed = Array.from({ length: 2000 }, (_, i) => [`s${i}`, `k${(i * 7919) % 2000}`, 'x'.repeat(300)]);
  await db.tx(async (q) => {
    for (const r of seed) await q.run('INSERT INTO t (id, k, v) VALUES (?, ?, ?)', r);
  });
  // Another connection empties the WAL, so that afterwards it holds the group's frames alone.
  const other = new BetterSqlite(file);
  t.teardown(() => other.close());
  const walFrames = () => (other.pragma('wal_checkpoint(PASSIVE)') as { log: number }[])[0]!.log;
  other.pragma('wal_checkpoint(TRUNCATE)');

  const before = writeCalls();
  // Queued in one turn: one transaction, a savepoint for each unit, one COMMIT. The first unit changes more than
  // 64 KB of existing pages (as an event with its deliveries and their indexes can), past the size at which SQLite
  // moves a sub-journal from memory to a file; the ones after it are small.
  const spread = Array.from({ length: 60 }, (_, i) => `s${i * 33}`);
  await Promise.all([
    db.tx(async (q) => {
      await q.run(`UPDATE t SET v = ? WHERE id IN (${spread.map(() => '?').join(', ')})`, ['w'.repeat(300), ...spread]);
    }),
    ...Array.from({ length: 120 }, (_, i) =>
      db.tx(async (q) => {
        await q.run('INSERT INTO t (id, k, v) VALUES (?, ?, ?)', [`n${i}`, `k${(i * 104729) % 2000}`, 'y'.repeat(300)]);
        await q.run('UPDATE t SET v = ? WHERE id = ?', ['z'.repeat(300), `s${(i * 31) % 2000}`]);
      }),
    ),
  ]);
  const calls = writeCalls() - before;
  const frames = walFrames();

  t.equal((await db.get<{ n: number }>('SELECT COUNT(*) AS n FROM t'))?.n, 2120, 'every unit was committed');
  t.ok(frames > 20, `the group changed pages all over the table and its index (${frames} WAL frames)`);
  // Each frame is written as its header and its page; a few more for the WAL's own header.
  t.ok(calls <= 2 * frames + 8, `${calls} write calls for ${frames} frames: nothing written beside the WAL`);
});
