import { Compile } from 'typebox/compile';
import { Value } from 'typebox/value';
import {
  type ConfigProblem,
  HEADER_NAME,
  PLUGIN_API_VERSION,
  type PluginDefinition,
  type PluginIssue,
  type ProviderDefinition,
  secretPaths,
  type TargetDefinition,
  undeclaredFields,
  validatePlugin,
  withoutFields,
} from '../plugin-api/index.ts';

export interface ValidateOptions {
  undeclared?: 'refuse' | 'drop';
}
export type Validated =
  | {
      ok: true;
      value: Record<string, unknown> /** Undeclared fields left out (only with `undeclared: 'drop'`). */;
      dropped: string[];
    }
  | {
      ok: false;
      errors: ConfigFieldError[] /** JSON pointers of the undeclared fields among the errors. */;
      undeclared: string[];
    };

/**
 * One field's problem: JSON pointer, English message, and the JSON Schema keyword with its params (for clients to
 * phrase).
 */
export interface ConfigFieldError {
  path: string;
  message: string;
  code?: string;
  params?: Record<string, string | number | boolean | string[]>;
}

type SchemaError = { instancePath?: string; message: string; keyword?: string; params?: Record<string, unknown> };

/** The params of a schema error a client can use (scalars and lists of strings). */
function plainParams(
  params: Record<string, unknown> | undefined,
): Record<string, string | number | boolean | string[]> {
  const out: Record<string, string | number | boolean | string[]> = {};
  for (const [k, v] of Object.entries(params ?? {})) {
    if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') out[k] = v;
    else if (Array.isArray(v) && v.every((x) => typeof x === 'string')) out[k] = v;
  }
  return out;
}

/**
 * Schema errors as field problems: a missing required field is named by its own path (not its
 * parent's), and the alternatives of a union are reported once, at the field.
 */
function fieldErrors(errors: SchemaError[]): ConfigFieldError[] {
  const out: ConfigFieldError[] = [];
  const unions = new Set(errors.filter((e) => e.keyword === 'anyOf').map((e) => e.instancePath ?? ''));
  for (const e of errors) {
    const path = e.instancePath || '/';
    if (e.keyword === 'required') {
      const missing = (e.params?.requiredProperties ?? e.params?.missingProperty ?? []) as string[] | string;
      for (const name of Array.isArray(missing) ? missing : [missing])
        out.push({ path: `${e.instancePath ?? ''}/${name}`, message: 'is required', code: 'required', params: {} });
      continue;
    }
    // A union's branches each fail on their own; the union is reported once, as an enum when its branches are
    // constants.
    if (unions.has(e.instancePath ?? '') && e.keyword !== 'anyOf') continue;
    if (e.keyword === 'anyOf') {
      const consts = errors
        .filter((x) => x.keyword === 'const' && x.instancePath === e.instancePath)
        .map((x) => x.params?.allowedValue);
      if (consts.length && consts.every((v) => typeof v === 'string')) {
        out.push({
          path,
          message: `must be one of: ${consts.join(', ')}`,
          code: 'enum',
          params: { allowedValues: consts as string[] },
        });
        continue;
      }
    }
    out.push({ path, message: e.message, ...(e.keyword ? { code: e.keyword, params: plainParams(e.params) } : {}) });
  }
  return out;
}

/** The error message of a config field the plugin's schema does not declare. */
export const UNDECLARED_FIELD = 'is not a field of this configuration';

export interface LoadedPlugin {
  /** npm package name, as named in SERVICE_PLUGINS. */
  packageName: string;
  def: PluginDefinition;
  id: string;
  kind: 'provider' | 'target';
  secretPaths: string[];
  /** The `Secret()` fields of tracker configs (providers with a `trackerSchema`; none otherwise). */
  trackerSecretPaths: string[];
  /**
   * Validates and applies defaults; returns the config or a list of errors. Fields the schema does
   * not declare are refused (listed in `undeclared` and among the errors), or with
   * `{ undeclared: 'drop' }` left out of the value (stored configs the instance runs with).
   */
  validateConfig(config: unknown, opts?: ValidateOptions): Validated;
  validateTrackerConfig(config: unknown, opts?: ValidateOptions): Validated;
  /**
   * The plugin's own checks (its `validateConfig` hook) of a config that passed `validateConfig`; none when it has no
   * hook.
   */
  checkConfig(config: Record<string, unknown>): ConfigProblem[];
  /** Config fields the providers API also shows at the top level (`manifest.configAliases`). */
  configAliases: string[];
  /** The schema of a tracker's config: the manifest's `trackerSchema`, or one without fields. */
  trackerSchema: unknown;
  /** What the plugin validator found that does not refuse the load (logged at WARNING by loadPlugins). */
  warnings: PluginIssue[];
}

import { linkContract } from './plugin-dir.ts';
import { type HeraldBlock, importPlugin, PluginLoadError } from './resolve.ts';

export { PluginLoadError };

function validator(schema: unknown) {
  const compiled = Compile(schema as never);
  return (config: unknown, opts: ValidateOptions = {}): Validated => {
    const input = config ?? {};
    const found = undeclaredFields(schema, input);
    const undeclared = opts.undeclared === 'drop' ? [] : found;
    const value = Value.Default(schema as never, withoutFields(input, found));
    const errors: ConfigFieldError[] = [
      ...undeclared.map((path) => ({ path, message: UNDECLARED_FIELD, code: 'additionalProperties', params: {} })),
      ...(compiled.Check(value) ? [] : fieldErrors([...compiled.Errors(value)] as SchemaError[])),
    ];
    if (!errors.length) return { ok: true, value: value as Record<string, unknown>, dropped: found };
    return { ok: false, errors, undeclared };
  };
}

/**
 * Runs a plugin's `validateConfig` hook; a hook that throws or answers garbage is reported as one problem, never a
 * crash.
 */
function checkWith(packageName: string, def: PluginDefinition, config: Record<string, unknown>): ConfigProblem[] {
  const hook = def.validateConfig as ((c: Record<string, unknown>) => ConfigProblem[]) | undefined;
  if (!hook) return [];
  let out: unknown;
  try {
    out = hook(config);
  } catch (err) {
    return [
      {
        path: '/',
        message: `could not be checked by the plugin "${packageName}": ${(err as Error)?.message ?? String(err)}`,
      },
    ];
  }
  if (!Array.isArray(out))
    return [
      {
        path: '/',
        message:
          `could not be checked: the plugin "${packageName}" answered its config check with something other ` +
          'than a list',
      },
    ];
  return out
    .filter((p): p is ConfigProblem => Boolean(p) && typeof p.message === 'string')
    .slice(0, 50)
    .map((p) => ({
      path: typeof p.path === 'string' && p.path.startsWith('/') ? p.path : '/',
      message: p.message,
      ...(typeof p.code === 'string' && /^[a-z][a-zA-Z0-9_]{0,63}$/.test(p.code) ? { code: p.code } : {}),
      ...(typeof p.detail === 'string' ? { detail: p.detail } : {}),
      ...(p.params && typeof p.params === 'object'
        ? { params: plainParams(p.params) as Record<string, string | number | boolean> }
        : {}),
    }));
}

/**
 * Checks a plugin's definition (and its package.json `herald` block, when given) and wraps it for
 * the core. The plugin validator's errors refuse it with one message naming the package, its id
 * and every problem; its warnings are returned in `warnings`.
 */
export function wrapDefinition(
  packageName: string,
  def: PluginDefinition,
  opts: { herald?: HeraldBlock } = {},
): LoadedPlugin {
  const m = def?.manifest;
  if (!m || typeof m !== 'object')
    throw new PluginLoadError(
      `Plugin package "${packageName}" is not a Herald plugin: it has no default export made with ` +
        'defineProvider() or defineTarget(). Check the name in SERVICE_PLUGINS.',
    );
  if (m.apiVersion !== PLUGIN_API_VERSION)
    throw new PluginLoadError(
      `Plugin package "${packageName}" is not a Herald plugin for this version: it speaks plugin API ` +
        `version ${String(m.apiVersion)}, but this Herald speaks version ${PLUGIN_API_VERSION}. Install a ` +
        `version of the plugin made for plugin API ${PLUGIN_API_VERSION}, or remove it from SERVICE_PLUGINS.`,
    );
  if (m.kind !== 'provider' && m.kind !== 'target')
    throw new PluginLoadError(
      `Plugin package "${packageName}" declares kind "${String((m as { kind?: unknown }).kind)}"; expected ` +
        '"provider" or "target".',
    );
  if (!/^[a-z][a-z0-9_]{1,40}$/.test(m.id ?? ''))
    throw new PluginLoadError(
      `Plugin package "${packageName}" has an invalid id "${String(m.id)}" (lower-case letters, digits, underscores).`,
    );
  if (typeof def.create !== 'function')
    throw new PluginLoadError(`Plugin package "${packageName}" has no create() function.`);
  const properties = (m.configSchema as { properties?: Record<string, unknown> })?.properties ?? {};
  const configAliases = m.configAliases ?? [];
  for (const a of configAliases) {
    if (!Object.hasOwn(properties, a))
      throw new PluginLoadError(
        `Plugin package "${packageName}" declares the config alias "${a}", which is not a top-level field ` +
          'of its configSchema.',
      );
  }
  const credentialHeaders: unknown = m.credentialHeaders;
  if (
    credentialHeaders !== undefined &&
    (!Array.isArray(credentialHeaders) || !credentialHeaders.every((h) => typeof h === 'string' && HEADER_NAME.test(h)))
  ) {
    throw new PluginLoadError(
      `Plugin package "${packageName}" declares credentialHeaders that are not a list of header names ` +
        '(e.g. ["x-api-key"]).',
    );
  }
  if (def.validateConfig !== undefined && typeof def.validateConfig !== 'function')
    throw new PluginLoadError(`Plugin package "${packageName}" has a validateConfig that is not a function.`);
  const checked = validatePlugin(def, opts.herald ? { packageJson: { name: packageName, herald: opts.herald } } : {});
  if (!checked.ok) {
    throw new PluginLoadError(
      `Plugin package "${packageName}" (id "${m.id}") cannot be loaded: ` +
        `${checked.errors.map((e) => e.message).join(' ')} Fix the plugin (the plugin guide lists the ` +
        'reserved field names and the schema shapes) or remove it from SERVICE_PLUGINS.',
    );
  }
  const trackerSchema = (m as ProviderDefinition['manifest']).trackerSchema ?? { type: 'object' };
  return {
    packageName,
    def,
    id: m.id,
    kind: m.kind,
    secretPaths: secretPaths(m.configSchema),
    trackerSecretPaths: secretPaths(trackerSchema),
    validateConfig: validator(m.configSchema),
    checkConfig: (config) => checkWith(packageName, def, config),
    configAliases,
    validateTrackerConfig: validator(trackerSchema),
    trackerSchema,
    warnings: checked.warnings,
  };
}

export interface LoadOptions {
  /** Where loadPlugins logs what the plugin validator warns about (a pino-style logger). */
  log?: { warn(obj: Record<string, unknown>, msg: string): void };
  /**
   * The plugin directory (SERVICE_PLUGIN_DIR): package names are looked up there first, then in the service's
   * node_modules.
   */
  pluginDir?: string;
}

/**
 * Imports each plugin named in SERVICE_PLUGINS (a package name from the plugin directory or the
 * service's node_modules, or an absolute directory path) and checks its package.json `herald` block and its manifest.
 * Fails
 * with a message naming the package: not installed, failed to import, or not a Herald plugin.
 */
export async function loadPlugins(names: string[], opts: LoadOptions = {}): Promise<LoadedPlugin[]> {
  const out: LoadedPlugin[] = [];
  const ids = new Map<string, string>();
  const eventTypes = new Map<string, string>();
  // The plugins there import the service's own contract, through a link made again at every boot (an upgrade may have
  // moved it).
  if (opts.pluginDir && !linkContract(opts.pluginDir)) {
    opts.log?.warn(
      { plugin_dir: opts.pluginDir },
      `The plugin directory ${opts.pluginDir} has no link to this service's @herald/plugin-api and it ` +
        'could not be made (is the directory read-only?); its plugins may fail to import.',
    );
  }
  for (const spec of names) {
    const imported = await importPlugin(spec, { pluginDir: opts.pluginDir });
    const name = imported.packageName;
    const def = imported.module.default as PluginDefinition;
    const declared = (def as { manifest?: { kind?: unknown } } | undefined)?.manifest?.kind;
    if ((declared === 'provider' || declared === 'target') && declared !== imported.herald.kind)
      throw new PluginLoadError(
        `Plugin package ${imported.label} is not a Herald plugin: its package.json says kind ` +
          `"${imported.herald.kind}" but its manifest says "${declared}".`,
      );
    const p = wrapDefinition(name, def, { herald: imported.herald });
    // Ids are unique per kind: a provider and a target of one service may share one.
    const clash = ids.get(`${p.kind}:${p.id}`);
    // The same package named twice (by name and by its path, say) is one plugin.
    if (clash === name) continue;
    if (clash)
      throw new PluginLoadError(
        `Plugin packages "${clash}" and "${name}" both declare the ${p.kind} id "${p.id}"; enable only one.`,
      );
    // Event types are one namespace: user template overrides and the event log key on the type alone.
    for (const type of Object.keys(p.kind === 'provider' ? (p.def.manifest.events ?? {}) : {})) {
      const owner = eventTypes.get(type);
      if (owner)
        throw new PluginLoadError(
          `Plugin packages "${owner}" and "${name}" both declare the event type "${type}"; event types ` +
            'must be unique (prefix them with the plugin id), so enable only one.',
        );
      eventTypes.set(type, name);
    }
    ids.set(`${p.kind}:${p.id}`, name);
    for (const w of p.warnings)
      opts.log?.warn(
        { plugin: p.id, package: name, code: w.code, field: w.path },
        `Plugin "${p.id}" (${name}): ${w.message}`,
      );
    out.push(p);
  }
  return out;
}

export const isProvider = (p: LoadedPlugin): p is LoadedPlugin & { def: ProviderDefinition } => p.kind === 'provider';
export const isTarget = (p: LoadedPlugin): p is LoadedPlugin & { def: TargetDefinition } => p.kind === 'target';
