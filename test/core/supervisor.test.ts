import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { freePort } from '../helpers/peers.ts';

const root = new URL('../..', import.meta.url).pathname;

async function ready(url: string): Promise<{ id: string }> {
  const end = Date.now() + 20_000;
  while (Date.now() < end) {
    try {
      const r = await fetch(`${url}/api/ready`);
      if (r.status === 200) return (await r.json()).replica;
    } catch {
      /* not yet */
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('not ready');
}

t.test('npm run start:supervised restarts a crashed service and stops with it', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-sup-'));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const sup = spawn(process.execPath, ['scripts/supervise.ts'], {
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
    },
  });
  let stderr = '';
  sup.stderr.on('data', (c) => {
    stderr += c;
  });
  t.teardown(() => {
    sup.kill('SIGKILL');
    fs.rmSync(dir, { recursive: true, force: true });
  });
  const first = await ready(url);
  const pid = Number(first.id.split('-')[0]);
  process.kill(pid, 'SIGKILL');
  const second = await ready(url);
  t.not(second.id, first.id, 'a new process serves after the crash');
  t.match(stderr, /starting it again/);
  sup.kill('SIGTERM');
  const code = await new Promise((r) => sup.on('exit', r));
  t.equal(code, 0, 'the supervisor stops with the service');
});
