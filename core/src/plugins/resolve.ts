/**
 * Finds and imports one plugin named in SERVICE_PLUGINS: an npm package name, resolved from the
 * plugin directory (SERVICE_PLUGIN_DIR, see plugin-dir.ts) and then from the service's own
 * node_modules (installed from the registry, a tarball or a workspace), or an absolute path to a
 * directory holding the plugin's package.json.
 *
 * Three failures are told apart, each naming the package and what to do: the package is not
 * installed (nothing found under that name or path), it is installed but failed to import (the
 * real error: a syntax error, a missing dependency, an unbuilt entry point…), or it is not a
 * Herald plugin (no `herald` block, wrong `apiVersion`, no manifest export; see loader.ts).
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { PLUGIN_API_VERSION } from '../plugin-api/index.ts';

/** A plugin that cannot be loaded; the message tells the operator what to do. */
export class PluginLoadError extends Error {}

/** The `herald` block of a plugin's package.json. */
export interface HeraldBlock {
  apiVersion: number;
  kind: 'provider' | 'target';
}

export interface ImportedPlugin {
  /** The package's name (from its package.json), or the spec when it has none. */
  packageName: string;
  /** How messages name it: `"name"`, or `"name" (/abs/dir)` for a directory. */
  label: string;
  herald: HeraldBlock;
  module: Record<string, unknown>;
}

const here = path.dirname(fileURLToPath(import.meta.url));
const NAME = /^(?:@[a-z0-9][a-z0-9._~-]*\/)?[a-z0-9][a-z0-9._~-]*$/;
/** Conditions Node applies to `import` (besides flags given with --conditions). */
const CONDITIONS = new Set(['node', 'import', 'module-sync', 'default']);

/** True when SERVICE_PLUGINS names a directory rather than a package. */
export const isPathSpec = (spec: string): boolean =>
  path.isAbsolute(spec) || spec.startsWith('./') || spec.startsWith('../');

/** The directory of an installed package, looked up in node_modules from the service upwards as Node does. */
function findInstalled(name: string, from: string): string | undefined {
  for (let dir = from; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'node_modules', name);
    if (fs.existsSync(path.join(candidate, 'package.json'))) return candidate;
    if (path.dirname(dir) === dir) return undefined;
  }
}

/** Resolves a package's main entry from `exports` (the `.` subpath) or `main`, as Node's `import` would. */
function entryOf(dir: string, pkg: Record<string, unknown>): string {
  const pick = (target: unknown): string | undefined => {
    if (typeof target === 'string') return target;
    if (Array.isArray(target)) {
      for (const t of target) {
        const r = pick(t);
        if (r) return r;
      }
      return undefined;
    }
    if (target && typeof target === 'object') {
      for (const [cond, sub] of Object.entries(target))
        if (CONDITIONS.has(cond)) {
          const r = pick(sub);
          if (r) return r;
        }
    }
    return undefined;
  };
  const exp = pkg.exports;
  let rel: string | undefined;
  if (exp !== undefined && exp !== null) {
    const isSubpathMap =
      typeof exp === 'object' && !Array.isArray(exp) && Object.keys(exp).some((k) => k.startsWith('.'));
    rel = pick(isSubpathMap ? (exp as Record<string, unknown>)['.'] : exp);
    if (!rel) throw new Error('its package.json "exports" has no "." entry for import');
  } else {
    rel = typeof pkg.main === 'string' ? pkg.main : 'index.js';
  }
  const file = path.resolve(dir, rel);
  if (fs.existsSync(file) && fs.statSync(file).isDirectory()) {
    throw new Error(`its entry point ${rel} is a directory; point "exports" or "main" in its package.json at a file`);
  }
  return file;
}

function describe(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  const text =
    e instanceof Error
      ? e.name && e.name !== 'Error' && !e.message.startsWith(e.name)
        ? `${e.name}: ${e.message}`
        : e.message
      : String(err);
  // A syntax error's message has no location; the first stack line (file:line) has it.
  const where = e instanceof SyntaxError ? e.stack?.split('\n')[0]?.match(/^(file:\/\/|\/)\S+:\d+/)?.[0] : undefined;
  let hint = '';
  if (e?.code === 'ERR_UNSUPPORTED_NODE_MODULES_TYPE_STRIPPING')
    hint = ' (an installed plugin must be built to JavaScript)';
  return `${text}${where ? ` (at ${where})` : ''}${hint}`;
}

export interface ImportOptions {
  /**
   * The plugin directory: a package name is looked up in its node_modules first (an operator's
   * plugin there wins over a copy in the service's node_modules), then in the service's.
   */
  pluginDir?: string;
}

/** Finds, checks and imports one plugin; throws PluginLoadError with one of the three messages. */
export async function importPlugin(spec: string, opts: ImportOptions = {}): Promise<ImportedPlugin> {
  let dir: string | undefined;
  const byPath = isPathSpec(spec);
  let fromPluginDir = false;
  if (byPath) {
    const abs = path.resolve(spec);
    if (fs.existsSync(path.join(abs, 'package.json'))) dir = abs;
    else {
      const what = fs.existsSync(abs) ? 'that directory has no package.json' : 'that directory does not exist';
      throw new PluginLoadError(
        `Plugin package at "${abs}" is not installed: ${what}. Fix the path in SERVICE_PLUGINS (a ` +
          `directory holding the plugin's package.json) or remove it.`,
      );
    }
  } else {
    if (!NAME.test(spec))
      throw new PluginLoadError(
        `Plugin package "${spec}" is not installed: that is neither a package name nor an absolute ` +
          'directory path. Fix SERVICE_PLUGINS.',
      );
    const inPluginDir = opts.pluginDir ? path.join(opts.pluginDir, 'node_modules', spec) : undefined;
    if (inPluginDir && fs.existsSync(path.join(inPluginDir, 'package.json'))) {
      dir = inPluginDir;
      fromPluginDir = true;
    } else dir = findInstalled(spec, here);
    if (!dir && opts.pluginDir)
      throw new PluginLoadError(
        `Plugin package "${spec}" is not installed: it is neither in the plugin directory ` +
          `(${opts.pluginDir}) nor in the service's node_modules. Install it (npm run plugin:install -- ` +
          `${spec}, or npm run plugin:install -- ` +
          `./${spec.replace(/^@/, '').replace('/', '-')}-<version>.tgz) or remove it from SERVICE_PLUGINS.`,
      );
    if (!dir)
      throw new PluginLoadError(
        `Plugin package "${spec}" is not installed: it is not in the service's node_modules. Install it ` +
          `(npm install ${spec}, or npm install ./${spec.replace(/^@/, '').replace('/', '-')}-<version>.tgz) ` +
          'or remove it from SERVICE_PLUGINS.',
      );
  }

  let pkg: Record<string, unknown>;
  try {
    pkg = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')) as Record<string, unknown>;
  } catch (err) {
    throw new PluginLoadError(
      `Plugin package "${spec}" is installed but failed to import: its package.json cannot be read: ` +
        `${describe(err)}. Reinstall it or remove it from SERVICE_PLUGINS.`,
    );
  }
  const packageName = typeof pkg.name === 'string' && pkg.name ? pkg.name : spec;
  const label = byPath ? `"${packageName}" (${dir})` : `"${packageName}"`;

  const herald = pkg.herald as Partial<HeraldBlock> | undefined;
  if (!herald || typeof herald !== 'object') {
    throw new PluginLoadError(
      `Plugin package ${label} is not a Herald plugin: its package.json has no "herald" block ` +
        `({"apiVersion": ${PLUGIN_API_VERSION}, "kind": "provider" or "target"}). Check the name in ` +
        'SERVICE_PLUGINS.',
    );
  }
  if (herald.apiVersion !== PLUGIN_API_VERSION) {
    throw new PluginLoadError(
      `Plugin package ${label} is not a Herald plugin for this version: it speaks plugin API version ` +
        `${String(herald.apiVersion)}, but this Herald speaks version ${PLUGIN_API_VERSION}. Install a ` +
        `version of the plugin made for plugin API ${PLUGIN_API_VERSION}, or remove it from SERVICE_PLUGINS.`,
    );
  }
  if (herald.kind !== 'provider' && herald.kind !== 'target') {
    throw new PluginLoadError(
      `Plugin package ${label} is not a Herald plugin: its "herald" block declares kind ` +
        `"${String(herald.kind)}"; expected "provider" or "target".`,
    );
  }

  let mod: Record<string, unknown>;
  try {
    // A package name is imported by name (Node resolves its exports exactly as for any import);
    // a directory by its resolved entry file (a bare directory import is not supported by Node).
    // A package of the plugin directory by its entry file too: the service's own resolution does not look there.
    mod = byPath || fromPluginDir ? await import(pathToFileURL(entryOf(dir, pkg)).href) : await import(spec);
  } catch (err) {
    throw new PluginLoadError(
      `Plugin package ${label} is installed${fromPluginDir ? ' in the plugin directory' : ''} but failed ` +
        `to import: ${describe(err)}. Fix or reinstall the package (a missing dependency needs npm install ` +
        'where the plugin lives), or remove it from SERVICE_PLUGINS.',
    );
  }
  return { packageName, label, herald: herald as HeraldBlock, module: mod };
}
