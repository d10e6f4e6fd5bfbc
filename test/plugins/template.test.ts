/**
 * The plugin author's path, end to end, as a newcomer walks it with only the README, the guide and
 * the template: in an empty directory outside the repository, the template's files; the contract
 * from the tarball `npm run plugin-api:pack` makes (never from the registry, where it is not);
 * `npm install` (Node 24 pinned by the template's own `node` dev dependency); type-check, build and
 * the template's own tests; `npm pack`; `npm run plugin:install` into a plugin directory; a service
 * with the plugin enabled by name, which polls a status endpoint and delivers the change in English
 * and in Russian.
 *
 * npm prefers its cache (what the repository's own install filled), so the test needs the registry
 * only for what is not cached yet.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { startService, startSink, TEST_PLUGINS } from '../helpers/service.ts';

const repo = fileURLToPath(new URL('../..', import.meta.url));
const template = path.join(repo, 'examples/plugin-template');
// A newcomer's shell: their PATH (whatever Node it has), no test runner loaders, no npm run context of ours.
const clean = Object.fromEntries(
  Object.entries(process.env).filter(([k]) => k !== 'NODE_OPTIONS' && !/^(TAP|_TAPJS|npm_|INIT_CWD)/i.test(k)),
);
const env = {
  ...clean,
  npm_config_update_notifier: 'false',
  npm_config_fund: 'false',
  npm_config_audit: 'false',
  npm_config_prefer_offline: 'true',
};

function run(cmd: string, args: string[], cwd: string, extra: Record<string, string> = {}): string {
  // Through env(1): tap's process tracker puts its loader back into every child's NODE_OPTIONS.
  const r = spawnSync('env', ['-u', 'NODE_OPTIONS', cmd, ...args], {
    cwd,
    env: { ...env, ...extra },
    encoding: 'utf8',
    timeout: 300_000,
  });
  if (r.status !== 0)
    throw new Error(`${cmd} ${args.join(' ')} failed in ${cwd} (${r.status ?? r.signal}):\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

const tarList = (tgz: string) => run('tar', ['-tzf', tgz], path.dirname(tgz)).trim().split('\n').sort();
/** Unpacks a tarball into a fresh directory and returns it (files under `package/`). */
function unpack(tgz: string, into: string): string {
  fs.mkdirSync(into, { recursive: true });
  run('tar', ['-xzf', tgz, '-C', into], into);
  return into;
}

// npm install brings Node 24 into the project (the template pins it as Herald does): some 190 MB
// to unpack, most of this test's time.
t.setTimeout(300_000);

t.test(
  'template → tests → pack → plugin:install → enabled → delivers, from an empty directory outside the repository',
  async (t) => {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-author-'));
    t.teardown(() => fs.rmSync(tmp, { recursive: true, force: true }));
    t.notOk(
      fs.realpathSync(tmp).startsWith(fs.realpathSync(repo)),
      'outside the repository: no node_modules of Herald above it',
    );

    // The newcomer copies the template (the files of the repository, nothing built or installed).
    const proj = path.join(tmp, 'herald-provider-example');
    fs.cpSync(template, proj, { recursive: true, filter: (src) => !/[\\/](node_modules|dist|vendor)$/.test(src) });

    // The contract, packed by Herald's script into the project's vendor/, where the template's devDependencies point.
    const contractVersion = JSON.parse(fs.readFileSync(path.join(repo, 'packages/plugin-api/package.json'), 'utf8'))
      .version as string;
    const tgz = run('npm', ['run', '--silent', 'plugin-api:pack', '--', path.join(proj, 'vendor')], repo)
      .trim()
      .split('\n')
      .pop()!;
    t.equal(tgz, path.join(proj, 'vendor', `herald-plugin-api-${contractVersion}.tgz`), 'a versioned tarball');
    const templatePkg = JSON.parse(fs.readFileSync(path.join(proj, 'package.json'), 'utf8'));
    t.equal(
      templatePkg.devDependencies['@herald/plugin-api'],
      `file:vendor/herald-plugin-api-${contractVersion}.tgz`,
      'the template points at the tarball of this version',
    );
    t.match(templatePkg.devDependencies.node, /^\^24\./, 'Node 24 pinned as Herald pins it');
    t.equal(templatePkg.engines.node, '>=24');

    // The tarball as the registry would have it: JavaScript, declarations, README, a clean package.json.
    const files = tarList(tgz);
    t.ok(
      files.includes('package/README.md') &&
        files.includes('package/dist/index.js') &&
        files.includes('package/dist/index.d.ts') &&
        files.includes('package/dist/testing.d.ts'),
      'README, JavaScript and declarations',
    );
    t.same(
      files.filter((f) => !/^package\/(README\.md|package\.json|dist\/[a-z-]+\.(js|d\.ts))$/.test(f)),
      [],
      'nothing else (no sources, no tests)',
    );
    const contract = unpack(tgz, path.join(tmp, 'contract'));
    const published = JSON.parse(fs.readFileSync(path.join(contract, 'package/package.json'), 'utf8'));
    t.same(
      published.exports,
      {
        '.': { types: './dist/index.d.ts', default: './dist/index.js' },
        './testing': { types: './dist/testing.d.ts', default: './dist/testing.js' },
        './package.json': './package.json',
      },
      'exports name only what is in the tarball',
    );
    t.notOk(published.scripts || published.devDependencies, 'no build scripts or dev dependencies of the repository');
    t.equal(published.types, './dist/index.d.ts');
    for (const f of files.filter((x) => x.endsWith('.js') || x.endsWith('.d.ts') || x.endsWith('.json'))) {
      t.notMatch(
        fs.readFileSync(path.join(contract, f), 'utf8'),
        new RegExp(`${repo.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}|herald-source`),
        `${f} carries nothing of the checkout it was made in`,
      );
    }

    // npm install: the contract from vendor/, Node 24 into the project, TypeScript and Node's types.
    run('npm', ['install'], proj);
    const lock = JSON.parse(fs.readFileSync(path.join(proj, 'package-lock.json'), 'utf8'));
    t.equal(
      lock.packages['node_modules/@herald/plugin-api'].resolved,
      `file:vendor/herald-plugin-api-${contractVersion}.tgz`,
      'the contract came from the tarball, not a registry',
    );
    t.notOk(
      fs.existsSync(path.join(proj, 'node_modules/@herald/plugin-api/src')),
      'installed as built JavaScript only',
    );
    t.match(
      run(path.join(proj, 'node_modules/.bin/node'), ['--version'], proj),
      /^v24\./,
      'the project runs its own Node 24',
    );

    run('npm', ['run', 'typecheck'], proj);
    t.pass('npm run typecheck');
    t.match(run('npm', ['test'], proj), /ℹ pass [1-9]\d*\s+ℹ fail 0/, 'npm test passes, the plugin validator included');

    // npm pack (its prepack is npm run build), then npm run plugin:install in Herald, into the plugin directory of a
    // data directory.
    const pluginTgz = path.join(proj, run('npm', ['pack', '--json'], proj).match(/"filename":\s*"([^"]+)"/)![1]!);
    t.ok(
      fs.existsSync(path.join(proj, 'dist/index.js')) && fs.existsSync(path.join(proj, 'dist/index.d.ts')),
      'the build emitted JavaScript and declarations',
    );
    t.notOk(fs.existsSync(path.join(proj, 'dist/index.test.js')), 'tests stay out of the build');
    t.same(
      tarList(pluginTgz).filter(
        (f) => !/^package\/(dist\/index\.(js|d\.ts)|locales\/(en|ru)\.json|package\.json|README\.md)$/.test(f),
      ),
      [],
      'the plugin tarball holds the build, the locale files, package.json and the README',
    );
    const dataDir = path.join(tmp, 'data');
    const pluginDir = path.join(dataDir, 'plugins');
    const installed = run('npm', ['run', '--silent', 'plugin:install', '--', pluginTgz], repo, {
      SERVICE_DATA_DIR: dataDir,
    });
    t.match(installed, `Installed herald-provider-example@1.0.0 (provider) in ${pluginDir}.`);
    t.match(installed, 'Enable it: add herald-provider-example to SERVICE_PLUGINS');
    t.notMatch(installed, /warning/, 'no validator warning');

    // Enabled by name; the service finds it in the plugin directory.
    let components = [{ id: 'db', name: 'Database', status: 'operational' }];
    const status = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ components }));
    });
    await new Promise<void>((r) => status.listen(0, '127.0.0.1', r));
    t.teardown(() => new Promise<void>((r) => status.close(() => r())));
    const sink = await startSink();
    t.teardown(() => sink.close());
    fs.mkdirSync(path.join(dataDir, 'db'), { recursive: true });
    const s = await startService(
      { SERVICE_PLUGINS: `${TEST_PLUGINS},herald-provider-example`, SERVICE_PLUGIN_DIR: pluginDir },
      { dataDir: path.join(dataDir, 'db') },
    );
    t.teardown(() => s.stop());
    const token = s.admin.token;

    const ru = (await s.request('GET', '/api/plugins?locale=ru', { token })).body.plugins.find(
      (p: { id: string; kind: string }) => p.id === 'example_status' && p.kind === 'provider',
    );
    t.equal(ru?.display_name, 'Пример: страница статуса', 'enabled, named in Russian');
    const prov = await s.request('POST', '/api/providers', {
      token,
      body: {
        kind: 'example_status',
        name: 'Status page',
        config: { url: `http://127.0.0.1:${(status.address() as AddressInfo).port}/status.json` },
      },
    });
    t.equal(prov.status, 201, prov.text);
    t.equal(prov.body.status, 'running', prov.body.status_detail ?? '');
    const tracker = (
      await s.request('POST', '/api/trackers', { token, body: { provider_id: prov.body.id, name: 'Everything' } })
    ).body;
    for (const locale of ['en', 'ru']) {
      const tg = await s.request('POST', '/api/targets', {
        token,
        body: { kind: 'recorder', name: `Sink ${locale}`, config: { url: sink.url }, locale },
      });
      t.equal(
        (await s.request('PUT', `/api/trackers/${tracker.id}/targets/${tg.body.id}`, { token })).status < 300,
        true,
      );
    }
    await s.service.core.plugins.pollOnce(prov.body.id);
    components = [{ id: 'db', name: 'Database', status: 'outage' }];
    await s.service.core.plugins.pollOnce(prov.body.id);
    const got = (await sink.waitFor(2, 15_000)).map((r) => r.body);
    t.same(
      got
        .map((m: { locale: string; title: string; body: string }) => [m.locale, m.title, m.body.split(' http')[0]])
        .sort(),
      [
        ['en', 'Database: outage', 'Database went from operational to outage.'],
        ['ru', 'Database: outage', 'Database: было operational, стало outage.'],
      ],
      'the change, delivered in English and in Russian',
    );
  },
);
