/**
 * `Database.txThen`: a transaction with a last step that transactions committing together share (`npm test` runs
 * this file on both backends). On SQLite the units of one group commit with the same key run together and then the
 * step once, after all of them; on PostgreSQL each transaction commits alone and runs its own step. Either way the
 * step sees its units' writes and is atomic with them. The dispatcher recomputes an event's status this way, once for
 * the deliveries of it that settle together instead of once each (issue 27, fan-out).
 */
import t, { type Test } from 'tap';
import type { Database, Queryable } from '../../core/src/db/database.ts';
import { startService, TEST_DB } from '../helpers/service.ts';

const count = async (q: Queryable, sql: string, params: string[] = []): Promise<number> =>
  Number((await q.get<{ n: number | string }>(`SELECT COUNT(*) AS n FROM ${sql}`, params))?.n);

t.test('units sharing a last step', async (t) => {
  const s = await startService({}, { setup: false });
  t.teardown(() => s.stop());
  const db: Database = s.service.core.db;
  t.equal(db.dialect, TEST_DB, `running on ${TEST_DB}`);
  await db.run('CREATE TABLE shared_item (id TEXT PRIMARY KEY, grp TEXT NOT NULL)');
  await db.run('CREATE TABLE shared_total (grp TEXT PRIMARY KEY, n INTEGER NOT NULL)');
  await db.run('CREATE TABLE shared_lock (grp TEXT PRIMARY KEY)');
  for (const grp of 'abcdefg') await db.run('INSERT INTO shared_lock (grp) VALUES (?)', [grp]);
  /** On SQLite the units of a key share one step, which saw them all; on PostgreSQL each saw those before it. */
  const shared = (t: Test, v: unknown, id: string, n: number, all: number) =>
    TEST_DB === 'sqlite' ? t.same(v, [id, all]) : t.ok(Array.isArray(v) && v[0] === id && v[1] >= n && v[1] <= all);

  let runs = 0;
  /** The step: the group's total recomputed from its items, as the event's status is from its deliveries. */
  const total = (grp: string, fail = false) => ({
    key: `total:${grp}`,
    run: async (q: Queryable) => {
      runs++;
      // As the event's recompute does: on PostgreSQL, concurrent transactions take turns here, so the last sees all.
      if (q.dialect === 'postgresql') await q.get('SELECT grp FROM shared_lock WHERE grp = ? FOR UPDATE', [grp]);
      const n = await count(q, 'shared_item WHERE grp = ?', [grp]);
      await q.run('INSERT INTO shared_total (grp, n) VALUES (?, ?) ON CONFLICT (grp) DO UPDATE SET n = ?', [grp, n, n]);
      if (fail) throw new Error(`the step of ${grp} failed`);
      return n;
    },
  });
  const item =
    (id: string, grp: string, fail = false) =>
    async (q: Queryable) => {
      await q.run('INSERT INTO shared_item (id, grp) VALUES (?, ?)', [id, grp]);
      if (fail) throw new Error(`unit ${id} failed`);
      return id;
    };
  const totalOf = async (grp: string) =>
    Number((await db.get<{ n: number | string }>('SELECT n FROM shared_total WHERE grp = ?', [grp]))?.n ?? -1);

  await t.test('one unit: its result and the step’s, in one transaction', async (t) => {
    runs = 0;
    t.same(await db.txThen(item('a1', 'a'), total('a')), ['a1', 1]);
    t.equal(runs, 1);
    t.equal(await totalOf('a'), 1, 'the step saw the unit’s write');
    await t.rejects(db.txThen(item('a2', 'a'), total('a', true)), /the step of a failed/);
    t.equal(await count(db, 'shared_item WHERE id = ?', ['a2']), 0, 'a failed step takes its unit’s writes with it');
    t.equal(await totalOf('a'), 1, 'and its own');
    await t.rejects(db.txThen(item('a3', 'a', true), total('a')), /unit a3 failed/);
    t.equal(await count(db, 'shared_item WHERE id = ?', ['a3']), 0, 'a failed unit leaves nothing');
  });

  await t.test('units queued together with the same key', async (t) => {
    runs = 0;
    // Queued in one turn: on SQLite one group commit; `other` is queued between them and shares nothing.
    const results = await Promise.all([
      db.txThen(item('b1', 'b'), total('b')),
      db.txThen(item('b2', 'b'), total('b')),
      db.tx(item('o1', 'other')),
      db.txThen(item('b3', 'b'), total('b')),
      db.txThen(item('c1', 'c'), total('c')),
    ]);
    // Each unit gets its own result and the step's: on SQLite the one step saw all three.
    shared(t, results[0], 'b1', 1, 3);
    shared(t, results[1], 'b2', 1, 3);
    shared(t, results[3], 'b3', 1, 3);
    t.same(results[4], ['c1', 1], 'another key has its own step');
    t.equal(results[2], 'o1');
    t.equal(await totalOf('b'), 3, 'the total that landed counts every unit of the key');
    t.equal(await count(db, 'shared_item WHERE id = ?', ['o1']), 1, 'the unit between them was committed');
    // SQLite: one step for b and one for c. PostgreSQL: each transaction ran its own.
    t.equal(runs, TEST_DB === 'sqlite' ? 2 : 4, `${runs} runs of the step`);
  });

  await t.test('a failing unit among them rolls back alone', async (t) => {
    runs = 0;
    const settled = await Promise.allSettled([
      db.txThen(item('d1', 'd'), total('d')),
      db.txThen(item('d2', 'd', true), total('d')),
      db.txThen(item('d3', 'd'), total('d')),
    ]);
    t.same(
      settled.map((r) => r.status),
      ['fulfilled', 'rejected', 'fulfilled'],
    );
    t.match(String((settled[1] as PromiseRejectedResult).reason), /unit d2 failed/);
    // The step counted the units that stayed (on SQLite both of them).
    shared(t, (settled[0] as PromiseFulfilledResult<unknown>).value, 'd1', 1, 2);
    shared(t, (settled[2] as PromiseFulfilledResult<unknown>).value, 'd3', 1, 2);
    t.equal(await count(db, 'shared_item WHERE grp = ?', ['d']), 2);
    t.equal(await totalOf('d'), 2);
  });

  await t.test('a failing step rolls back every unit that shared it, and nothing else', async (t) => {
    runs = 0;
    const settled = await Promise.allSettled([
      db.txThen(item('e1', 'e'), total('e', true)),
      db.tx(item('o2', 'other')),
      db.txThen(item('e2', 'e'), total('e', true)),
      db.txThen(item('f1', 'f'), total('f')),
    ]);
    t.same(
      settled.map((r) => r.status),
      ['rejected', 'fulfilled', 'rejected', 'fulfilled'],
    );
    t.match(String((settled[0] as PromiseRejectedResult).reason), /the step of e failed/);
    t.match(String((settled[2] as PromiseRejectedResult).reason), /the step of e failed/);
    t.equal(await count(db, 'shared_item WHERE grp = ?', ['e']), 0, 'no unit of the failed step was kept');
    t.equal(await totalOf('e'), -1, 'nor the step’s own write');
    t.equal(await count(db, 'shared_item WHERE id IN (?, ?)', ['o2', 'f1']), 2, 'the other units were committed');
    t.equal(await totalOf('f'), 1);
  });

  await t.test('when every unit of a key fails, the step does not run', async (t) => {
    runs = 0;
    const settled = await Promise.allSettled([
      db.txThen(item('g1', 'g', true), total('g')),
      db.txThen(item('g2', 'g', true), total('g')),
    ]);
    t.same(
      settled.map((r) => r.status),
      ['rejected', 'rejected'],
    );
    t.equal(runs, 0);
    t.equal(await totalOf('g'), -1);
  });
});
