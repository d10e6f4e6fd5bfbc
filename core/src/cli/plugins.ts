/**
 * `herald plugin list|install|remove`: the plugin directory (SERVICE_PLUGIN_DIR, default
 * `<SERVICE_DATA_DIR>/plugins`; plugins/plugin-dir.ts), as `npm run plugin:*` manages it. An install
 * is checked as the service's start would load it, and undone when it would not load. npm's own
 * output goes to standard error as it comes; what was done, to standard output.
 */
import { installPlugin, listPlugins, pluginDirFromEnv, removePlugin } from '../plugins/plugin-dir.ts';
import type { Messages } from './i18n.ts';
import { out, printJson, table } from './output.ts';

/** The packages SERVICE_PLUGINS names (the default list names only Herald's own). */
const enabled = (): string[] =>
  (process.env.SERVICE_PLUGINS ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

const npmOutput = {
  onOutput: (s: string) => {
    process.stderr.write(s);
  },
};

export function listPluginDir(m: Messages, o: { json?: boolean }): void {
  const dir = pluginDirFromEnv();
  const list = listPlugins(dir);
  const on = enabled();
  if (o.json) {
    printJson({ directory: dir, plugins: list.map((p) => ({ ...p, enabled: on.includes(p.name) })) });
    return;
  }
  if (!list.length) {
    out(m.t('plugin.none', { dir }));
    return;
  }
  out(m.t('plugin.in_dir', { dir }));
  for (const line of table(
    [m.t('plugin.col_name'), m.t('plugin.col_version'), m.t('plugin.col_kind'), m.t('plugin.col_state')],
    list.map((p) => [
      p.name,
      p.version ?? '',
      p.kind ?? '?',
      m.t(
        !p.installed ? 'plugin.state_missing' : on.includes(p.name) ? 'plugin.state_enabled' : 'plugin.state_disabled',
      ),
    ]),
  ))
    out(line);
}

export async function installPluginCommand(m: Messages, spec: string): Promise<void> {
  const dir = pluginDirFromEnv();
  const p = await installPlugin(dir, spec, npmOutput);
  out(m.t('plugin.installed', { name: p.name, version: p.version ? `@${p.version}` : '', kind: p.kind ?? '?', dir }));
  for (const w of p.warnings) out(`  ${m.t('plugin.warning', { message: w.message })}`);
  out(m.t(enabled().includes(p.name) ? 'plugin.restart' : 'plugin.enable', { name: p.name }));
}

export async function removePluginCommand(m: Messages, name: string): Promise<void> {
  const dir = pluginDirFromEnv();
  const p = await removePlugin(dir, name, npmOutput);
  out(m.t('plugin.removed', { name: p.name, dir }));
  if (enabled().includes(p.name)) out(m.t('plugin.still_enabled', { name: p.name }));
}
