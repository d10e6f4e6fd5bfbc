import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { detectSupervised } from '../../core/src/lifecycle/supervised.ts';
import { waitFor } from '../helpers/wait.ts';

const root = new URL('../..', import.meta.url).pathname;

async function waitReady(url: string, ms = 20_000) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    try {
      const r = await fetch(`${url}/api/ready`);
      if (r.status === 200) return;
    } catch {
      /* not yet */
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('service did not become ready');
}

t.test('SIGTERM lets an in-flight request finish, then exits 0', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-life-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const port = 20000 + Math.floor(Math.random() * 20000);
  const child = spawn(process.execPath, ['core/src/main.ts'], {
    cwd: root,
    stdio: ['ignore', 'ignore', 'pipe'],
    env: {
      PATH: process.env.PATH,
      NODE_COMPILE_CACHE: process.env.NODE_COMPILE_CACHE,
      SERVICE_SECRET_KEY: crypto.randomBytes(32).toString('hex'),
      SERVICE_DATA_DIR: dir,
      SERVICE_PORT: String(port),
      SERVICE_HOST: '127.0.0.1',
      SERVICE_PLUGINS: '@herald/provider-bridge-self',
      SERVICE_LOG_FORMAT: 'json',
      SERVICE_LOG_LEVEL: 'DEBUG',
      SERVICE_GRACEFUL_SHUTDOWN_SECONDS: '10',
      HERALD_BCRYPT_COST: '12',
    },
  });
  let stderr = '';
  child.stderr.on('data', (c) => {
    stderr += c;
  });
  const url = `http://127.0.0.1:${port}`;
  await waitReady(url);
  // bcrypt at cost 12 keeps this request busy while the signal arrives
  const inflight = fetch(`${url}/api/setup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'a@example.test', password: 'long enough password' }),
  });
  // The signal is sent once the service has the request (its DEBUG line), not a fixed 30 ms after it was sent: on a
  // loaded machine the signal could come first, and the request never be in flight.
  await waitFor('the setup request to reach the service', () =>
    stderr.split('\n').some((l) => l.includes('"incoming request"') && l.includes('/api/setup')),
  );
  child.kill('SIGTERM');
  const res = await inflight;
  t.equal(res.status, 201, 'in-flight request completed');
  const code = await new Promise<number | null>((r) => child.on('exit', (c) => r(c)));
  t.equal(code, 0, 'exit 0');
  t.match(stderr, /shutting down/);
  t.match(stderr, /"msg":"stopped"/);
});

t.test('supervised detection', async (t) => {
  t.same(detectSupervised(true, {}), { supervised: true, by: 'SERVICE_SUPERVISED' });
  t.same(detectSupervised(false, { INVOCATION_ID: 'x' }), { supervised: false, by: 'SERVICE_SUPERVISED' });
  t.equal(detectSupervised(undefined, { INVOCATION_ID: 'abc' }).by, 'systemd');
  t.equal(detectSupervised(undefined, { HERALD_SUPERVISOR: '1' }).supervised, true);
  t.equal(detectSupervised(undefined, {}).supervised, false);
});
