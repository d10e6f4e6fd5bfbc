/**
 * The plugin directory (SERVICE_PLUGIN_DIR): plugins installed there from a tarball or a directory
 * with installPlugin (what `npm run plugin:install` runs), listed and removed, found by the loader
 * by package name, importing the service's own contract through a link; what is not a loadable
 * Herald plugin is refused and rolled back; Herald's own package.json is never touched.
 */
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { loadConfig } from '../../core/src/config/config.ts';
import { loadPlugins, PluginLoadError } from '../../core/src/plugins/loader.ts';
import {
  installPlugin,
  listPlugins,
  PluginDirError,
  removePlugin,
  serviceContractDir,
} from '../../core/src/plugins/plugin-dir.ts';

const repo = fileURLToPath(new URL('../..', import.meta.url));
// npm without the test runner's loaders, and never the network: every package here is a local tarball.
const env = {
  ...Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== 'NODE_OPTIONS' && !/^(TAP|_TAPJS)/.test(k))),
  npm_config_offline: 'true',
  npm_config_update_notifier: 'false',
};
const hash = (f: string) => crypto.createHash('sha256').update(fs.readFileSync(f)).digest('hex');

/** A plugin package in a directory outside the repository: it finds the contract only through the plugin directory. */
function source(
  root: string,
  name: string,
  o: { version?: string; herald?: object | null; body?: string } = {},
): string {
  const dir = path.join(root, `${name}-${o.version ?? '1.0.0'}`);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(
    path.join(dir, 'package.json'),
    JSON.stringify({
      name,
      version: o.version ?? '1.0.0',
      type: 'module',
      exports: './index.js',
      description: `${name} (tests)`,
      ...(o.herald === null ? {} : { herald: o.herald ?? { apiVersion: 1, kind: 'target' } }),
      peerDependencies: { '@herald/plugin-api': '^1.0.0' },
    }),
  );
  fs.writeFileSync(
    path.join(dir, 'index.js'),
    `import { defineTarget, Type, PermanentSendError } from '@herald/plugin-api';
export const contractError = PermanentSendError;
export default defineTarget({
  manifest: { id: 'dir_probe', kind: 'target', apiVersion: 1, displayName: 'Probe', description: 'Probe.',
    configSchema: Type.Object({ ${o.body ?? 'room: Type.String()'} }),
    limits: { maxMessageLength: 100, formats: ['text'] },
    locales: { en: { displayName: 'Probe', description: 'Probe.', config: { room: { label: 'Room' } } }, ru: ` +
      `{ displayName: 'Проба', description: 'Проба.', config: { room: { label: 'Комната' } } } } },
  create: () => ({ async send() {} }),
});
`,
  );
  return dir;
}

t.test('install, list, load and remove plugins in the plugin directory', async (t) => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-plugin-dir-'));
  t.teardown(() => fs.rmSync(root, { recursive: true, force: true }));
  const dir = path.join(root, 'data', 'plugins');
  const heraldPackage = hash(path.join(repo, 'package.json'));
  const heraldLock = hash(path.join(repo, 'package-lock.json'));

  t.equal(
    loadConfig({
      SERVICE_SECRET_KEY: crypto.randomBytes(32).toString('hex'),
      SERVICE_DATA_DIR: path.join(root, 'data'),
    }).pluginDir,
    dir,
    'SERVICE_PLUGIN_DIR defaults to <data dir>/plugins',
  );
  t.equal(
    loadConfig({
      SERVICE_SECRET_KEY: crypto.randomBytes(32).toString('hex'),
      SERVICE_DATA_DIR: root,
      SERVICE_PLUGIN_DIR: '/srv/herald-plugins',
    }).pluginDir,
    '/srv/herald-plugins',
  );
  t.same(listPlugins(dir), [], 'no directory yet: no plugins');

  // From a directory: packed (as a publish would), kept as a tarball in the plugin directory, installed.
  const installed = await installPlugin(dir, source(root, 'herald-target-dir-probe'), { env });
  t.match(installed, {
    name: 'herald-target-dir-probe',
    version: '1.0.0',
    kind: 'target',
    apiVersion: 1,
    installed: true,
    spec: 'file:packages/herald-target-dir-probe-1.0.0.tgz',
    warnings: [],
  });
  t.same(
    JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')).dependencies,
    { 'herald-target-dir-probe': 'file:packages/herald-target-dir-probe-1.0.0.tgz' },
    "the directory's own package.json records it",
  );
  t.same(
    fs.readdirSync(path.join(dir, 'packages')),
    ['herald-target-dir-probe-1.0.0.tgz'],
    'the tarball stays, so a later install can rebuild the tree',
  );
  t.equal(
    fs.realpathSync(path.join(dir, 'node_modules/@herald/plugin-api')),
    serviceContractDir(),
    "the contract is a link to the service's own",
  );
  t.same(
    listPlugins(dir).map((p) => [p.name, p.version, p.kind, p.installed]),
    [['herald-target-dir-probe', '1.0.0', 'target', true]],
  );

  // The loader finds it by name there; it imports the service's contract (one copy of the error classes).
  const err = (await loadPlugins(['herald-target-dir-probe']).then(
    () => undefined,
    (e: unknown) => e,
  )) as Error;
  t.type(err, PluginLoadError, 'without the plugin directory the name is unknown');
  const [loaded] = await loadPlugins(['herald-target-dir-probe'], { pluginDir: dir });
  t.equal(loaded!.id, 'dir_probe');
  const mod = (await import(path.join(dir, 'node_modules/herald-target-dir-probe/index.js'))) as {
    contractError: unknown;
  };
  t.equal(
    mod.contractError,
    (await import('@herald/plugin-api')).PermanentSendError,
    'the plugin and the service share one contract',
  );
  const missing = (await loadPlugins(['herald-target-nowhere'], { pluginDir: dir }).then(
    () => undefined,
    (e: unknown) => e,
  )) as Error;
  t.equal(
    missing.message,
    `Plugin package "herald-target-nowhere" is not installed: it is neither in the plugin directory (${dir}) nor ` +
      `in the service's node_modules. Install it (npm run plugin:install -- herald-target-nowhere, or npm run ` +
      'plugin:install -- ./herald-target-nowhere-<version>.tgz) or remove it from SERVICE_PLUGINS.',
  );

  // A newer version from a tarball replaces the older one and its tarball.
  const packed = spawnSync('npm', ['pack', '--pack-destination', root], {
    cwd: source(root, 'herald-target-dir-probe', { version: '1.0.1' }),
    env,
    encoding: 'utf8',
  });
  t.equal(packed.status, 0, packed.stderr);
  const upgraded = await installPlugin(dir, path.join(root, 'herald-target-dir-probe-1.0.1.tgz'), { env });
  t.equal(upgraded.version, '1.0.1');
  t.same(fs.readdirSync(path.join(dir, 'packages')), ['herald-target-dir-probe-1.0.1.tgz']);

  // Not a Herald plugin, or one the core would refuse: not installed, nothing left behind.
  const notPlugin = (await installPlugin(dir, source(root, 'left-pad-lookalike', { herald: null }), { env }).then(
    () => undefined,
    (e: unknown) => e,
  )) as Error;
  t.type(notPlugin, PluginDirError);
  t.equal(
    notPlugin.message,
    '"left-pad-lookalike" is not a Herald plugin: its package.json has no "herald" block. It was not installed.',
  );
  const refused = (await installPlugin(dir, source(root, 'herald-target-bigint', { body: 'size: Type.BigInt()' }), {
    env,
  }).then(
    () => undefined,
    (e: unknown) => e,
  )) as Error;
  t.match(
    refused.message,
    new RegExp(
      /^Plugin package "herald-target-bigint" \(id "dir_probe"\) cannot be loaded: The config field "size" /s.source +
        /is Type\.BigInt.* It was not installed\.$/s.source,
      's',
    ),
  );
  t.same(
    listPlugins(dir).map((p) => p.name),
    ['herald-target-dir-probe'],
    'only the real plugin is listed',
  );
  t.same(
    fs.readdirSync(path.join(dir, 'packages')),
    ['herald-target-dir-probe-1.0.1.tgz'],
    'no tarball of a refused package stays',
  );
  const nowhere = (await installPlugin(dir, path.join(root, 'nothing-here.tgz'), { env }).then(
    () => undefined,
    (e: unknown) => e,
  )) as Error;
  t.equal(nowhere.message, `There is no file or directory "${path.join(root, 'nothing-here.tgz')}" to install.`);

  // The npm script an operator runs lists what is there.
  const list = spawnSync('npm', ['run', '--silent', 'plugin:list'], {
    cwd: repo,
    env: { ...env, SERVICE_PLUGIN_DIR: dir, SERVICE_PLUGINS: 'herald-target-dir-probe' },
    encoding: 'utf8',
  });
  t.equal(list.status, 0, list.stderr);
  t.match(list.stdout, `Plugins in ${dir}:\n  herald-target-dir-probe@1.0.1  target  (enabled in SERVICE_PLUGINS)`);

  const removed = await removePlugin(dir, 'herald-target-dir-probe', { env });
  t.equal(removed.version, '1.0.1');
  t.same(listPlugins(dir), []);
  t.same(fs.readdirSync(path.join(dir, 'packages')), [], 'its tarball went with it');
  const again = (await removePlugin(dir, 'herald-target-dir-probe', { env }).then(
    () => undefined,
    (e: unknown) => e,
  )) as Error;
  t.equal(
    again.message,
    `"herald-target-dir-probe" is not installed in the plugin directory ${dir} (it holds no plugin).`,
  );

  t.equal(hash(path.join(repo, 'package.json')), heraldPackage, "Herald's package.json is untouched");
  t.equal(hash(path.join(repo, 'package-lock.json')), heraldLock, 'and so is its lockfile');
});
