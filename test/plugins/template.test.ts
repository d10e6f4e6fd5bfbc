/**
 * The plugin template works the way a newcomer uses it: copied out of the repository, with the
 * contract package installed from its packed tarball, it type-checks, builds to JavaScript, passes
 * its own tests, packs, and the packed plugin loads by its package name as the core loads it.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import t from 'tap';

const repo = fileURLToPath(new URL('../..', import.meta.url));
const repoModules = path.join(repo, 'node_modules');
// npm and the scripts it runs use the Node that runs this test (the repository's Node 24), without
// the test runner's loaders: a newcomer's shell has none.
const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== 'NODE_OPTIONS' && !/^(TAP|_TAPJS|npm_|INIT_CWD)/i.test(k)));
const env = { ...clean, PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ''}`, npm_config_update_notifier: 'false', npm_config_fund: 'false', npm_config_audit: 'false' };

function run(cmd: string, args: string[], cwd: string): string {
  // Through env(1): tap's process tracker puts its loader back into every child's NODE_OPTIONS.
  const r = spawnSync('env', ['-u', 'NODE_OPTIONS', cmd, ...args], { cwd, env, encoding: 'utf8', timeout: 120_000 });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed in ${path.basename(cwd)} (${r.status ?? r.signal}):\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

const copy = (from: string, to: string) => fs.cpSync(from, to, { recursive: true, filter: (src) => !/[\\/](node_modules|dist)$/.test(src) });

/** `npm install <tarball>` without the network: unpack it, and link the dependencies the repository already has. */
function installTarball(tgz: string, into: string): void {
  fs.mkdirSync(into, { recursive: true });
  run('tar', ['-xzf', tgz, '-C', into, '--strip-components=1'], path.dirname(tgz));
}
function linkFromRepo(modules: string, name: string): void {
  const dest = path.join(modules, name);
  fs.mkdirSync(path.dirname(dest), { recursive: true });
  fs.symlinkSync(path.join(repoModules, name), dest, 'dir');
}
function pack(dir: string, dest: string): string {
  const out = run('npm', ['pack', '--json', '--pack-destination', dest], dir);
  const info = JSON.parse(out.slice(out.indexOf('['))) as { filename: string; files: { path: string }[] }[];
  return path.join(dest, info[0]!.filename);
}

t.test('the template plugin type-checks, builds, passes its tests and loads once packed', async (t) => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-template-'));
  t.teardown(() => fs.rmSync(tmp, { recursive: true, force: true }));

  // The contract as published: a copy of the package, built and packed by its own scripts.
  const api = path.join(tmp, 'plugin-api');
  copy(path.join(repo, 'packages/plugin-api'), api);
  fs.symlinkSync(repoModules, path.join(api, 'node_modules'), 'dir');
  const apiTgz = pack(api, tmp);

  // The newcomer's copy of the template, with the contract installed from the tarball.
  const proj = path.join(tmp, 'herald-provider-example');
  copy(path.join(repo, 'examples/plugin-template'), proj);
  const modules = path.join(proj, 'node_modules');
  installTarball(apiTgz, path.join(modules, '@herald/plugin-api'));
  for (const dep of ['typebox', 'typescript', '@types/node']) linkFromRepo(modules, dep);
  fs.mkdirSync(path.join(modules, '.bin'));
  fs.symlinkSync('../typescript/bin/tsc', path.join(modules, '.bin/tsc'));
  t.notOk(fs.existsSync(path.join(modules, '@herald/plugin-api/src')), 'the contract is installed as built JavaScript only');

  run('npm', ['run', 'typecheck'], proj);
  t.pass('npm run typecheck');
  run('npm', ['run', 'build'], proj);
  t.ok(fs.existsSync(path.join(proj, 'dist/index.js')) && fs.existsSync(path.join(proj, 'dist/index.d.ts')), 'npm run build emits JavaScript and declarations');
  t.notOk(fs.existsSync(path.join(proj, 'dist/index.test.js')), 'tests stay out of the build');
  const tested = run('npm', ['test'], proj);
  t.match(tested, /ℹ pass [1-9]\d*\s+ℹ fail 0/, 'npm test passes');

  // Packed, installed next to the contract, and loaded by its package name.
  const pluginTgz = pack(proj, tmp);
  const app = path.join(tmp, 'app');
  installTarball(pluginTgz, path.join(app, 'node_modules/herald-provider-example'));
  installTarball(apiTgz, path.join(app, 'node_modules/@herald/plugin-api'));
  linkFromRepo(path.join(app, 'node_modules'), 'typebox');
  const installed = path.join(app, 'node_modules/herald-provider-example');
  t.same(fs.readdirSync(installed).sort(), ['dist', 'locales', 'package.json'].concat(fs.existsSync(path.join(installed, 'README.md')) ? ['README.md'] : []).sort(),
    'the tarball holds the build, the locale files and the manifest');
  fs.writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
  fs.writeFileSync(path.join(app, 'load.mjs'), `
    import { wrapDefinition } from ${JSON.stringify(pathToFileURL(path.join(repo, 'core/src/plugins/loader.ts')).href)};
    const mod = await import('herald-provider-example');
    const p = wrapDefinition('herald-provider-example', mod.default);
    const ok = p.validateConfig({ url: 'https://status.example.net/status.json' });
    console.log(JSON.stringify({ id: p.id, kind: p.kind, secretPaths: p.secretPaths, defaults: ok.ok && ok.value, ru: mod.default.manifest.locales?.ru?.displayName }));
  `);
  const loaded = JSON.parse(run(process.execPath, ['load.mjs'], app).trim().split('\n').pop()!);
  t.same(loaded, {
    id: 'example_status', kind: 'provider', secretPaths: ['api_key'],
    defaults: { url: 'https://status.example.net/status.json', poll_interval_seconds: 120 },
    ru: 'Пример: страница статуса',
  }, 'the core accepts the packed plugin');
});
