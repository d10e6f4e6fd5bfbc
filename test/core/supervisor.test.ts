import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';
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

/** `npm run start:supervised` on a port of its own; its standard error (the service's log lines too) in `stderr()`. */
async function startSupervisor(t: Test) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-sup-'));
  const port = await freePort();
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
  const exit = new Promise<number | null>((r) => sup.on('exit', r));
  return { sup, url: `http://127.0.0.1:${port}`, stderr: () => stderr, exit };
}

t.test('npm run start:supervised restarts a crashed service and stops with it', async (t) => {
  const { sup, url, stderr, exit } = await startSupervisor(t);
  const first = await ready(url);
  const pid = Number(first.id.split('-')[0]);
  // The service runs with npm start's environment (scripts/node-flags.ts), which the supervisor was not given.
  const environ = fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
  t.ok(environ.includes('MALLOC_ARENA_MAX=2'), "the service's malloc arenas are capped");
  process.kill(pid, 'SIGKILL');
  const second = await ready(url);
  t.not(second.id, first.id, 'a new process serves after the crash');
  t.match(stderr(), /starting it again/);
  sup.kill('SIGTERM');
  t.equal(await exit, 0, 'the supervisor stops with the service');
});

t.test(
  'SIGHUP to the supervisor (the terminal gone) stops the service gracefully and the supervisor with it',
  async (t) => {
    const { sup, url, stderr, exit } = await startSupervisor(t);
    const service = Number((await ready(url)).id.split('-')[0]);
    // Should the supervisor die without passing the signal on, its service is not left running.
    t.teardown(() => {
      try {
        // Still the service (its id could have been reused by now)?
        if (fs.readFileSync(`/proc/${service}/cmdline`, 'utf8').includes('core/dist/main.js'))
          process.kill(service, 'SIGKILL');
      } catch {
        /* gone, as it should be */
      }
    });
    sup.kill('SIGHUP');
    t.equal(await exit, 0, 'the supervisor exits 0');
    t.match(stderr(), /"msg":"stopped"/, "the service's graceful stop ran to its end");
    t.notMatch(stderr(), /starting it again/, 'and it was not started again');
  },
);
