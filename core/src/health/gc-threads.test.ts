import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { ConfigurationError } from '../config/config.ts';
import { DEFAULT_NICE, gcThreadsNiceFromEnv, lowerGcThreadPriority, threadNices, V8_WORKER } from './gc-threads.ts';

t.test('HERALD_GC_THREADS_NICE', async (t) => {
  t.equal(gcThreadsNiceFromEnv({}), DEFAULT_NICE, 'unset: the default');
  t.equal(gcThreadsNiceFromEnv({ HERALD_GC_THREADS_NICE: ' ' }), DEFAULT_NICE, 'blank: the default');
  t.equal(gcThreadsNiceFromEnv({ HERALD_GC_THREADS_NICE: 'off' }), undefined, 'off');
  t.equal(gcThreadsNiceFromEnv({ HERALD_GC_THREADS_NICE: 'OFF' }), undefined, 'OFF');
  t.equal(gcThreadsNiceFromEnv({ HERALD_GC_THREADS_NICE: '0' }), undefined, '0 is off');
  t.equal(gcThreadsNiceFromEnv({ HERALD_GC_THREADS_NICE: '1' }), 1, 'the lowest');
  t.equal(gcThreadsNiceFromEnv({ HERALD_GC_THREADS_NICE: '19' }), 19, 'the highest');
  for (const bad of ['20', '-1', '2.5', 'low', '5x']) {
    const err = (() => {
      try {
        gcThreadsNiceFromEnv({ HERALD_GC_THREADS_NICE: bad });
      } catch (e) {
        return e;
      }
    })();
    t.ok(err instanceof ConfigurationError, `"${bad}" is refused`);
    t.match((err as Error | undefined)?.message, /a number from 1 to 19, or off/, 'with a readable error');
  }
});

t.test("a process's V8 helper threads get the nice value, its other threads keep theirs", async (t) => {
  // A Node process of its own, so that the test runner's threads are left alone.
  const module = new URL('./gc-threads.ts', import.meta.url).href;
  const script = `import { lowerGcThreadPriority, threadNices } from ${JSON.stringify(module)};
    const lowered = lowerGcThreadPriority(Number(process.argv[1]));
    process.stdout.write(JSON.stringify({ lowered, threads: threadNices() }));`;
  // Relative to the nice value the tests run at (a suite may run under `nice`): only a higher one needs no privilege.
  const base = os.getPriority();
  for (const by of [5, 12]) {
    const nice = Math.min(19, base + by);
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script, String(by)], { encoding: 'utf8' });
    t.equal(r.status, 0, r.stderr);
    const { lowered, threads } = JSON.parse(r.stdout) as {
      lowered: { threads: number; nice: number; error?: string };
      threads: { comm: string; nice: number }[];
    };
    const helpers = threads.filter((th) => th.comm === V8_WORKER);
    t.ok(helpers.length > 0, `the process has ${V8_WORKER} threads`);
    t.equal(lowered.threads, helpers.length, 'each of them is counted');
    t.equal(lowered.nice, nice, `at ${by} above the main thread's nice value`);
    t.notOk(lowered.error, 'without an error');
    t.ok(
      helpers.every((th) => th.nice === nice),
      `all at nice ${nice}`,
    );
    const others = threads.filter((th) => th.comm !== V8_WORKER);
    t.ok(
      others.some((th) => th.comm === 'MainThread' || th.comm === 'node'),
      'the main thread is among the others',
    );
    t.ok(
      others.every((th) => th.nice === base),
      `the others keep nice ${base} (${others.map((th) => `${th.comm} ${th.nice}`).join(', ')})`,
    );
  }
  // This process's own threads were not touched.
  t.ok(
    threadNices(process.pid).every((th) => th.nice === base),
    "the test runner's threads are as they were",
  );
});

t.test('without /proc/self/task nothing is tried', async (t) => {
  const missing = path.join(os.tmpdir(), `herald-no-task-${process.pid}`);
  const r = lowerGcThreadPriority(5, missing);
  t.equal(r.threads, 0);
  t.ok(r.unsupported, 'reported as unsupported');
  t.match(r.error, /cannot list/);
});

t.test('a directory of threads without helpers says so', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-task-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.mkdirSync(path.join(dir, '1'));
  fs.writeFileSync(path.join(dir, '1', 'comm'), 'MainThread\n');
  const r = lowerGcThreadPriority(5, dir);
  t.equal(r.threads, 0);
  t.notOk(r.unsupported);
  t.match(r.error, new RegExp(`no thread named ${V8_WORKER}`));
});
