/**
 * The built service (issue 27, goal 1): `npm run build:server` bundles the core into a few tens of files, and
 * `npm start` runs the launcher of that build. This test builds into a directory of its own beside core/dist,
 * marks the build older than its sources (so the launcher rebuilds it first, as after an edit), boots it the way
 * `npm start` does with every first-party plugin and the assistant configured, and checks, through the loader hook
 * bench:module-cost uses (scripts/bench/lib/load-tracker.ts): ready, far fewer modules than the same boot from
 * source, one typebox (the plugins get the build's own, never node_modules/typebox), every first-party plugin from
 * its built file and none of its sources, the first-use libraries not loaded, the model client loading from the
 * build with the first reply, and a built plugin at work (a webhook source created and its webhook accepted). Every
 * file of the build is ASCII.
 */

import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
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
import { testDatabaseUrl } from '../helpers/service.ts';

const ROOT = new URL('../..', import.meta.url).pathname;
const TRACKER = pathToFileURL(path.join(ROOT, 'scripts/bench/lib/load-tracker.ts')).href;
const FIRST_USE = ['openai', 'undici', 'pdfkit', 'unpdf', 'smtp-server', 'pino-pretty'];

async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

function loadedUrls(file: string): string[] {
  if (!fs.existsSync(file)) return [];
  return fs
    .readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { url?: string })
    .flatMap((r) => (r.url ? [r.url] : []));
}

const packagesOf = (urls: string[]) =>
  new Set(urls.flatMap((u) => /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(u)?.[1] ?? []));

interface Booted {
  base: string;
  child: ChildProcess;
  stderr: () => string;
  /** The module URLs loaded so far (the hook writes them on SIGUSR2). */
  loaded(): Promise<string[]>;
  stop(): Promise<void>;
}

async function boot(entry: string, dir: string, env: Record<string, string>): Promise<Booted> {
  const track = path.join(dir, `${path.basename(entry)}.jsonl`);
  const port = await freePort();
  const child = spawn(process.execPath, [...SERVICE_NODE_FLAGS, `--import=${TRACKER}`, entry], {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'pipe'],
    env: {
      PATH: process.env.PATH,
      SERVICE_SECRET_KEY: crypto.randomBytes(32).toString('hex'),
      SERVICE_DATA_DIR: fs.mkdtempSync(path.join(dir, 'data-')),
      SERVICE_PORT: String(port),
      SERVICE_HOST: '127.0.0.1',
      SERVICE_OUTBOUND_ALLOW_CIDRS: '127.0.0.0/8',
      SERVICE_LOG_FORMAT: 'json',
      SERVICE_LOG_LEVEL: 'WARNING',
      HERALD_BCRYPT_COST: '4',
      HERALD_LOAD_TRACK: track,
      ...env,
    },
  });
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => {
    stderr = (stderr + c.toString('utf8')).slice(-8000);
  });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const base = `http://127.0.0.1:${port}`;
  const end = Date.now() + 90_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${entry} exited: ${stderr}`);
    const ready = await fetch(`${base}/api/ready`).then(
      (r) => r.json() as Promise<{ ready?: boolean }>,
      () => undefined,
    );
    if (ready?.ready === true) break;
    if (Date.now() > end) throw new Error(`${entry} not ready after 90 s: ${stderr}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    base,
    child,
    stderr: () => stderr,
    async loaded() {
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
      return loadedUrls(track);
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        await exited;
      }
    },
  };
}

t.test('the built service boots as npm start runs it, with far fewer modules and one typebox', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-bundle-'));
  // Beside core/dist (so that its external packages resolve from the repository's node_modules), not in it.
  const out = path.join(ROOT, `core/dist.test-${process.pid}`);
  const ai = await startFakeOpenAI({ apiKey: 'test-key' });
  const running: Booted[] = [];
  t.teardown(async () => {
    for (const b of running) await b.stop();
    await ai.close();
    fs.rmSync(out, { recursive: true, force: true });
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const built = spawnSync(process.execPath, ['scripts/build/server.ts', '--out', out], { cwd: ROOT, encoding: 'utf8' });
  t.equal(built.status, 0, `npm run build:server's build: ${built.stderr}`);
  const info = JSON.parse(fs.readFileSync(path.join(out, 'build.json'), 'utf8')) as { inputs: string[] };
  t.ok(info.inputs.includes('core/src/run.ts'), 'build.json lists the sources it was built from');
  // V8 holds a module's source text two bytes a character for the whole file when one character is not ASCII.
  const wide = fs
    .readdirSync(out, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.js') && /[^\0-\x7f]/.test(fs.readFileSync(path.join(out, f), 'utf8')));
  t.same(wide, [], 'every file of the build is ASCII (its source text held one byte a character)');
  // Older than every source: the launcher must rebuild before it starts.
  fs.writeFileSync(path.join(out, 'build.json'), JSON.stringify({ ...info, builtAt: 0 }));

  // SERVICE_PLUGINS unset: every first-party plugin, as a default install runs. Each boot has a database of its own
  // (on PostgreSQL; on SQLite its own data directory), as it has a secret key of its own.
  const env = { AI_BASE_URL: ai.baseUrl, AI_API_KEY: 'test-key' };
  const database = async (): Promise<Record<string, string>> => {
    const url = await testDatabaseUrl();
    return url ? { SERVICE_DATABASE_URL: url } : {};
  };
  const service = await boot(path.join(out, 'main.js'), dir, { ...env, ...(await database()) });
  running.push(service);
  t.match(service.stderr(), /is newer than the built service; rebuilding it/, 'a stale build is rebuilt first');
  t.ok(
    (JSON.parse(fs.readFileSync(path.join(out, 'build.json'), 'utf8')) as { builtAt: number }).builtAt > 0,
    'and the rebuilt one is current',
  );
  const health = await fetch(`${service.base}/api/health`);
  t.equal(health.status, 200, '/api/health answers');

  const atBoot = await service.loaded();
  const outUrl = pathToFileURL(out).href;
  const fromBuild = atBoot.filter((u) => u.startsWith(`${outUrl}/`));
  t.ok(
    fromBuild.some((u) => u.endsWith('/service.js')),
    'the service ran from the build',
  );
  t.notOk(
    atBoot.some((u) => u.includes('/core/src/') && u.endsWith('.ts')),
    'no core source module loaded (its files are read beside the sources, not imported)',
  );
  const packages = packagesOf(atBoot);
  t.notOk(packages.has('typebox'), "node_modules/typebox not loaded: the plugins share the build's own");
  t.notOk(packages.has('@herald/plugin-api'), 'nor the plugin contract');
  // The first-party plugins are built with the core and import its chunks; the shared entries are for the others.
  t.notOk(
    fromBuild.some((u) => u.endsWith('/shared-plugin-api.js')),
    "with first-party plugins only, the build's entry of the contract for other plugins is not loaded",
  );
  // Every first-party plugin from its one built file (plugins/<dir>/index.js), none from its sources.
  const rebuilt = JSON.parse(fs.readFileSync(path.join(out, 'build.json'), 'utf8')) as {
    plugins: Record<string, { file: string }>;
    inputs: string[];
  };
  t.same(Object.keys(rebuilt.plugins).sort(), [...FIRST_PARTY_PLUGINS].sort(), 'every first-party plugin is built');
  t.same(
    Object.values(rebuilt.plugins)
      .map((p) => p.file)
      .filter((f) => !fromBuild.includes(`${outUrl}/${f}`)),
    [],
    "every first-party plugin loaded from the build's file for it",
  );
  t.ok(
    rebuilt.inputs.includes('plugins/provider-webhook/src/index.ts') &&
      rebuilt.inputs.includes('plugins/provider-webhook/package.json'),
    "the plugins' sources are inputs of the freshness check",
  );
  t.same(
    atBoot.filter((u) => /\/plugins\/[^/]+\/(src|locales)\//.test(u)),
    [],
    'no module of a first-party plugin loaded from its sources',
  );
  t.same(
    FIRST_USE.filter((p) => packages.has(p)),
    [],
    'no first-use library loaded at boot',
  );

  // What a plugin imports, through the launcher's hook: the build's one copy of typebox and of the contract.
  // A file beside a built plugin's own (a throwaway build): what its lazy `import('mqtt')` would find.
  fs.writeFileSync(
    path.join(out, 'plugins/target-mqtt/resolve-probe.js'),
    "export const mqtt = import.meta.resolve('mqtt');\n",
  );
  const probe = `
    const { installSharedResolve } = await import(${JSON.stringify(`${outUrl}/hook.js`)});
    installSharedResolve(${JSON.stringify(`${outUrl}/`)});
    const typebox = await import('typebox');
    const value = await import('typebox/value');
    const api = await import('@herald/plugin-api');
    const service = await import(${JSON.stringify(`${outUrl}/shared-typebox.js`)});
    const plugin = await import('@herald/provider-webhook');
    const { mqtt } = await import(${JSON.stringify(`${outUrl}/plugins/target-mqtt/resolve-probe.js`)});
    process.stdout.write(JSON.stringify({
      typebox: import.meta.resolve('typebox'),
      plugin: import.meta.resolve('@herald/provider-webhook'),
      kind: plugin.default.manifest.id,
      mqtt: mqtt.startsWith(${JSON.stringify(pathToFileURL(path.join(ROOT, 'node_modules/mqtt/')).href)}),
      same: typebox.default === api.Type && typebox.Type === service.Type && typeof value.Value?.Check === 'function',
    }));
  `;
  const probed = spawnSync(process.execPath, ['--input-type=module', '-e', probe], { cwd: ROOT, encoding: 'utf8' });
  t.equal(probed.status, 0, probed.stderr);
  t.same(
    JSON.parse(probed.stdout),
    {
      typebox: `${outUrl}/shared-typebox.js`,
      plugin: `${outUrl}/plugins/provider-webhook/index.js`,
      kind: 'webhook',
      mqtt: true,
      same: true,
    },
    "a plugin's typebox and contract are the build's own, one copy; a first-party plugin's name is its built file",
  );
  // The built plugins import the core's chunks (its one typebox and contract), Node's modules, and their own
  // libraries by name, lazily (resolved from the plugin's package by the hook): nothing of a package statically.
  const statics = fs
    .readdirSync(path.join(out, 'plugins'), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.js'))
    .flatMap((f) =>
      [
        ...fs
          .readFileSync(path.join(out, 'plugins', f), 'utf8')
          .matchAll(/(?:^|[;}\s])(?:import|export)\b[^;(]*?from\s*"([^"]+)"/g),
      ]
        .map((m) => m[1]!)
        .filter((spec) => !spec.startsWith('.') && !spec.startsWith('node:'))
        .map((spec) => `${f}: ${spec}`),
    );
  t.same(statics, [], "no built plugin imports a package statically (typebox and the contract are the build's own)");

  // The same boot from source, for the count.
  const source = await boot(path.join(ROOT, 'core/src/main.ts'), dir, { ...env, ...(await database()) });
  running.push(source);
  const fromSource = await source.loaded();
  await source.stop();
  t.ok(packagesOf(fromSource).has('typebox'), 'from source, typebox loads from node_modules');
  t.ok(
    atBoot.length * 2 < fromSource.length,
    `far fewer modules from the build: ${atBoot.length} against ${fromSource.length} from source`,
  );

  // First use from the build: a reply from the model loads its client.
  const setup = await fetch(`${service.base}/api/setup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'bundle@example.test', password: 'bundle password 123' }),
  });
  t.equal(setup.status, 201, 'administrator created');
  const token = ((await setup.json()) as { access_token: string }).access_token;
  const auth = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const chat = await fetch(`${service.base}/api/v1/chats/`, {
    method: 'POST',
    headers: auth,
    body: JSON.stringify({ title: 'Bundle' }),
  });
  t.equal(chat.status, 201);
  const chatId = ((await chat.json()) as { id: string }).id;
  const reply = await fetch(`${service.base}/api/v1/chats/${chatId}/messages`, {
    method: 'POST',
    headers: auth,
    body: JSON.stringify({ content: 'Hello' }),
  });
  t.equal(reply.status, 200);
  t.match(await reply.text(), /event: done/, 'the reply streamed to its end');
  t.ok(packagesOf(await service.loaded()).has('openai'), 'the model client loaded with the first reply');

  // A built plugin at work: a source of a first-party kind created through the API, and its webhook accepted.
  const created = await fetch(`${service.base}/api/providers`, {
    method: 'POST',
    headers: auth,
    body: JSON.stringify({
      kind: 'webhook',
      name: 'Bundle hook',
      config: { mapping: { title: 'title', body: 'body' }, secret: 'bundle-secret-0123' },
      auth_mode: 'bearer',
    }),
  });
  t.equal(created.status, 201, 'a provider of a first-party kind is created');
  const hook = new URL(((await created.json()) as { webhook_url: string }).webhook_url).pathname;
  const post = (secret: string) =>
    fetch(`${service.base}${hook}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({ title: 'Built', body: 'From the bundle' }),
    });
  t.equal((await post('bundle-secret-0123')).status, 202, 'its webhook is accepted');
  t.equal((await post('wrong-secret-00000')).status, 401, 'and refused with a wrong secret');
  await service.stop();

  // The dispatch thread, started from its own entry of the build (behind the same resolve hook).
  const threaded = await boot(path.join(out, 'main.js'), dir, {
    ...env,
    ...(await database()),
    SERVICE_DISPATCH_THREAD: 'true',
  });
  running.push(threaded);
  // A thread that cannot start logs its error and is started again within a second; ready waits for none of that.
  await new Promise((r) => setTimeout(r, 2000));
  t.notMatch(threaded.stderr(), /dispatch thread exited|Cannot find module/, 'the dispatch thread starts and runs');
});
