/**
 * An operator's prune run by the service (`POST /api/admin/events/prune`, `GET /api/admin/events/prune/{id}`): for
 * administrators only; a cutoff in the future refused; the prune runs in the background and is followed until it
 * ends with the count deleted and the older events kept; one at a time on a replica (409 naming the running one); a
 * service stopping ends it between two batches (`stopped`, what was deleted stays deleted), and a cleanup waiting
 * behind it stops waiting when aborted; and two cleanups of one process (the daily job, a prune) run one after the
 * other, never interleaved.
 */
import t from 'tap';
import type { Core } from '../../core/src/core.ts';
import { newId } from '../../core/src/http/ids.ts';
import { applyRetention, pruneJob, startPrune } from '../../core/src/relay/retention.ts';
import { startService } from '../helpers/service.ts';

/** `n` finished events created at `createdAt` (and `pending` ones, which a prune keeps). */
async function seed(core: Core, userId: string, n: number, createdAt: string, status = 'dispatched') {
  await core.db.tx(async (q) => {
    for (let i = 0; i < n; i++)
      await q.run(
        'INSERT INTO event_log (id, user_id, provider_id, provider_kind, event_type, payload, dispatch_status, ' +
          `occurred_at, created_at) VALUES (?, ?, NULL, 'example', 'thing', '{}', ?, ?, ?)`,
        [newId(), userId, status, createdAt, createdAt],
      );
  });
}
const count = async (core: Core) =>
  Number((await core.db.get<{ n: number | string }>('SELECT COUNT(*) AS n FROM event_log'))?.n);
const settle = async (core: Core, id: string) => {
  for (let i = 0; i < 400; i++) {
    const job = pruneJob(core, id);
    if (job?.state !== 'running') return job;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error('the prune did not end');
};

t.test('the prune route: administrators only, followed to its end', async (t) => {
  const s = await startService();
  t.teardown(() => s.stop());
  const core = s.service.core;
  await seed(core, s.admin.id, 30, '2020-01-01T00:00:00.000Z');
  await seed(core, s.admin.id, 2, '2020-01-01T00:00:00.000Z', 'pending');
  await seed(core, s.admin.id, 5, '2020-06-01T00:00:00.000Z');

  const user = await s.user();
  const asUser = await s.request('POST', '/api/admin/events/prune', {
    token: user.token,
    body: { before: '2020-03-01T00:00:00Z' },
  });
  t.equal(asUser.status, 403, 'not for a user');
  const future = await s.request('POST', '/api/admin/events/prune', {
    token: s.admin.token,
    body: { before: new Date(Date.now() + 86_400_000).toISOString() },
  });
  t.equal(future.status, 422, future.text);
  t.match(future.body.errors, [{ path: 'body/before' }]);
  t.equal(await count(core), 37, 'refusals delete nothing');

  const r = await s.request('POST', '/api/admin/events/prune', {
    token: s.admin.token,
    body: { before: '2020-03-01T00:00:00Z' },
  });
  t.equal(r.status, 202, r.text);
  t.match(r.body, { before: '2020-03-01T00:00:00.000Z', state: /running|done/, finished_at: null, error: null });
  t.equal(r.headers.get('location'), `/api/admin/events/prune/${r.body.id}`);
  let job = r.body;
  for (let i = 0; i < 400 && job.state === 'running'; i++) {
    await new Promise((resolve) => setTimeout(resolve, 25));
    const g = await s.request('GET', `/api/admin/events/prune/${r.body.id}`, { token: s.admin.token });
    t.equal(g.status, 200);
    job = g.body;
  }
  t.match(job, { id: r.body.id, state: 'done', deleted: 30, kept_unfinished: 2, error: null });
  t.ok(job.finished_at, 'with its end');
  t.equal(await count(core), 7, 'the pending ones and the newer ones stay');
  const unknown = await s.request('GET', `/api/admin/events/prune/${newId()}`, { token: s.admin.token });
  t.equal(unknown.status, 404);
  const userLook = await s.request('GET', `/api/admin/events/prune/${r.body.id}`, { token: user.token });
  t.equal(userLook.status, 403);
});

t.test('one prune at a time; a stopping service ends it between two batches', async (t) => {
  const s = await startService();
  let stopped = false;
  t.teardown(() => (stopped ? undefined : s.stop()));
  const core = s.service.core;
  // Enough batches (100 events first, a pause of 25 ms or more after each) to be running when asked again.
  await seed(core, s.admin.id, 3000, '2020-01-01T00:00:00.000Z');
  const first = startPrune(core, new Date('2020-03-01T00:00:00Z'));
  t.equal(first.started, true);
  const again = startPrune(core, new Date('2020-02-01T00:00:00Z'));
  t.equal(again.started, false, 'a second start finds the running one');
  t.equal(again.job.id, first.job.id);
  const busy = await s.request('POST', '/api/admin/events/prune', {
    token: s.admin.token,
    body: { before: '2020-03-01T00:00:00Z' },
  });
  t.equal(busy.status, 409, busy.text);
  t.match(busy.body, { code: 'prune_running', params: { id: first.job.id, before: '2020-03-01T00:00:00.000Z' } });

  // The daily job waiting behind the prune ends at once when the scheduler's stop aborts it (it would otherwise hold
  // the service's stop until the prune ended).
  const ac = new AbortController();
  const daily = applyRetention(core, ac.signal, { before: new Date('2020-03-01T00:00:00Z') });
  ac.abort();
  t.equal(await daily, 0, 'an aborted cleanup stops waiting and deletes nothing');
  t.equal(pruneJob(core, first.job.id)?.state, 'running', 'while the prune still runs');

  await s.stop();
  stopped = true;
  const job = pruneJob(core, first.job.id);
  t.equal(job?.state, 'stopped', 'stopped with the service');
  t.ok(job!.deleted > 0 && job!.deleted < 3000, `part deleted (${job?.deleted}), and counted`);
  t.ok(job?.finished_at);
});

t.test('two cleanups of one process run one after the other', async (t) => {
  const s = await startService();
  t.teardown(() => s.stop());
  const core = s.service.core;
  await seed(core, s.admin.id, 400, '2020-01-01T00:00:00.000Z');
  await seed(core, s.admin.id, 400, '2020-02-01T00:00:00.000Z');
  const order: string[] = [];
  const a = applyRetention(core, undefined, { before: new Date('2020-01-15'), onProgress: () => order.push('a') });
  const b = applyRetention(core, undefined, { before: new Date('2020-03-01'), onProgress: () => order.push('b') });
  t.same(await Promise.all([a, b]), [400, 400], 'each deleted its own');
  t.ok(order.length > 2, `batches: ${order.join('')}`);
  t.equal(order.join(''), order.join('').split('').sort().join(''), 'every batch of the first before the second');
  const done = await settle(core, startPrune(core, new Date('2020-03-01')).job.id);
  t.match(done, { state: 'done', deleted: 0, kept_unfinished: 0 });
});
