/**
 * The README's start, as a new operator runs it: `npm start` with a secret key and a data
 * directory, then `/` in Chromium shows the first-run setup form (the client built at install by
 * the root `prepare` script), not a "not built" notice. A client route reloads into the app too.
 */
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { freePort } from '../helpers/peers.ts';
import { ensureBuilt, openBrowser } from './browser.ts';
import { ROOT } from './sources.ts';

ensureBuilt();

t.test('the root package builds the web client at install', async (t) => {
  const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
  t.match(pkg.scripts.prepare, /build:web/, 'npm ci runs prepare, which builds the client');
  t.ok(
    fs.existsSync(path.join(ROOT, 'core/web/dist/index.html')),
    'the built client is where the service serves it from',
  );
});

t.test('npm start serves the setup form at /', async (t) => {
  const port = await freePort();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-start-'));
  const npm = path.join(path.dirname(process.execPath), 'npm');
  const child = spawn(fs.existsSync(npm) ? npm : 'npm', ['start', '--silent'], {
    cwd: ROOT,
    env: {
      PATH: `${path.dirname(process.execPath)}:${process.env.PATH}`,
      HOME: process.env.HOME ?? dataDir,
      SERVICE_SECRET_KEY: crypto.randomBytes(32).toString('hex'),
      SERVICE_DATA_DIR: dataDir,
      SERVICE_HOST: '127.0.0.1',
      SERVICE_PORT: String(port),
      SERVICE_LOG_LEVEL: 'WARNING',
    },
    stdio: ['ignore', 'ignore', 'pipe'],
    detached: true,
  });
  let stderr = '';
  child.stderr.on('data', (d) => {
    stderr += d;
  });
  const b = await openBrowser();
  t.teardown(async () => {
    await b.close();
    try {
      process.kill(-child.pid!, 'SIGTERM');
    } catch {
      /* already gone */
    }
    await new Promise((r) => {
      if (child.exitCode !== null) r(null);
      else child.once('exit', r);
    });
    fs.rmSync(dataDir, { recursive: true, force: true });
  });
  const base = `http://127.0.0.1:${port}`;
  const end = Date.now() + 60_000;
  for (;;) {
    const ok = await fetch(`${base}/api/ready`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) break;
    if (child.exitCode !== null || Date.now() > end) throw new Error(`npm start did not become ready: ${stderr}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  const root = await fetch(base);
  t.match(root.headers.get('content-type'), /text\/html/, '/ answers the client, not a notice');
  await b.page.goto(base);
  await b.page.getByRole('heading', { name: 'Welcome to Herald' }).waitFor({ timeout: 15_000 });
  t.ok(await b.page.getByLabel('Administrator email').isVisible(), 'the setup form is shown');
  await b.page.goto(`${base}/events`);
  await b.page.getByRole('heading', { name: 'Welcome to Herald' }).waitFor({ timeout: 15_000 });
  t.pass('a deep link loads the app, which asks for setup first');
  t.same(b.problems, [], 'no console errors');
});
