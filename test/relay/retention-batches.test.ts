/**
 * The retention deletes in batches (RETENTION_BATCH events a statement) so that the relay's own statements run
 * between them: every settled event past the period goes, however many, on both sides of a batch's size; the
 * events still in the period or not settled stay; and a webhook sent while a long deletion runs is accepted
 * before the deletion ends, instead of waiting for one statement over the whole log; the batches are paced (the
 * database is left idle between them), their replay keys move to the plugin store batch by batch, an abort stops
 * between two batches, and the daily job does not run again at start when it completed within the day. The pacing
 * (RetentionPacer) with fake timings: a batch sized from the slowest recent rate below the target, an overshoot
 * shrinking the next, a late event loop lengthening the pause, within bounds that always
 * leave progress; and a prune beside a busy event loop backs off and ends.
 */
import crypto from 'node:crypto';
import t from 'tap';
import type { Core } from '../../core/src/core.ts';
import { insertRow } from '../../core/src/db/rows.ts';
import { applyRetention, RETENTION_BATCH } from '../../core/src/relay/feature.ts';
import {
  BACKOFF_RECOVERY,
  BATCH_GROWTH,
  MAX_BACKOFF,
  MAX_BATCH,
  MAX_PAUSE_MS,
  MIN_BATCH,
  RATE_WINDOW,
  RETENTION_AIM_MS,
  RETENTION_BATCH_MS,
  RETENTION_JOB,
  RETENTION_LATE_MS,
  RETENTION_PAUSE_MS,
  RetentionPacer,
  retentionJob,
} from '../../core/src/relay/retention.ts';
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

  /** Copies of the first event, created `daysAgo` days ago with that status (and a replay key living `keyMs`). */
  const seed = async (n: number, daysAgo: number, status: string, keyMs?: number) => {
    const created = new Date(Date.now() - daysAgo * DAY).toISOString();
    await core.db.tx(async (tx) => {
      for (let i = 0; i < n; i++)
        await insertRow(tx, 'event_log', {
          ...template,
          id: crypto.randomUUID(),
          replay_key: keyMs === undefined ? null : `key-${i}-${keyMs}`,
          replay_expires_at: keyMs === undefined ? null : new Date(Date.now() + keyMs).toISOString(),
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
  // The retention's own statements, timed: a view of the core whose database measures what it runs.
  let busy = 0;
  // The webhook is sent as the first batch's transaction starts (a fixed 5 ms could come before it or after it, on a
  // loaded machine).
  let batchStarted!: () => void;
  const firstBatch = new Promise<void>((r) => {
    batchStarted = r;
  });
  const timed = Object.create(core) as Core;
  timed.db = Object.create(core.db);
  for (const m of ['all', 'tx', 'run'] as const) {
    const real = core.db[m].bind(core.db) as (...a: unknown[]) => Promise<unknown>;
    (timed.db as unknown as Record<string, unknown>)[m] = async (...a: unknown[]) => {
      if (m === 'tx') batchStarted();
      const at = performance.now();
      try {
        return await real(...a);
      } finally {
        busy += performance.now() - at;
      }
    };
  }
  const pruneStart = Date.now();
  const pruning = applyRetention(timed).then((n) => {
    pruneDone = Date.now();
    return n;
  });
  await Promise.race([firstBatch, pruning]);
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
  // Paced: after each batch the database is left alone twice as long as the batch held it (back to back, the
  // statements take nearly all of the deletion's time).
  t.ok(busy < 0.5 * took, `its statements took ${Math.round(busy)} ms of its ${took} ms`);

  // Replay keys still alive move to the plugin store with their events, in every batch; expired ones do not.
  const storeKeys = (suffix: string) =>
    count(
      `SELECT COUNT(*) AS n FROM plugin_store WHERE key LIKE 'key-%-${suffix}' AND instance_id = '${provider.body.id}'`,
    );
  await seed(2 * RETENTION_BATCH + 7, 3, 'dispatched', 3_600_000);
  await seed(5, 3, 'dispatched', -1000);
  t.equal(await applyRetention(core), 2 * RETENTION_BATCH + 12);
  t.equal(await storeKeys('3600000'), 2 * RETENTION_BATCH + 7, 'every live key is kept, past the first batch too');
  t.equal(await storeKeys('-1000'), 0, 'an expired key is not');

  // An abort stops the deletion between two batches: what is left goes on the next run.
  await seed(10 * RETENTION_BATCH, 3, 'dispatched');
  const ac = new AbortController();
  // Aborted once the first batch is done (a fixed 5 ms was sometimes less than the first batch on PostgreSQL).
  const part = await applyRetention(core, ac.signal, { onProgress: () => ac.abort() });
  t.ok(part > 0 && part < 10 * RETENTION_BATCH, `stopped after ${part} of ${10 * RETENTION_BATCH}`);
  t.equal(await count(old), 10 * RETENTION_BATCH - part, 'the rest is still there');
  t.equal(await applyRetention(core), 10 * RETENTION_BATCH - part, 'and goes on the next run');

  // A busy event loop (a task of 12 ms every few ms) makes the pauses end late: the prune backs off, and still ends.
  await seed(10 * RETENTION_BATCH, 3, 'dispatched');
  const pacer = new RetentionPacer();
  const seen: { backoff: number; size: number }[] = [];
  const pauseDone = pacer.pauseDone.bind(pacer);
  pacer.pauseDone = (asked, took) => {
    pauseDone(asked, took);
    seen.push({ backoff: pacer.backoff, size: pacer.size });
  };
  const hog = setInterval(() => {
    const until = performance.now() + 12;
    while (performance.now() < until);
  }, 3);
  t.equal(await applyRetention(core, undefined, { pacer }), 10 * RETENTION_BATCH, 'a late loop: all deleted');
  clearInterval(hog);
  const most = Math.max(...seen.map((s) => s.backoff));
  t.ok(most > 1, `backed off to ${most}x, batches down to ${Math.min(...seen.map((s) => s.size))} rows`);
  t.ok(
    seen.every((s) => s.backoff <= MAX_BACKOFF && s.size >= MIN_BATCH),
    'within bounds',
  );
});

t.test("a batch's size follows the slowest recent rate, below the target, within bounds", async (t) => {
  const pacer = new RetentionPacer();
  t.equal(pacer.size, RETENTION_BATCH, 'the first batch');
  // Fake timings: what each batch "took" for its rows.
  const ran = (ms: number) => {
    const rows = pacer.size;
    pacer.batchDone(rows, ms);
    return pacer.size;
  };
  t.equal(ran(RETENTION_AIM_MS), RETENTION_BATCH, 'on the aim: the same size');
  for (let i = 1; i < RATE_WINDOW; i++)
    t.equal(ran(RETENTION_AIM_MS / 10), RETENTION_BATCH, `ten times faster: the slower one still counts (${i})`);
  t.equal(ran(RETENTION_AIM_MS / 10), Math.floor(RETENTION_BATCH * BATCH_GROWTH), 'then forgotten: grows 1.5x');
  t.equal(ran(RETENTION_AIM_MS / 10), Math.floor(RETENTION_BATCH * BATCH_GROWTH ** 2), 'and 1.5x again');
  // A batch that overshot the target shrinks the next to fit the aim at its rate, at once.
  const before = pacer.size;
  const shrunk = ran(4 * RETENTION_BATCH_MS);
  t.equal(shrunk, Math.floor((RETENTION_AIM_MS * before) / (4 * RETENTION_BATCH_MS)), 'an overshoot shrinks the next');
  t.ok((shrunk * 4 * RETENTION_BATCH_MS) / before < RETENTION_BATCH_MS, 'below the target at that rate');
  t.ok(RETENTION_AIM_MS < RETENTION_BATCH_MS, 'the aim is below the target');
  t.equal(ran(RETENTION_AIM_MS / 100), shrunk, 'and stays small while that rate is among the last few');

  const bounded = new RetentionPacer();
  for (let i = 0; i < 50; i++) bounded.batchDone(bounded.size, 0);
  t.equal(bounded.size, MAX_BATCH, 'at most MAX_BATCH, and a batch timed at 0 ms does not divide by zero');
  bounded.batchDone(bounded.size, 60_000);
  t.equal(bounded.size, MIN_BATCH, 'at least MIN_BATCH: a prune always makes progress');
});

t.test('the pause is never shorter than the least pause nor than twice the batch', async (t) => {
  const pacer = new RetentionPacer();
  pacer.batchDone(100, 1);
  t.equal(pacer.pauseMs(), RETENTION_PAUSE_MS, 'a short batch: the least pause');
  pacer.batchDone(100, RETENTION_PAUSE_MS + 0.5);
  t.equal(pacer.pauseMs(), 2 * RETENTION_PAUSE_MS + 1, 'a long one: twice as long as it took');
});

t.test('a late event loop lengthens the pauses, bounded, recovering gradually', async (t) => {
  const pacer = new RetentionPacer();
  for (let i = 0; i < 10; i++) pacer.batchDone(pacer.size, RETENTION_AIM_MS / 4);
  const size = pacer.size;
  const pause = pacer.pauseMs();
  t.equal(pause, RETENTION_PAUSE_MS);
  pacer.pauseDone(pause, pause + 1);
  t.equal(pacer.backoff, 1, 'a pause a millisecond late is on time');
  pacer.pauseDone(pause, pause + RETENTION_LATE_MS + 1);
  t.equal(pacer.backoff, 2, 'a late one doubles the back-off');
  t.equal(pacer.pauseMs(), 2 * RETENTION_PAUSE_MS, 'the next pause is twice as long');
  t.equal(pacer.size, size, 'the batch is sized by its own timing alone');
  for (let i = 0; i < 10; i++) pacer.pauseDone(pacer.pauseMs(), pacer.pauseMs() + 1000);
  t.equal(pacer.backoff, MAX_BACKOFF, 'however late, at most MAX_BACKOFF');
  t.ok(pacer.pauseMs() <= MAX_PAUSE_MS, 'the pause at most MAX_PAUSE_MS');
  pacer.batchDone(pacer.size, 60_000);
  t.equal(pacer.pauseMs(), MAX_PAUSE_MS, 'even after a batch that took a minute');
  t.equal(pacer.size, MIN_BATCH, 'and a batch of MIN_BATCH rows: progress is always made');
  for (let i = 0; i < 10; i++) pacer.batchDone(pacer.size, RETENTION_AIM_MS / 4);
  pacer.pauseDone(pacer.pauseMs(), pacer.pauseMs());
  t.equal(pacer.backoff, MAX_BACKOFF * BACKOFF_RECOVERY, 'one pause on time eases it a little');
  let on = 1;
  while (pacer.backoff > 1) {
    pacer.pauseDone(pacer.pauseMs(), pacer.pauseMs());
    on++;
  }
  t.ok(on > 3, `back to 1 after ${on} pauses on time`);
  t.equal(pacer.pauseMs(), RETENTION_PAUSE_MS);
});

t.test('the daily job at start skips a cleanup completed within the day with the same period', async (t) => {
  const s = await startService({ SERVICE_EVENT_LOG_RETENTION_DAYS: '3' });
  t.teardown(() => s.stop());
  const core = s.service.core;
  let now = 0;
  /** The service's core as the job sees it, at `now` with a retention of `days`. */
  const at = (days: number) => {
    const view = Object.create(core) as Core;
    view.config = { ...core.config, eventLogRetentionDays: days };
    view.clock = { now: () => new Date(now) };
    return view;
  };
  const signal = new AbortController().signal;
  const runs = async () =>
    Number(
      (await core.db.get<{ n: number | string }>(
        `SELECT COUNT(*) AS n FROM job_runs WHERE job = ? AND outcome = 'ok'`,
        [RETENTION_JOB],
      ))!.n,
    );
  // The service's own start ran it (nothing recorded a run before).
  await core.jobs.runNow(RETENTION_JOB);
  const first = await runs();
  t.ok(first >= 1, 'the start ran the cleanup and recorded it');
  now = Date.now() + 1000;
  t.equal(await retentionJob(at(3), signal, true), undefined, 'a restart within the day skips it');
  t.equal(await runs(), first, 'and records nothing');
  t.equal(await retentionJob(at(3), signal, false), 0, 'the scheduled run at midnight runs whatever');
  t.equal(await runs(), first + 1);
  t.equal(await retentionJob(at(2), signal, true), 0, 'a changed period runs at start');
  now += 86_400_000 + 1000;
  t.equal(await retentionJob(at(3), signal, true), 0, 'a day after the last run: it runs at start');
  t.equal(await retentionJob(at(0), signal, true), 0, 'retention off: nothing to skip or record');
  t.equal(await runs(), first + 3);
  const aborted = new AbortController();
  aborted.abort();
  now += 2 * 86_400_000;
  await retentionJob(at(3), aborted.signal, true);
  t.equal(await runs(), first + 3, 'an aborted run is not recorded as done');
});
