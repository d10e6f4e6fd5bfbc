import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import t, { type Test } from 'tap';
import { createService } from '../../core/src/app.ts';
import { loadConfig } from '../../core/src/config/config.ts';
import { CRASH_EXIT_CODE } from '../../core/src/lifecycle/process-errors.ts';
import { detectSupervised } from '../../core/src/lifecycle/supervised.ts';
import { freePort } from '../helpers/peers.ts';
import { exited, startHeraldProcess, untilReady } from '../helpers/process.ts';
import { waitFor } from '../helpers/wait.ts';

const STRAY = new URL('../fixtures/process-errors/stray.ts', import.meta.url).pathname;

/** A service process of its own (bridge_self only) in a folder of its own, killed and removed after the test. */
async function startOne(t: Test, o: { key?: string; env?: Record<string, string>; nodeArgs?: string[] } = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-life-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const svc = startHeraldProcess({
    dir,
    port: await freePort(),
    key: o.key ?? crypto.randomBytes(32).toString('hex'),
    plugins: '@herald/provider-bridge-self',
    env: o.env,
    nodeArgs: o.nodeArgs,
  });
  t.teardown(() => svc.child.kill('SIGKILL'));
  return svc;
}

t.test('SIGTERM lets an in-flight request finish, then exits 0', async (t) => {
  const {
    child,
    base: url,
    stderr,
  } = await startOne(t, {
    env: { SERVICE_LOG_LEVEL: 'DEBUG', SERVICE_GRACEFUL_SHUTDOWN_SECONDS: '10', HERALD_BCRYPT_COST: '12' },
  });
  await untilReady(url, 'the first start');
  // bcrypt at cost 12 keeps this request busy while the signal arrives
  const inflight = fetch(`${url}/api/setup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'a@example.test', password: 'long enough password' }),
  });
  // The signal is sent once the service has the request (its DEBUG line), not a fixed 30 ms after it was sent: on a
  // loaded machine the signal could come first, and the request never be in flight.
  await waitFor('the setup request to reach the service', () =>
    stderr()
      .split('\n')
      .some((l) => l.includes('"incoming request"') && l.includes('/api/setup')),
  );
  child.kill('SIGTERM');
  const res = await inflight;
  t.equal(res.status, 201, 'in-flight request completed');
  const code = await exited(child);
  t.equal(code, 0, 'exit 0');
  t.match(stderr(), /shutting down/);
  t.match(stderr(), /"msg":"stopped"/);
});

t.test('SIGHUP (the terminal gone) stops the service gracefully too, exit 0', async (t) => {
  const { child, base, stderr } = await startOne(t);
  await untilReady(base, 'the start');
  await waitFor('the start to end', () => stderr().includes('"msg":"listening"'));
  child.kill('SIGHUP');
  t.equal(await exited(child), 0, 'exit 0');
  t.equal(child.signalCode, null, 'not ended by the signal itself');
  t.match(stderr(), /"msg":"stopped"/, 'the graceful stop ran to its end');
});

t.test('supervised detection', async (t) => {
  t.same(detectSupervised(true, {}), { supervised: true, by: 'SERVICE_SUPERVISED' });
  t.same(detectSupervised(false, { INVOCATION_ID: 'x' }), { supervised: false, by: 'SERVICE_SUPERVISED' });
  t.equal(detectSupervised(undefined, { INVOCATION_ID: 'abc' }).by, 'systemd');
  t.equal(detectSupervised(undefined, { HERALD_SUPERVISOR: '1' }).supervised, true);
  t.equal(detectSupervised(undefined, {}).supervised, false);
});

// A signal at any point of the start ends in the graceful stop and exit 0. Before run.ts installed its handlers
// ahead of the start, a SIGTERM before the end of `listen()` ended the process by the signal's default action.
for (const [when, line] of [
  ['while the service is built (migrations, plugins)', '"msg":"booting"'],
  ['after the port is bound, while jobs and features start', '"msg":"Server listening at'],
] as const)
  t.test(`a SIGTERM ${when} stops the service gracefully, exit 0`, async (t) => {
    const { child, stderr } = await startOne(t, { env: { SERVICE_LOG_LEVEL: 'DEBUG' } });
    await waitFor(`the line ${line}`, () => stderr().includes(line));
    child.kill('SIGTERM');
    const code = await exited(child);
    t.equal(child.signalCode, null, 'not ended by the signal itself');
    t.equal(code, 0, 'exit 0');
    t.match(stderr(), /"msg":"stopped"/, 'the graceful stop ran to its end');
    t.notMatch(stderr(), /failed to start|shutdown failed/);
    // Whatever the start had begun was stopped after it: nothing is logged as started once the stop began.
    const afterStop = stderr().slice(stderr().indexOf('"msg":"shutting down"'));
    t.notMatch(afterStop, /"msg":"listening"|leads the scheduler/, 'no part of the start after the stop began');
  });

t.test('stop() called while listen() still starts waits for that start, then stops all of it', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-life-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const config = loadConfig({
    SERVICE_SECRET_KEY: crypto.randomBytes(32).toString('hex'),
    SERVICE_DATA_DIR: dir,
    SERVICE_PORT: '0',
    SERVICE_HOST: '127.0.0.1',
    SERVICE_PLUGINS: '@herald/provider-bridge-self',
    SERVICE_LOG_LEVEL: 'ERROR',
  });
  const service = await createService(config, { logDestination: new PassThrough() });
  const listening = service.listen();
  const stopped = service.stop();
  const url = await listening;
  await stopped;
  t.match(url, /^http:\/\/127\.0\.0\.1:\d+$/, 'the start that was under way ended');
  t.equal(service.app.server.listening, false, 'the server does not listen after the stop');
  t.equal(service.core.jobs.status().detail, 'scheduler not started', 'the jobs it started were stopped');
  await t.rejects(service.listen(), /stopping/, 'a stopped service does not listen again');
});

t.test('a listen() that could not bind the port may be called again once the port is free', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-life-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const taken = net.createServer();
  await new Promise<void>((r) => taken.listen(0, '127.0.0.1', r));
  const port = (taken.address() as net.AddressInfo).port;
  const config = loadConfig({
    SERVICE_SECRET_KEY: crypto.randomBytes(32).toString('hex'),
    SERVICE_DATA_DIR: dir,
    SERVICE_PORT: String(port),
    SERVICE_HOST: '127.0.0.1',
    SERVICE_PLUGINS: '@herald/provider-bridge-self',
    SERVICE_LOG_LEVEL: 'ERROR',
  });
  const service = await createService(config, { logDestination: new PassThrough() });
  t.teardown(() => service.stop());
  await t.rejects(service.listen(), { code: 'EADDRINUSE' }, 'the port is taken');
  t.equal(service.core.jobs.status().detail, 'scheduler not started', 'nothing started after the failed bind');
  await new Promise<void>((r) => taken.close(() => r()));
  t.equal(await service.listen(), `http://127.0.0.1:${port}`, 'the second listen() binds the freed port');
  t.equal(service.core.lifecycle, 'running');
  t.equal(service.listen(), service.listen(), 'a started service answers every later listen() with its one start');
});

// An error nothing handled goes through the service's logger, secrets masked, instead of Node's raw trace (which
// printed the key below). A stray rejection leaves the service running; an uncaught exception ends it with exit 70.
const STRAYS = {
  rejection: { msg: 'unhandled promise rejection', level: 'error', goesOn: true },
  exception: { msg: 'uncaught exception', level: 'fatal', goesOn: false },
  warning: { msg: 'Node warning', level: 'warn', goesOn: true },
} as const;
for (const [kind, expect] of Object.entries(STRAYS))
  t.test(`a stray ${kind} is logged through the service's logger with its secrets masked`, async (t) => {
    const key = crypto.randomBytes(32).toString('hex');
    const { child, base, stderr } = await startOne(t, {
      key,
      env: { STRAY_ERROR: kind },
      nodeArgs: ['--import', STRAY],
    });
    await waitFor(`the ${kind}'s log line`, () => stderr().includes(expect.msg) || child.exitCode !== null);
    const line = stderr()
      .split('\n')
      .find((l) => l.includes(expect.msg));
    t.ok(line, `a log line for the ${kind}`);
    const entry = JSON.parse(line ?? '{}');
    t.equal(entry.level, expect.level);
    t.match(
      (entry.err ?? entry.warning)?.message,
      /stray failure \(key \[REDACTED\]\)/,
      `the ${kind}'s message, its secret masked`,
    );
    if (expect.goesOn) {
      t.ok(await untilReady(base, `the service after the ${kind}`), 'the service goes on');
      child.kill('SIGTERM');
      t.equal(await exited(child), 0, 'and stops gracefully when told');
    } else
      t.equal(await exited(child), CRASH_EXIT_CODE, 'the process exits 70 (EX_SOFTWARE), not the 1 of a refused start');
    t.notOk(stderr().includes(key), 'the key is nowhere in what the process wrote');
    t.notMatch(stderr(), /^\(node:\d+\)/m, "no line of Node's own");
  });
