/**
 * What is not used is not loaded (issue 27): a plugin's manifest reads without its heavy
 * dependency, and the service boots with every first-party plugin and the assistant configured
 * without loading the libraries that only a plugin instance, a model call, a PDF or an upload needs.
 * What a process loaded is taken from a loader hook (scripts/bench/lib/load-tracker.ts, the one
 * bench:module-cost uses), which sees every `import` and `require`.
 */

import { spawn, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import t from 'tap';
import { FIRST_PARTY_PLUGINS } from '../../core/src/config/config.ts';
import { SERVICE_NODE_FLAGS } from '../../scripts/node-flags.ts';
import { startFakeOpenAI } from '../fakes/openai.ts';
import { TEST_DB, testDatabaseUrl } from '../helpers/service.ts';

const ROOT = new URL('../..', import.meta.url).pathname;
const TRACKER = pathToFileURL(path.join(ROOT, 'scripts/bench/lib/load-tracker.ts')).href;

/** The heavy dependencies of the first-party plugins: each loads when its first instance starts. */
const PLUGIN_HEAVY = ['mqtt', 'web-push', 'matrix-js-sdk', 'mailparser', 'nodemailer', 'grammy', 'ws'];
/**
 * What the service itself loads on first use only: the assistant's model client, PDFs, uploads, the SMTP listener, the
 * ORM on SQLite, pretty logs.
 */
const SERVICE_LAZY = [
  'openai',
  'pdfkit',
  'unpdf',
  'smtp-server',
  'pino-pretty',
  'undici',
  ...(TEST_DB === 'sqlite' ? ['@mikro-orm/core', '@mikro-orm/sql', 'kysely'] : []),
];

/** The npm packages among module URLs (`node_modules/<name>/` or `node_modules/@scope/<name>/`). */
function packagesOf(urls: string[]): Set<string> {
  const out = new Set<string>();
  for (const u of urls) {
    const m = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(u);
    if (m) out.add(m[1]!);
  }
  return out;
}

function readTrack(file: string): string[] {
  if (!fs.existsSync(file)) return [];
  return fs
    .readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { url?: string })
    .flatMap((r) => (r.url ? [r.url] : []));
}

t.test("every first-party plugin's manifest reads without its heavy dependency loaded", async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-lazy-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const track = path.join(dir, 'loaded.jsonl');
  const child =
    `
    const out = [];
    for (const name of ${JSON.stringify(FIRST_PARTY_PLUGINS)}) {
      const def = (await import(name)).default;
      const m = def.manifest;
      out.push({ name, id: m.id, kind: m.kind, fields: Object.keys(m.configSchema?.properties ?? {}).length, ` +
    `locales: Object.keys(m.locales ?? {}).sort() });
    }
    process.stdout.write(JSON.stringify(out));
  `;
  const r = spawnSync(
    process.execPath,
    ['--conditions=herald-source', `--import=${TRACKER}`, '--input-type=module', '-e', child],
    {
      cwd: path.join(ROOT, 'core'),
      encoding: 'utf8',
      env: { PATH: process.env.PATH, HERALD_LOAD_TRACK: track },
    },
  );
  t.equal(r.status, 0, r.stderr);
  const manifests = JSON.parse(r.stdout) as {
    name: string;
    id: string;
    kind: string;
    fields: number;
    locales: string[];
  }[];
  t.equal(manifests.length, FIRST_PARTY_PLUGINS.length, 'every plugin imported');
  for (const m of manifests) {
    t.match(m, { id: /^[a-z][a-z0-9_]*$/, kind: /^(provider|target)$/ }, `${m.name}: manifest read`);
    t.same(m.locales, ['en', 'ru'], `${m.name}: its locales attached`);
  }
  const loaded = packagesOf(readTrack(track));
  t.ok(loaded.has('typebox'), 'the hook saw the packages the plugins use');
  t.same(
    PLUGIN_HEAVY.filter((p) => loaded.has(p)),
    [],
    'no heavy dependency loaded by importing the plugins',
  );
});

async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

t.test(
  'the service boots with every first-party plugin and the assistant configured, loading none of its first-use ' +
    'libraries; the model client loads with the first reply',
  async (t) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-lazy-boot-'));
    const track = path.join(dir, 'loaded.jsonl');
    const ai = await startFakeOpenAI({ apiKey: 'test-key' });
    const port = await freePort();
    const databaseUrl = await testDatabaseUrl(dir);
    // SERVICE_PLUGINS unset: every first-party plugin, as a default install runs.
    const child = spawn(process.execPath, [...SERVICE_NODE_FLAGS, `--import=${TRACKER}`, 'core/src/main.ts'], {
      cwd: ROOT,
      stdio: ['ignore', 'ignore', 'pipe'],
      env: {
        PATH: process.env.PATH,
        SERVICE_SECRET_KEY: crypto.randomBytes(32).toString('hex'),
        SERVICE_DATA_DIR: dir,
        SERVICE_PORT: String(port),
        SERVICE_HOST: '127.0.0.1',
        SERVICE_OUTBOUND_ALLOW_CIDRS: '127.0.0.0/8',
        SERVICE_LOG_FORMAT: 'json',
        SERVICE_LOG_LEVEL: 'WARNING',
        HERALD_BCRYPT_COST: '4',
        AI_BASE_URL: ai.baseUrl,
        AI_API_KEY: 'test-key',
        HERALD_LOAD_TRACK: track,
        ...(databaseUrl ? { SERVICE_DATABASE_URL: databaseUrl } : {}),
      },
    });
    let stderr = '';
    child.stderr!.on('data', (c: Buffer) => {
      stderr = (stderr + c.toString('utf8')).slice(-4000);
    });
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    t.teardown(async () => {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await exited;
      }
      await ai.close();
      fs.rmSync(dir, { recursive: true, force: true });
    });
    const base = `http://127.0.0.1:${port}`;
    const end = Date.now() + 60_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`the service exited: ${stderr}`);
      const ready = await fetch(`${base}/api/ready`).then(
        (r) => r.json() as Promise<{ ready?: boolean }>,
        () => undefined,
      );
      if (ready?.ready === true) break;
      if (Date.now() > end) throw new Error(`not ready after 60 s: ${stderr}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    // The hook writes what was loaded so far on SIGUSR2; the file is complete once its size holds.
    const flushed = async (): Promise<Set<string>> => {
      const before = fs.existsSync(track) ? fs.statSync(track).size : 0;
      child.kill('SIGUSR2');
      for (let i = 0; i < 100; i++) {
        await new Promise((r) => setTimeout(r, 50));
        const size = fs.existsSync(track) ? fs.statSync(track).size : 0;
        if (size > before) {
          await new Promise((r) => setTimeout(r, 100));
          if (fs.statSync(track).size === size) break;
        }
      }
      return packagesOf(readTrack(track));
    };
    const atBoot = await flushed();
    t.ok(atBoot.has('fastify'), 'the hook saw the boot');
    t.same(
      SERVICE_LAZY.filter((p) => atBoot.has(p)),
      [],
      'no first-use library loaded at boot',
    );
    t.same(
      PLUGIN_HEAVY.filter((p) => atBoot.has(p)),
      [],
      "no plugin's heavy dependency loaded at boot",
    );

    // First use: a reply from the model loads its client.
    const setup = await fetch(`${base}/api/setup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'lazy@example.test', password: 'lazy password 123' }),
    });
    t.equal(setup.status, 201, 'administrator created');
    const token = ((await setup.json()) as { access_token: string }).access_token;
    const auth = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const chat = await fetch(`${base}/api/v1/chats/`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ title: 'Lazy' }),
    });
    t.equal(chat.status, 201);
    const chatId = ((await chat.json()) as { id: string }).id;
    const reply = await fetch(`${base}/api/v1/chats/${chatId}/messages`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ content: 'Hello' }),
    });
    t.equal(reply.status, 200);
    t.match(await reply.text(), /event: done/, 'the reply streamed to its end');
    t.equal(ai.calls.length >= 1, true, 'the model was called');
    const afterReply = await flushed();
    t.ok(afterReply.has('openai'), 'the model client loaded with the first reply');
    t.notOk(afterReply.has('pdfkit'), 'the PDF library still waits for the first report');
  },
);
