/**
 * A plugin from outside the workspace, installed the way an operator installs one: the contract
 * package and a TypeScript target (test/fixtures/external/herald-target-external-sink, not a
 * workspace member) are built to JavaScript and packed with `npm pack`, both tarballs are
 * installed with `npm install` into a scratch copy of the service, and the real service started
 * from that copy loads the target by its package name and delivers an event through it.
 *
 * The author's build is also the check that the published declarations type-check with no DOM
 * lib (`lib: ["es2024"]`, `types: ["node"]`, `skipLibCheck: false`), `/testing` included.
 */

import { execFile, spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import t from 'tap';
import { freePort } from '../helpers/peers.ts';
import { startSink } from '../helpers/service.ts';

const run = promisify(execFile);
const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const fixture = path.join(repo, 'test/fixtures/external/herald-target-external-sink');
const tsc = path.join(repo, 'node_modules/typescript/bin/tsc');
// Children run plain Node: without the test runner's hooks (tap's process tracker puts its loader
// back into every child's NODE_OPTIONS, hence env -u), and on the installed JavaScript rather than
// the workspace sources the runner prefers (--conditions=herald-source).
const childEnv: NodeJS.ProcessEnv = {
  ...Object.fromEntries(
    Object.entries(process.env).filter(
      ([k]) => k !== 'NODE_OPTIONS' && k !== 'SERVICE_DATABASE_URL' && !/^(TAP|_TAPJS|npm_|INIT_CWD)/i.test(k),
    ),
  ),
  PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ''}`,
};
const plain = (cmd: string, args: string[], cwd: string) =>
  run('env', ['-u', 'NODE_OPTIONS', cmd, ...args], { cwd, env: childEnv, timeout: 60_000 });
const npm = (cwd: string, ...args: string[]) =>
  plain('npm', ['--no-audit', '--no-fund', '--loglevel=error', ...args], cwd);

/**
 * A scratch copy of the service: hard links (cp -al, cheap) for sources and node_modules, whose
 * workspace links are relative and so point into the copy; the files npm rewrites (package.json,
 * the lockfiles) are real copies, so nothing written there reaches the repository.
 */
async function scratchCopy(into: string): Promise<void> {
  fs.mkdirSync(path.join(into, 'test/fixtures'), { recursive: true });
  for (const entry of [
    'core',
    'packages',
    'plugins',
    'migrations',
    'locales',
    'node_modules',
    'test/fixtures/plugins',
  ]) {
    if (!fs.existsSync(path.join(repo, entry))) continue;
    if (entry !== 'core') {
      await run('cp', ['-al', path.join(repo, entry), path.join(into, path.dirname(entry))]);
      continue;
    }
    // core/ child by child, leaving out the bundle test's build (core/dist.test-<pid>), which that test, running in
    // parallel, may remove while it is being linked (CI saw cp fail on a file gone from it).
    fs.mkdirSync(path.join(into, 'core'));
    for (const child of fs.readdirSync(path.join(repo, 'core')))
      if (!child.startsWith('dist.test-'))
        await run('cp', ['-al', path.join(repo, 'core', child), path.join(into, 'core')]);
  }
  for (const f of ['package.json', 'package-lock.json', 'tsconfig.json'])
    fs.copyFileSync(path.join(repo, f), path.join(into, f));
  fs.rmSync(path.join(into, 'node_modules/.package-lock.json'), { force: true });
}

t.test(
  'a packed plugin from outside the workspace installs from its tarball and delivers through the real service',
  async (t) => {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-external-'));
    t.teardown(() => fs.rmSync(tmp, { recursive: true, force: true }));
    const scratch = path.join(tmp, 'service');
    const tarballs = path.join(tmp, 'tarballs');
    fs.mkdirSync(tarballs);
    await scratchCopy(scratch);
    t.ok(
      fs.existsSync(path.join(scratch, 'node_modules/@herald/provider-webhook/package.json')),
      'workspace links stay valid in the copy',
    );

    // 1. The contract package: built by its prepack script and packed.
    await npm(path.join(scratch, 'packages/plugin-api'), 'pack', '--pack-destination', tarballs);
    const contractVersion = JSON.parse(
      fs.readFileSync(path.join(scratch, 'packages/plugin-api/package.json'), 'utf8'),
    ).version;
    const contractTgz = path.join(tarballs, `herald-plugin-api-${contractVersion}.tgz`);
    t.ok(fs.existsSync(contractTgz), 'contract packed');

    // 2. The author's project: the contract installed from its tarball, built with tsc, packed.
    const author = path.join(tmp, 'author');
    fs.cpSync(fixture, author, {
      recursive: true,
      filter: (src) => !src.includes(`${path.sep}dist`) && !src.includes('node_modules'),
    });
    const contract = path.join(author, 'node_modules/@herald/plugin-api');
    fs.mkdirSync(contract, { recursive: true });
    await run('tar', ['-xzf', contractTgz, '-C', contract, '--strip-components=1']);
    fs.mkdirSync(path.join(author, 'node_modules/@types'), { recursive: true });
    fs.symlinkSync(path.join(repo, 'node_modules/typebox'), path.join(author, 'node_modules/typebox'));
    fs.symlinkSync(path.join(repo, 'node_modules/@types/node'), path.join(author, 'node_modules/@types/node'));
    const built = await plain(process.execPath, [tsc, '-p', author], author).then(
      () => '',
      (e: { stdout?: string; message: string }) => e.stdout || e.message,
    );
    t.equal(built, '', 'the author project type-checks against the packed declarations with no DOM lib, and builds');
    t.ok(
      fs.existsSync(path.join(author, 'dist/index.js')) && fs.existsSync(path.join(author, 'dist/index.d.ts')),
      'built to JavaScript',
    );
    await npm(author, 'pack', '--pack-destination', tarballs);
    const pluginTgz = path.join(tarballs, 'herald-target-external-sink-1.0.0.tgz');
    t.ok(fs.existsSync(pluginTgz), 'plugin packed');

    // 3. Both tarballs installed into the service's copy with npm. The copy stops carrying the
    // contract as a workspace member (npm would keep linking that), as a deployment from the
    // published packages would: the core then imports the contract the tarball installed.
    const rootPkg = JSON.parse(fs.readFileSync(path.join(scratch, 'package.json'), 'utf8'));
    rootPkg.workspaces = rootPkg.workspaces.filter((w: string) => w !== 'packages/*');
    delete rootPkg.scripts.prepare;
    fs.writeFileSync(path.join(scratch, 'package.json'), JSON.stringify(rootPkg, null, 2));
    fs.rmSync(path.join(scratch, 'packages'), { recursive: true, force: true });
    await npm(scratch, 'install', '--offline', '--no-save', '--ignore-scripts', contractTgz, pluginTgz);
    const installed = path.join(scratch, 'node_modules/herald-target-external-sink');
    t.ok(
      fs.existsSync(path.join(installed, 'dist/index.js')) && !fs.lstatSync(installed).isSymbolicLink(),
      'the plugin is a real package under node_modules',
    );
    const api = path.join(scratch, 'node_modules/@herald/plugin-api');
    t.notOk(fs.lstatSync(api).isSymbolicLink(), 'the contract comes from its tarball, not the workspace');
    t.notOk(fs.existsSync(path.join(api, 'src')), 'and ships only its built JavaScript');

    // 4. The real service from the copy, the external target named in SERVICE_PLUGINS.
    const sink = await startSink();
    t.teardown(() => sink.close());
    const port = await freePort();
    const dataDir = path.join(tmp, 'data');
    const child = spawn('env', ['-u', 'NODE_OPTIONS', process.execPath, path.join(scratch, 'core/src/main.ts')], {
      cwd: scratch,
      env: {
        ...childEnv,
        HERALD_BCRYPT_COST: '4',
        SERVICE_SECRET_KEY: crypto.randomBytes(32).toString('hex'),
        SERVICE_DATA_DIR: dataDir,
        SERVICE_HOST: '127.0.0.1',
        SERVICE_PORT: String(port),
        SERVICE_OUTBOUND_ALLOW_CIDRS: '127.0.0.0/8',
        SERVICE_LOG_FORMAT: 'json',
        SERVICE_PLUGINS: 'herald-plugin-example,herald-target-external-sink',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (c: Buffer) => {
      output += c;
    });
    child.stderr.on('data', (c: Buffer) => {
      output += c;
    });
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    t.teardown(async () => {
      child.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
      if (child.exitCode === null) child.kill('SIGKILL');
    });
    const base = `http://127.0.0.1:${port}`;
    const end = Date.now() + 30_000;
    for (;;) {
      if (child.exitCode !== null) t.fail(`the service exited: ${output}`);
      if (
        (await fetch(`${base}/api/health`).then(
          (r) => r.status,
          () => 0,
        )) === 200
      )
        break;
      if (Date.now() > end) t.fail(`the service did not become ready: ${output}`);
      if (child.exitCode !== null || Date.now() > end) return;
      await new Promise((r) => setTimeout(r, 100));
    }
    const call = async (method: string, p: string, body?: unknown, headers: Record<string, string> = {}) => {
      const r = await fetch(base + p, {
        method,
        headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await r.text();
      return { status: r.status, body: text ? JSON.parse(text) : undefined, text };
    };
    const setup = await call('POST', '/api/setup', { email: 'admin@example.test', password: 'correct horse battery' });
    t.equal(setup.status, 201, setup.text);
    const auth = { authorization: `Bearer ${setup.body.access_token}` };
    const plugins = await call('GET', '/api/plugins', undefined, auth);
    t.ok(JSON.stringify(plugins.body).includes('external_sink'), 'the external target is listed');
    const prov = await call(
      'POST',
      '/api/providers',
      { kind: 'example', name: 'Ex', config: { shared_token: 'sharedtoken1' } },
      auth,
    );
    t.equal(prov.status, 201, prov.text);
    const tr = await call('POST', '/api/trackers', { provider_id: prov.body.id, name: 'T' }, auth);
    const tg = await call(
      'POST',
      '/api/targets',
      { kind: 'external_sink', name: 'External', config: { url: sink.url }, locale: 'en' },
      auth,
    );
    t.equal(tg.status, 201, tg.text);
    t.ok(
      (await call('PUT', `/api/trackers/${tr.body.id}/targets/${tg.body.id}`, undefined, auth)).status < 300,
      'linked',
    );
    const hook = prov.body.webhook_url.replace(/^https?:\/\/[^/]+/, '');
    const r = await call(
      'POST',
      hook,
      { type: 'alarm', payload: { name: 'from outside' } },
      { 'x-example-token': 'sharedtoken1' },
    );
    t.equal(r.status, 202, r.text);
    const got = await sink.waitFor(1, 15_000);
    t.equal(got.length, 1, 'delivered through the installed plugin');
    t.equal(got[0]?.body.via, 'herald-target-external-sink');
    t.equal(got[0]?.body.eventType, 'alarm');
  },
);
