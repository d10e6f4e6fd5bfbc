/**
 * The retention deletes in batches (RETENTION_BATCH events a statement) so that the relay's own statements run
 * between them: every settled event past the period goes, however many, on both sides of a batch's size; the
 * events still in the period or not settled stay; and a webhook sent while a long deletion runs is accepted
 * before the deletion ends, instead of waiting for one statement over the whole log.
 */
import crypto from 'node:crypto';
import t from 'tap';
import { insertRow } from '../../core/src/db/rows.ts';
import { applyRetention, RETENTION_BATCH } from '../../core/src/relay/feature.ts';
import { startService } from '../helpers/service.ts';

const DAY = 86_400_000;

t.test('retention in batches', async (t) => {
  const s = await startService({ SERVICE_EVENT_LOG_RETENTION_DAYS: '1' });
  t.teardown(() => s.stop());
  const core = s.service.core;
  const token = s.admin.token;
  const provider = await s.request('POST', '/api/providers', {
    token,
    body: { kind: 'example', name: 'Ex', config: { shared_token: 'sharedtoken1' } },
  });
  const hook = `/api/hooks/${provider.body.webhook_url.split('/api/hooks/')[1]}`;
  const send = (name: string) =>
    s.request('POST', hook, {
      headers: { 'x-example-token': 'sharedtoken1' },
      body: { type: 'thing_happened', payload: { name } },
    });
  const first = await send('template');
  t.equal(first.status, 202);
  const template = (await core.db.get('SELECT * FROM event_log WHERE id = ?', [first.body.event_ids[0]]))!;

  /** Copies of the first event, created `daysAgo` days ago with that status. */
  const seed = async (n: number, daysAgo: number, status: string) => {
    const created = new Date(Date.now() - daysAgo * DAY).toISOString();
    await core.db.tx(async (tx) => {
      for (let i = 0; i < n; i++)
        await insertRow(tx, 'event_log', {
          ...template,
          id: crypto.randomUUID(),
          replay_key: null,
          replay_expires_at: null,
          created_at: created,
          dispatch_status: status,
        });
    });
  };
  const count = async (sql: string) => Number((await core.db.get<{ n: number | string }>(sql))!.n);
  const old = `SELECT COUNT(*) AS n FROM event_log WHERE created_at < '${new Date(Date.now() - DAY).toISOString()}'`;

  for (const n of [RETENTION_BATCH, RETENTION_BATCH + 1, 2 * RETENTION_BATCH + 7]) {
    await seed(n, 3, 'dispatched');
    t.equal(await applyRetention(core), n, `${n} settled events past the period: all deleted`);
    t.equal(await count(old), 0);
  }

  await seed(3, 3, 'pending');
  await seed(4, 0, 'dispatched');
  const kept = await count('SELECT COUNT(*) AS n FROM event_log');
  t.equal(await applyRetention(core), 0, 'nothing unsettled or recent is deleted');
  t.equal(await count('SELECT COUNT(*) AS n FROM event_log'), kept);
  await core.db.run(`DELETE FROM event_log WHERE dispatch_status = 'pending'`);

  // A webhook during a long deletion is taken between two batches.
  await seed(20 * RETENTION_BATCH, 3, 'failed');
  let pruneDone = 0;
  const pruneStart = Date.now();
  const pruning = applyRetention(core).then((n) => {
    pruneDone = Date.now();
    return n;
  });
  await new Promise((r) => setTimeout(r, 5));
  const sent = Date.now();
  const during = await send('during');
  const answered = Date.now();
  t.equal(during.status, 202, 'accepted while the retention runs');
  t.equal(await pruning, 20 * RETENTION_BATCH);
  const took = pruneDone - pruneStart;
  t.ok(
    answered - sent < took / 2,
    `answered in ${answered - sent} ms of a deletion that took ${took} ms (one statement would hold it to the end)`,
  );
  t.equal(await count(`SELECT COUNT(*) AS n FROM event_log WHERE id = '${during.body.event_ids[0]}'`), 1, 'and kept');
});
