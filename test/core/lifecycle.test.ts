import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { detectSupervised } from '../../core/src/lifecycle/supervised.ts';
import { freePort } from '../helpers/peers.ts';
import { exited, startHeraldProcess, untilReady } from '../helpers/process.ts';
import { waitFor } from '../helpers/wait.ts';

t.test('SIGTERM lets an in-flight request finish, then exits 0', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-life-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const port = await freePort();
  const {
    child,
    base: url,
    stderr,
  } = startHeraldProcess({
    dir,
    port,
    key: crypto.randomBytes(32).toString('hex'),
    plugins: '@herald/provider-bridge-self',
    env: { SERVICE_LOG_LEVEL: 'DEBUG', SERVICE_GRACEFUL_SHUTDOWN_SECONDS: '10', HERALD_BCRYPT_COST: '12' },
  });
  t.teardown(() => child.kill('SIGKILL'));
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

t.test('supervised detection', async (t) => {
  t.same(detectSupervised(true, {}), { supervised: true, by: 'SERVICE_SUPERVISED' });
  t.same(detectSupervised(false, { INVOCATION_ID: 'x' }), { supervised: false, by: 'SERVICE_SUPERVISED' });
  t.equal(detectSupervised(undefined, { INVOCATION_ID: 'abc' }).by, 'systemd');
  t.equal(detectSupervised(undefined, { HERALD_SUPERVISOR: '1' }).supervised, true);
  t.equal(detectSupervised(undefined, {}).supervised, false);
});
