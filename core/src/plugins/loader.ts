import { Compile } from 'typebox/compile';
import { Value } from 'typebox/value';
import { PLUGIN_API_VERSION, secretPaths, type ConfigProblem, type PluginDefinition, type ProviderDefinition, type TargetDefinition } from '../plugin-api/index.ts';

export interface LoadedPlugin {
  /** npm package name, as named in SERVICE_PLUGINS. */
  packageName: string;
  def: PluginDefinition;
  id: string;
  kind: 'provider' | 'target';
  secretPaths: string[];
  /** Validates and applies defaults; returns the config or a list of errors. */
  validateConfig(config: unknown): { ok: true; value: Record<string, unknown> } | { ok: false; errors: { path: string; message: string }[] };
  validateTrackerConfig(config: unknown): { ok: true; value: Record<string, unknown> } | { ok: false; errors: { path: string; message: string }[] };
  /** The plugin's own checks (its `validateConfig` hook) of a config that passed `validateConfig`; none when it has no hook. */
  checkConfig(config: Record<string, unknown>): ConfigProblem[];
  /** Config fields the providers API also shows at the top level (`manifest.configAliases`). */
  configAliases: string[];
}

import { importPlugin, PluginLoadError } from './resolve.ts';

export { PluginLoadError };

function validator(schema: unknown) {
  const compiled = Compile(schema as never);
  return (config: unknown) => {
    const value = Value.Default(schema as never, structuredClone(config ?? {}));
    if (compiled.Check(value)) return { ok: true as const, value: value as Record<string, unknown> };
    return { ok: false as const, errors: [...compiled.Errors(value)].map((e) => ({ path: e.instancePath || '/', message: e.message })) };
  };
}

/** Runs a plugin's `validateConfig` hook; a hook that throws or answers garbage is reported as one problem, never a crash. */
function checkWith(packageName: string, def: PluginDefinition, config: Record<string, unknown>): ConfigProblem[] {
  const hook = def.validateConfig as ((c: Record<string, unknown>) => ConfigProblem[]) | undefined;
  if (!hook) return [];
  let out: unknown;
  try { out = hook(config); } catch (err) {
    return [{ path: '/', message: `could not be checked by the plugin "${packageName}": ${(err as Error)?.message ?? String(err)}` }];
  }
  if (!Array.isArray(out)) return [{ path: '/', message: `could not be checked: the plugin "${packageName}" answered its config check with something other than a list` }];
  return out.filter((p): p is ConfigProblem => Boolean(p) && typeof p.message === 'string').slice(0, 50).map((p) => ({
    path: typeof p.path === 'string' && p.path.startsWith('/') ? p.path : '/',
    message: p.message,
    ...(typeof p.code === 'string' && /^[a-z][a-z0-9_]{0,63}$/.test(p.code) ? { code: p.code } : {}),
    ...(typeof p.detail === 'string' ? { detail: p.detail } : {}),
  }));
}

export function wrapDefinition(packageName: string, def: PluginDefinition): LoadedPlugin {
  const m = def?.manifest;
  if (!m || typeof m !== 'object') throw new PluginLoadError(`Plugin package "${packageName}" is not a Herald plugin: it has no default export made with defineProvider() or defineTarget(). Check the name in SERVICE_PLUGINS.`);
  if (m.apiVersion !== PLUGIN_API_VERSION) throw new PluginLoadError(`Plugin package "${packageName}" is not a Herald plugin for this version: it speaks plugin API version ${String(m.apiVersion)}, but this Herald speaks version ${PLUGIN_API_VERSION}. Install a version of the plugin made for plugin API ${PLUGIN_API_VERSION}, or remove it from SERVICE_PLUGINS.`);
  if (m.kind !== 'provider' && m.kind !== 'target') throw new PluginLoadError(`Plugin package "${packageName}" declares kind "${String((m as { kind?: unknown }).kind)}"; expected "provider" or "target".`);
  if (!/^[a-z][a-z0-9_]{1,40}$/.test(m.id ?? '')) throw new PluginLoadError(`Plugin package "${packageName}" has an invalid id "${String(m.id)}" (lower-case letters, digits, underscores).`);
  if (typeof def.create !== 'function') throw new PluginLoadError(`Plugin package "${packageName}" has no create() function.`);
  const emptyTracker = { type: 'object' };
  const properties = (m.configSchema as { properties?: Record<string, unknown> })?.properties ?? {};
  const configAliases = m.configAliases ?? [];
  for (const a of configAliases) {
    if (!Object.hasOwn(properties, a)) throw new PluginLoadError(`Plugin package "${packageName}" declares the config alias "${a}", which is not a top-level field of its configSchema.`);
  }
  if (def.validateConfig !== undefined && typeof def.validateConfig !== 'function') throw new PluginLoadError(`Plugin package "${packageName}" has a validateConfig that is not a function.`);
  return {
    packageName, def, id: m.id, kind: m.kind,
    secretPaths: secretPaths(m.configSchema),
    validateConfig: validator(m.configSchema),
    checkConfig: (config) => checkWith(packageName, def, config),
    configAliases,
    validateTrackerConfig: validator((m as ProviderDefinition['manifest']).trackerSchema ?? emptyTracker),
  };
}

/**
 * Imports each plugin named in SERVICE_PLUGINS (a package name from the service's node_modules, or
 * an absolute directory path) and checks its package.json `herald` block and its manifest. Fails
 * with a message naming the package: not installed, failed to import, or not a Herald plugin.
 */
export async function loadPlugins(names: string[]): Promise<LoadedPlugin[]> {
  const out: LoadedPlugin[] = [];
  const ids = new Map<string, string>();
  const eventTypes = new Map<string, string>();
  for (const spec of names) {
    const imported = await importPlugin(spec);
    const name = imported.packageName;
    const p = wrapDefinition(name, imported.module.default as PluginDefinition);
    if (p.kind !== imported.herald.kind) throw new PluginLoadError(`Plugin package ${imported.label} is not a Herald plugin: its package.json says kind "${imported.herald.kind}" but its manifest says "${p.kind}".`);
    const clash = ids.get(p.id);
    // The same package named twice (by name and by its path, say) is one plugin.
    if (clash === name) continue;
    if (clash) throw new PluginLoadError(`Plugin packages "${clash}" and "${name}" both declare the id "${p.id}"; enable only one.`);
    // Event types are one namespace: user template overrides and the event log key on the type alone.
    for (const type of Object.keys(p.kind === 'provider' ? (p.def.manifest.events ?? {}) : {})) {
      const owner = eventTypes.get(type);
      if (owner) throw new PluginLoadError(`Plugin packages "${owner}" and "${name}" both declare the event type "${type}"; event types must be unique (prefix them with the plugin id), so enable only one.`);
      eventTypes.set(type, name);
    }
    ids.set(p.id, name);
    out.push(p);
  }
  return out;
}

export const isProvider = (p: LoadedPlugin): p is LoadedPlugin & { def: ProviderDefinition } => p.kind === 'provider';
export const isTarget = (p: LoadedPlugin): p is LoadedPlugin & { def: TargetDefinition } => p.kind === 'target';
