/**
 * An idle service leaves its event loop asleep: no timer wakes it a hundred times a second (prom-client's event-loop
 * delay monitor did, at its 10 ms resolution, and was most of an idle service's CPU). libuv counts the loop's turns.
 */
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import t, { type Test } from 'tap';
import { startService } from '../helpers/service.ts';

t.test('an idle service wakes its event loop a few times a second, and still reports the loop delay', async (t) => {
  const s = await startService();
  t.teardown(() => s.stop());
  const loop = s.service.core.metrics.loopDelay;

  await idleTurns(t);

  const m = await s.request('GET', '/api/metrics');
  t.equal(m.status, 200);
  for (const suffix of ['', '_min', '_max', '_mean', '_stddev', '_p50', '_p90', '_p99']) {
    const name = `nodejs_eventloop_lag${suffix}_seconds`;
    const lines = m.text.split('\n').filter((l) => l.startsWith(`${name} `));
    t.equal(lines.length, 1, `${name}: one sample`);
    const v = Number(lines[0]?.split(' ')[1]);
    // Seconds, from the idle ticks since the start: small and finite (an empty histogram's sentinel is ~9.2e9).
    t.ok(Number.isFinite(v) && v >= 0 && v < 5, `${name} = ${v}`);
  }
  const max = Number(/^nodejs_eventloop_lag_max_seconds (\S+)$/m.exec(m.text)?.[1]);
  t.ok(max > 0, 'the idle ticks were sampled since the start');

  await s.stop();
  const ticks = loop.ticks;
  await sleep(1_500);
  t.equal(loop.ticks, ticks, 'the monitor stops with the service');
});

/** Asserts that some second, within 30, took fewer than 40 turns of the loop. */
async function idleTurns(t: Test): Promise<void> {
  // The first seconds after a start are not idle: V8 runs its memory reducer's collection steps as tasks on the loop
  // (a thousand turns or more in a second), the service its own idle collection, and each makes the loop-delay
  // monitor sample every 10 ms for a few seconds. Idle is the fewest turns in a second, within 30 seconds: a handful
  // on SQLite, about ten on PostgreSQL (the jobs' reads each take a turn or two on its socket), 84 or more at 10 ms.
  const turns = () => performance.nodeTiming.uvMetricsInfo.loopCount;
  const seconds: number[] = [];
  for (let i = 0; i < 30 && !seconds.some((n) => n < 40); i++) {
    const from = turns();
    await sleep(1_000);
    seconds.push(turns() - from);
  }
  const fewest = Math.min(...seconds);
  t.ok(
    fewest < 40,
    `at fewest ${fewest} turns of the loop in a second while idle (100+ with a 10 ms timer): ${seconds.join(', ')}`,
  );
}

t.test('with dispatch in its own thread and the wall clock, no timer shares the clock every 20 ms', async (t) => {
  // A test's clock, which the test may move or stop, is shared with the thread every 20 ms; the wall clock needs not.
  const s = await startService({ SERVICE_DISPATCH_THREAD: 'true' }, { wallClock: true });
  t.teardown(() => s.stop());
  await idleTurns(t);
});
