/**
 * The service's process puts V8's helper threads behind its main thread (core/src/health/gc-threads.ts): at a nice
 * value DEFAULT_NICE above its own by default, HERALD_GC_THREADS_NICE above it when set, not at all with `off`; a
 * value out of range refuses the start with one readable line.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';
import { DEFAULT_NICE, threadNices, V8_WORKER } from '../../core/src/health/gc-threads.ts';
import { freePort } from '../helpers/peers.ts';
import { exited, startHeraldProcess, untilReady } from '../helpers/process.ts';
import { testDatabaseUrl } from '../helpers/service.ts';

/** Starts the service with `env` in a data directory of its own; it is killed on teardown if still running. */
async function start(t: Test, env: Record<string, string>) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-gc-threads-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const svc = startHeraldProcess({
    dir,
    port: await freePort(),
    key: crypto.randomBytes(32).toString('hex'),
    databaseUrl: await testDatabaseUrl(dir),
    plugins: '@herald/provider-bridge-self',
    env,
  });
  t.teardown(() => {
    if (svc.child.exitCode === null) svc.child.kill('SIGKILL');
  });
  return svc;
}

/** Starts the service with `env`, waits until it is ready, returns its threads' nice values and stops it. */
async function threadsOfService(t: Test, env: Record<string, string>) {
  const svc = await start(t, env);
  await untilReady(svc.base, 'the service');
  const threads = threadNices(svc.child.pid!);
  // Killed, not stopped: its stop is not what is tested here (test/core/lifecycle.test.ts tests it).
  svc.child.kill('SIGKILL');
  await exited(svc.child);
  return threads;
}

const base = os.getPriority();

t.test('by default the helper threads run at a higher nice value than the rest', async (t) => {
  const threads = await threadsOfService(t, {});
  const helpers = threads.filter((th) => th.comm === V8_WORKER);
  t.ok(helpers.length > 0, `the service has ${V8_WORKER} threads`);
  const want = Math.min(19, base + DEFAULT_NICE);
  t.ok(
    helpers.every((th) => th.nice === want),
    `all at nice ${want} (${helpers.map((th) => th.nice).join(', ')})`,
  );
  const others = threads.filter((th) => th.comm !== V8_WORKER);
  t.ok(
    others.every((th) => th.nice === base),
    `the main thread and the others at ${base} (${others.map((th) => `${th.comm} ${th.nice}`).join(', ')})`,
  );
});

t.test('HERALD_GC_THREADS_NICE sets it, off leaves every thread as it was', async (t) => {
  const want = Math.min(19, base + 11);
  const set = await threadsOfService(t, { HERALD_GC_THREADS_NICE: '11' });
  t.ok(
    set.filter((th) => th.comm === V8_WORKER).every((th) => th.nice === want),
    `the helpers at ${want}`,
  );
  const off = await threadsOfService(t, { HERALD_GC_THREADS_NICE: 'off' });
  t.ok(
    off.every((th) => th.nice === base),
    `off: every thread at ${base} (${off.map((th) => `${th.comm} ${th.nice}`).join(', ')})`,
  );
});

t.test('a value out of range refuses the start', async (t) => {
  const svc = await start(t, { HERALD_GC_THREADS_NICE: '25' });
  t.equal(await exited(svc.child), 1, 'exit code 1');
  t.match(svc.stderr(), /refusing to start: HERALD_GC_THREADS_NICE must be a number from 1 to 19, or off/);
});
