/**
 * `npm run plugin:install -- <tarball | directory | package name>`, `npm run plugin:remove -- <name>`
 * and `npm run plugin:list`: manage the plugin directory (SERVICE_PLUGIN_DIR, default
 * `<SERVICE_DATA_DIR>/plugins`), never Herald's own package.json. Enable an installed plugin by
 * its package name in SERVICE_PLUGINS, then restart the service.
 */

import { PluginLoadError } from '../../core/src/plugins/loader.ts';
import {
  installPlugin,
  listPlugins,
  PluginDirError,
  pluginDirFromEnv,
  removePlugin,
} from '../../core/src/plugins/plugin-dir.ts';

const [command, ...args] = process.argv.slice(2);
const dir = pluginDirFromEnv();
const enabled = (process.env.SERVICE_PLUGINS ?? '')
  .split(',')
  .map((s) => s.trim())
  .filter(Boolean);

const usage = `Usage:
  npm run plugin:install -- <plugin.tgz | plugin directory | package name[@version]>
  npm run plugin:remove -- <package name>
  npm run plugin:list
The plugin directory is SERVICE_PLUGIN_DIR, else <SERVICE_DATA_DIR>/plugins (now ${dir}).`;

async function main(): Promise<number> {
  if (command === 'list') {
    const list = listPlugins(dir);
    if (!list.length) {
      console.log(`No plugins in ${dir}.`);
      return 0;
    }
    console.log(`Plugins in ${dir}:`);
    for (const p of list) {
      const state = !p.installed
        ? 'files missing: install it again'
        : enabled.includes(p.name)
          ? 'enabled in SERVICE_PLUGINS'
          : 'not in SERVICE_PLUGINS';
      console.log(
        `  ${p.name}${p.version ? `@${p.version}` : ''}  ${p.kind ?? '?'}  ` +
          `(${state})${p.description ? `\n    ${p.description}` : ''}`,
      );
    }
    return 0;
  }
  if (command === 'install' && args.length === 1) {
    const p = await installPlugin(dir, args[0]!, { onOutput: (s) => process.stderr.write(s) });
    console.log(`Installed ${p.name}${p.version ? `@${p.version}` : ''} (${p.kind}) in ${dir}.`);
    for (const w of p.warnings) console.log(`  warning: ${w.message}`);
    if (!enabled.includes(p.name))
      console.log(
        `Enable it: add ${p.name} to SERVICE_PLUGINS (which replaces the default list, so name every plugin you ` +
          'want), then restart Herald.',
      );
    else console.log('Restart Herald to load it.');
    return 0;
  }
  if (command === 'remove' && args.length === 1) {
    const p = await removePlugin(dir, args[0]!, { onOutput: (s) => process.stderr.write(s) });
    console.log(`Removed ${p.name} from ${dir}.`);
    if (enabled.includes(p.name))
      console.log(
        `Take ${p.name} out of SERVICE_PLUGINS before Herald restarts: a plugin it names and cannot find stops ` +
          'the boot.',
      );
    return 0;
  }
  console.error(usage);
  return 2;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    if (err instanceof PluginDirError || err instanceof PluginLoadError) {
      console.error(err.message);
      process.exitCode = 1;
      return;
    }
    throw err;
  },
);
