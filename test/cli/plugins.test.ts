/**
 * `herald plugin install|list|remove` on the plugin directory (SERVICE_PLUGIN_DIR, here the default
 * `<data dir>/plugins`): a plugin installed from its directory is listed, found there by doctor when
 * SERVICE_PLUGINS names it, and removed; what is no Herald plugin, or not installed, is refused with
 * the message and exit 1. npm runs offline: the only package is a local one.
 */

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { TEST_PLUGINS } from '../helpers/service.ts';
import { herald, serviceEnv } from './support.ts';

/**
 * A plugin package in a directory outside the repository (it finds the contract only through the plugin directory's
 * link).
 */
function source(root: string, name: string, herald = true): string {
  const dir = path.join(root, name);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(
    path.join(dir, 'package.json'),
    JSON.stringify({
      name,
      version: '1.2.3',
      type: 'module',
      exports: './index.js',
      description: `${name} (tests)`,
      ...(herald ? { herald: { apiVersion: 1, kind: 'target' } } : {}),
      peerDependencies: { '@herald/plugin-api': '^1.0.0' },
    }),
  );
  fs.writeFileSync(
    path.join(dir, 'index.js'),
    `import { defineTarget, Type } from '@herald/plugin-api';
export default defineTarget({
  manifest: { id: 'cli_probe', kind: 'target', apiVersion: 1, displayName: 'Probe', description: 'Probe.',
    configSchema: Type.Object({ room: Type.String() }),
    limits: { maxMessageLength: 100, formats: ['text'] },
    locales: { en: { displayName: 'Probe', description: 'Probe.', config: { room: { label: 'Room' } } }, ru: ` +
      `{ displayName: 'Проба', description: 'Проба.', config: { room: { label: 'Комната' } } } } },
  create: () => ({ async send() {} }),
});
`,
  );
  return dir;
}

t.test('plugin install, list, remove', async (t) => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-cli-plugins-'));
  t.teardown(() => fs.rmSync(root, { recursive: true, force: true }));
  const dataDir = path.join(root, 'data');
  const pluginDir = path.join(dataDir, 'plugins');
  const name = 'herald-target-cli-probe';
  const env = {
    ...(await serviceEnv(dataDir)),
    npm_config_offline: 'true',
    npm_config_update_notifier: 'false',
    SERVICE_PLUGINS: `${TEST_PLUGINS},${name}`,
  };

  const empty = await herald(['plugin', 'list'], env);
  t.equal(empty.stdout, `No plugins in ${pluginDir}.\n`);

  const installed = await herald(['plugin', 'install', source(root, name)], env);
  t.equal(installed.code, 0, installed.stderr);
  t.equal(installed.stdout, `Installed ${name}@1.2.3 (target) in ${pluginDir}.\nRestart Herald to load it.\n`);
  t.ok(fs.existsSync(path.join(pluginDir, 'node_modules', name, 'package.json')), 'in the plugin directory');

  const listed = await herald(['plugin', 'list', '--json'], env);
  t.match(JSON.parse(listed.stdout), {
    directory: pluginDir,
    plugins: [{ name, version: '1.2.3', kind: 'target', installed: true, enabled: true }],
  });
  const ru = await herald(['plugin', 'list'], { ...env, LANG: 'ru_RU.UTF-8' });
  t.match(
    ru.stdout,
    new RegExp(
      `^Плагины в ${pluginDir}:\\nПакет +Версия +Вид +Состояние\\n${name} +1\\.2\\.3 +target +включён в ` +
        `SERVICE_PLUGINS\\n$`,
    ),
  );

  const doctor = await herald(['doctor', '--json'], env);
  const checks = JSON.parse(doctor.stdout).checks as { id: string; status: string; message: string }[];
  t.match(
    checks.find((c) => c.id === `plugin:${name}`),
    { status: 'ok', message: `${name} loads (target cli_probe)` },
    'doctor finds it in the plugin directory, as the service does',
  );

  const notPlugin = await herald(['plugin', 'install', source(root, 'not-a-herald-plugin', false)], env);
  t.equal(notPlugin.code, 1);
  t.equal(
    notPlugin.stderr,
    'herald: "not-a-herald-plugin" is not a Herald plugin: its package.json has no "herald" block. It was not ' +
      'installed.\n',
  );

  const removed = await herald(['plugin', 'remove', name], env);
  t.equal(removed.code, 0, removed.stderr);
  t.equal(
    removed.stdout,
    `Removed ${name} from ${pluginDir}.\nTake ${name} out of SERVICE_PLUGINS before Herald restarts: a plugin it ` +
      `names and cannot find stops the start.\n`,
  );
  t.notOk(fs.existsSync(path.join(pluginDir, 'node_modules', name)), 'gone');
  const again = await herald(['plugin', 'remove', name], env);
  t.equal(again.code, 1);
  t.equal(
    again.stderr,
    `herald: "${name}" is not installed in the plugin directory ${pluginDir} (it holds no plugin).\n`,
  );
});
