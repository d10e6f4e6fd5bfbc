import { Compile } from 'typebox/compile';
import { Value } from 'typebox/value';
import { PLUGIN_API_VERSION, secretPaths, type PluginDefinition, type ProviderDefinition, type TargetDefinition } from '../plugin-api/index.ts';

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
}

/** A plugin that cannot be loaded; the message tells the operator what to do. */
export class PluginLoadError extends Error {}

function validator(schema: unknown) {
  const compiled = Compile(schema as never);
  return (config: unknown) => {
    const value = Value.Default(schema as never, structuredClone(config ?? {}));
    if (compiled.Check(value)) return { ok: true as const, value: value as Record<string, unknown> };
    return { ok: false as const, errors: [...compiled.Errors(value)].map((e) => ({ path: e.instancePath || '/', message: e.message })) };
  };
}

export function wrapDefinition(packageName: string, def: PluginDefinition): LoadedPlugin {
  const m = def?.manifest;
  if (!m || typeof m !== 'object') throw new PluginLoadError(`Plugin package "${packageName}" has no default export made with defineProvider() or defineTarget().`);
  if (m.apiVersion !== PLUGIN_API_VERSION) throw new PluginLoadError(`Plugin package "${packageName}" speaks plugin API version ${String(m.apiVersion)}, but this Herald speaks version ${PLUGIN_API_VERSION}; install a matching version of the plugin.`);
  if (m.kind !== 'provider' && m.kind !== 'target') throw new PluginLoadError(`Plugin package "${packageName}" declares kind "${String((m as { kind?: unknown }).kind)}"; expected "provider" or "target".`);
  if (!/^[a-z][a-z0-9_]{1,40}$/.test(m.id ?? '')) throw new PluginLoadError(`Plugin package "${packageName}" has an invalid id "${String(m.id)}" (lower-case letters, digits, underscores).`);
  if (typeof def.create !== 'function') throw new PluginLoadError(`Plugin package "${packageName}" has no create() function.`);
  const emptyTracker = { type: 'object' };
  return {
    packageName, def, id: m.id, kind: m.kind,
    secretPaths: secretPaths(m.configSchema),
    validateConfig: validator(m.configSchema),
    validateTrackerConfig: validator((m as ProviderDefinition['manifest']).trackerSchema ?? emptyTracker),
  };
}

/** Imports each named package and checks its manifest. Fails with a message naming the package. */
export async function loadPlugins(names: string[]): Promise<LoadedPlugin[]> {
  const out: LoadedPlugin[] = [];
  const ids = new Map<string, string>();
  for (const name of names) {
    let mod: { default?: PluginDefinition };
    try {
      mod = await import(name);
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      if (e.code === 'ERR_MODULE_NOT_FOUND' && String(e.message).includes(name)) {
        throw new PluginLoadError(`Plugin package "${name}" is not installed; install it (npm install ${name}) or remove it from SERVICE_PLUGINS.`);
      }
      throw new PluginLoadError(`Plugin package "${name}" failed to load: ${e.message}`);
    }
    const p = wrapDefinition(name, mod.default as PluginDefinition);
    const clash = ids.get(p.id);
    if (clash) throw new PluginLoadError(`Plugin packages "${clash}" and "${name}" both declare the id "${p.id}"; enable only one.`);
    ids.set(p.id, name);
    out.push(p);
  }
  return out;
}

export const isProvider = (p: LoadedPlugin): p is LoadedPlugin & { def: ProviderDefinition } => p.kind === 'provider';
export const isTarget = (p: LoadedPlugin): p is LoadedPlugin & { def: TargetDefinition } => p.kind === 'target';
