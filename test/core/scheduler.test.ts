import t from 'tap';
import { cronOfSchedule, Scheduler } from '../../core/src/jobs/scheduler.ts';
import { createLogger } from '../../core/src/logging/logger.ts';
import { waitFor } from '../helpers/peers.ts';

const log = () => createLogger({ level: 'fatal', format: 'json' }).get('jobs');

t.test(
  'text schedules read as bree read them: cron as given, every n minutes or hours, every day at midnight',
  async (t) => {
    t.equal(cronOfSchedule('0 3 * * *'), '0 3 * * *');
    t.equal(cronOfSchedule('*/5 * * * *'), '*/5 * * * *');
    t.equal(cronOfSchedule('every 1 day'), '0 0 * * *');
    t.equal(cronOfSchedule('every day'), '0 0 * * *');
    t.equal(cronOfSchedule('every 15 minutes'), '*/15 * * * *');
    t.equal(cronOfSchedule('every 1 minute'), '* * * * *');
    t.equal(cronOfSchedule('every 6 hours'), '0 */6 * * *');
    t.equal(cronOfSchedule('every 23 hours'), '0 */23 * * *');
    t.equal(cronOfSchedule('every 24 hours'), undefined, 'past the hour field');
    t.equal(cronOfSchedule('every 60 minutes'), undefined);
    t.equal(cronOfSchedule('every 0 minutes'), undefined);
    t.equal(cronOfSchedule('every 2 days'), undefined, 'not a cron step');
    t.equal(cronOfSchedule('at noon'), undefined);
  },
);

t.test(
  'a job runs on its interval in this process (no thread per tick, as bree started), never overlapping itself; ' +
    'stop ends the ticks',
  async (t) => {
    const s = new Scheduler(log());
    let runs = 0;
    let inFlight = 0;
    let overlapped = false;
    let release: () => void = () => {};
    const twice = new Promise<void>((r) => {
      release = r;
    });
    s.register('tick', {
      interval: 10,
      run: async () => {
        if (inFlight++) overlapped = true;
        runs++;
        // Slower than the interval: ticks during the run must not start a second one.
        await new Promise((r) => setTimeout(r, 35));
        inFlight--;
        if (runs >= 2) release();
      },
    });
    s.register('daily', { interval: 'every 1 day', run: async () => {} });
    await s.start();
    t.same(s.status(), { state: 'ok', leader: true });
    // Bounded: the interval is 10 ms; give up after 5 s rather than hang.
    let giveUp: NodeJS.Timeout | undefined;
    await Promise.race([
      twice,
      new Promise((r) => {
        giveUp = setTimeout(r, 5_000);
      }),
    ]);
    clearTimeout(giveUp);
    t.ok(runs >= 2, 'ran on its interval');
    t.notOk(overlapped, 'never two runs at once');
    await s.stop();
    const after = runs;
    t.same(s.status().state, 'fail', 'stopped');
    await new Promise((r) => setTimeout(r, 60));
    t.equal(runs, after, 'no tick after stop');
  },
);

t.test('runOnStart runs the job at start; a leader-only job waits on a follower', async (t) => {
  let ran = 0;
  const s = new Scheduler(log());
  s.register('boot', {
    interval: 60_000,
    runOnStart: true,
    run: async () => {
      ran++;
    },
  });
  await s.start();
  await s.runNow('boot');
  t.ok(ran >= 1, 'ran at start');
  await s.stop();

  let followerRan = 0;
  const f = new Scheduler(log(), { isLeader: () => false, start: async (cb) => cb(false), stop: async () => {} });
  f.register('leader-only', {
    interval: 60_000,
    run: async () => {
      followerRan++;
    },
  });
  f.register('anywhere', {
    interval: 60_000,
    leaderOnly: false,
    run: async () => {
      followerRan += 10;
    },
  });
  await f.start();
  await f.runNow('leader-only');
  await f.runNow('anywhere');
  t.equal(followerRan, 10);
  await f.stop();
});

t.test('a start run with a delay waits for it, and a stop before it cancels it', async (t) => {
  let ran = 0;
  const s = new Scheduler(log());
  s.register('later', {
    interval: 60_000,
    runOnStart: true,
    // Long beside the 20 ms checked before it: the suite runs three files at a time on two cores.
    startDelayMs: 300,
    run: async () => {
      ran++;
    },
  });
  await s.start();
  await new Promise((r) => setTimeout(r, 20));
  t.equal(ran, 0, 'not at start');
  await waitFor('the delayed run', () => ran > 0, 5_000);
  await new Promise((r) => setTimeout(r, 100));
  t.equal(ran, 1, 'after the delay, once');
  await s.stop();

  let stopped = 0;
  const c = new Scheduler(log());
  c.register('never', {
    interval: 60_000,
    runOnStart: true,
    startDelayMs: 300,
    run: async () => {
      stopped++;
    },
  });
  await c.start();
  await c.stop();
  await new Promise((r) => setTimeout(r, 500));
  t.equal(stopped, 0, 'a stop before the delay: no run');
});

t.test('a schedule that is not one refuses the start and readiness says why', async (t) => {
  const s = new Scheduler(log());
  s.register('odd', { interval: 'at noon', run: async () => {} });
  await t.rejects(s.start(), /job odd: "at noon" is not a schedule/);
  t.equal(s.status().state, 'fail');
  t.match(s.status().detail, /at noon/);
  const z = new Scheduler(log());
  z.register('zero', { interval: 0, run: async () => {} });
  await t.rejects(z.start(), /positive number of milliseconds/);
});

t.test('claimSlot gives a slot to one caller; finishSlot records its end and outcome', async (t) => {
  const { claimSlot, finishSlot } = await import('../../core/src/jobs/scheduler.ts');
  const { startService } = await import('../helpers/service.ts');
  const s = await startService();
  t.teardown(() => s.stop());
  const db = s.service.core.db;
  const row = (slot: string) =>
    db.get<{ replica: string; finished_at: string | null; outcome: string | null }>(
      'SELECT replica, finished_at, outcome FROM job_runs WHERE job = ? AND slot = ?',
      ['test-job', slot],
    );
  t.equal(await claimSlot(db, 'test-job', 'a', 'r1'), true, 'the first claim wins');
  t.equal(await claimSlot(db, 'test-job', 'a', 'r2'), false, 'a second claim of the same slot loses');
  t.match(await row('a'), { replica: 'r1', finished_at: null, outcome: null }, 'claimed, not finished');
  await finishSlot(db, 'test-job', 'a', 'ok', new Date('2024-05-01T00:00:00.000Z'));
  t.match(await row('a'), { finished_at: '2024-05-01T00:00:00.000Z', outcome: 'ok' }, 'finished at the time given');
  t.equal(await claimSlot(db, 'test-job', 'b', 'r1'), true);
  const before = Date.now();
  await finishSlot(db, 'test-job', 'b', 'failed');
  const b = await row('b');
  t.equal(b?.outcome, 'failed');
  t.ok(Date.parse(b!.finished_at!) >= before - 1000, 'the wall clock by default');
});
