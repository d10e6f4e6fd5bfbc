import { PassThrough } from 'node:stream';
import t from 'tap';
import { waitFor } from '../../../test/helpers/peers.ts';
import { createLogger } from '../logging/logger.ts';
import { type GcFunction, idleDelayFromEnv, MemoryReducer, obtainGc } from './memory-reducer.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * What must happen is waited for (up to 5 s), not slept for: a loaded machine (the suite runs three files at a time on
 * two cores) delays timers by tens of ms. What must not happen is checked with the idle delay hundreds of ms longer
 * than the sleep before it, for the same reason.
 */
const eventually = (what: string, done: () => boolean) => waitFor(what, done, 5_000);

function harness(o: { idleMs: number; minIntervalMs?: number; minSlackBytes?: number }) {
  const lines: any[] = [];
  const sink = new PassThrough();
  sink.on('data', (c: Buffer) => {
    for (const l of c.toString('utf8').split('\n').filter(Boolean)) lines.push(JSON.parse(l));
  });
  const log = createLogger({ format: 'json', level: 'debug', destination: sink }).get('memory');
  const calls: Parameters<GcFunction>[0][] = [];
  const gc: GcFunction = (opts) => {
    calls.push(opts);
  };
  const reducer = new MemoryReducer({
    log,
    gc,
    idleMs: o.idleMs,
    minIntervalMs: o.minIntervalMs ?? 0,
    minSlackBytes: o.minSlackBytes ?? -1,
    maxUtilization: 0.5,
  });
  return { reducer, calls, lines };
}

t.test('collects once per idle period, with the memory-reducing flavour, and logs before and after', async (t) => {
  const { reducer, calls, lines } = harness({ idleMs: 400 });
  reducer.start();
  t.teardown(() => reducer.stop());
  t.ok(await eventually('a collection', () => calls.length > 0), 'collected after an idle period');
  await sleep(300);
  t.equal(calls.length, 1, 'one collection for one idle period');
  t.same(calls[0], { type: 'major', execution: 'sync', flavor: 'last-resort' });
  const line = lines.find((l) => l.msg === 'reduced memory after idling');
  t.ok(line, 'the run is logged');
  t.equal(line.level, 'debug');
  for (const k of ['rss_before_mb', 'rss_after_mb', 'heap_total_before_mb', 'heap_total_after_mb'])
    t.type(line[k], 'number', k);

  reducer.noteActivity();
  await sleep(80);
  t.equal(calls.length, 1, 'activity starts a new idle period, not a collection');
  t.ok(await eventually('a second collection', () => calls.length === 2), 'the next idle period collects again');
});

t.test('requests keep the reducer waiting; the minimum interval and the slack threshold hold', async (t) => {
  const busy = harness({ idleMs: 500 });
  busy.reducer.start();
  t.teardown(() => busy.reducer.stop());
  for (let i = 0; i < 24; i++) {
    busy.reducer.noteActivity();
    await sleep(50);
  }
  t.equal(busy.calls.length, 0, 'no collection while requests keep arriving');
  t.ok(await eventually('a collection', () => busy.calls.length > 0), 'collected once the requests stopped');
  t.equal(busy.calls.length, 1);

  const spaced = harness({ idleMs: 100, minIntervalMs: 60_000 });
  spaced.reducer.start();
  t.teardown(() => spaced.reducer.stop());
  await sleep(350);
  spaced.reducer.noteActivity();
  await sleep(400);
  t.equal(spaced.calls.length, 1, 'a second idle period within the minimum interval does not collect');

  const tight = harness({ idleMs: 100, minSlackBytes: 1024 ** 4 });
  tight.reducer.start();
  t.teardown(() => tight.reducer.stop());
  await sleep(400);
  t.equal(tight.calls.length, 0, 'nothing to give back, no collection');
});

t.test('a busy event loop is not idle even without requests', async (t) => {
  const { reducer, calls } = harness({ idleMs: 200 });
  reducer.start();
  t.teardown(() => reducer.stop());
  // ~80 % utilisation for 700 ms: each turn spins 40 ms and yields 10 ms.
  const until = Date.now() + 700;
  while (Date.now() < until) {
    const spin = Date.now() + 40;
    while (Date.now() < spin) {
      /* busy */
    }
    await sleep(10);
  }
  t.equal(calls.length, 0, 'no collection while the loop is busy');
  t.ok(await eventually('a collection', () => calls.length > 0), 'collected after the loop went quiet');
  t.equal(calls.length, 1);
});

t.test('stop() ends the checks; a refused gc disables the reducer without throwing', async (t) => {
  const { reducer, calls } = harness({ idleMs: 100 });
  reducer.start();
  reducer.stop();
  await sleep(300);
  t.equal(calls.length, 0);

  const lines: any[] = [];
  const sink = new PassThrough();
  sink.on('data', (c: Buffer) =>
    lines.push(
      ...c
        .toString('utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l)),
    ),
  );
  const log = createLogger({ format: 'json', level: 'debug', destination: sink }).get('memory');
  const failing = new MemoryReducer({
    log,
    idleMs: 100,
    minSlackBytes: -1,
    maxUtilization: 0.5,
    gc: () => {
      throw new Error('no');
    },
  });
  failing.start();
  t.teardown(() => failing.stop());
  await sleep(400);
  t.equal(failing.runs, 0);
  t.ok(lines.some((l) => l.msg === 'memory reducer collection failed; disabling it'));
});

t.test('V8 hands out its collector; the idle delay comes from HERALD_MEMORY_REDUCER_IDLE_MS', async (t) => {
  const gc = obtainGc();
  t.type(gc, 'function', 'obtained without --expose-gc');
  t.doesNotThrow(() => gc!({ type: 'major', execution: 'sync', flavor: 'last-resort' }));
  t.equal(idleDelayFromEnv({}), 5_000);
  t.equal(idleDelayFromEnv({ HERALD_MEMORY_REDUCER_IDLE_MS: '750' }), 750);
  t.equal(idleDelayFromEnv({ HERALD_MEMORY_REDUCER_IDLE_MS: 'off' }), undefined);
  t.equal(idleDelayFromEnv({ HERALD_MEMORY_REDUCER_IDLE_MS: '0' }), undefined);
});
