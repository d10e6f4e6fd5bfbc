/**
 * The plugin directory (`SERVICE_PLUGIN_DIR`, default `<data dir>/plugins`): where an operator's
 * own plugins live, apart from Herald's files, so that an upgrade (a `git pull`, a new image) never
 * touches them and they never touch Herald's package.json. In a container it sits in the data
 * volume, like Home Assistant's `custom_components` or n8n's `~/.n8n/nodes`.
 *
 * It is an npm project of its own: a `package.json` whose `dependencies` are the installed
 * plugins, their `node_modules`, and the tarballs they were installed from (`packages/`, kept so
 * that a later install can rebuild the tree). `installPlugin`, `removePlugin` and `listPlugins`
 * manage it (`npm run plugin:install -- <tarball | directory | package name>`, `plugin:remove`,
 * `plugin:list`, and the `herald` command line); the loader finds the plugins named in
 * SERVICE_PLUGINS there as well as in the service's own node_modules.
 *
 * A plugin imports `@herald/plugin-api` as a peer dependency: the service provides it. The
 * directory's `node_modules/@herald/plugin-api` is a link to the service's own copy, made again
 * after every install and at every boot, so every plugin shares the service's contract.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import zlib from 'node:zlib';
import { PLUGIN_API_VERSION } from '../plugin-api/index.ts';

/** A plugin directory operation that cannot be done; the message says why and what to do. */
export class PluginDirError extends Error {}

/** One plugin of the plugin directory. */
export interface InstalledPlugin {
  /** The npm package name: what SERVICE_PLUGINS names. */
  name: string;
  version?: string;
  /** From the package's `herald` block. */
  kind?: 'provider' | 'target';
  apiVersion?: number;
  description?: string;
  /** What the directory's package.json records for it (`file:packages/x-1.0.0.tgz`, `^1.2.0`). */
  spec: string;
  /** False when package.json lists it but its files are missing (run an install again). */
  installed: boolean;
}

export interface PluginDirOptions {
  /** The npm executable (default `npm` from PATH). */
  npm?: string;
  /** Environment for npm (default this process's); e.g. `npm_config_offline: 'true'`. */
  env?: NodeJS.ProcessEnv;
  /** npm's own output, as it comes. */
  onOutput?: (text: string) => void;
}

/** The result of an install: the plugin, and what the plugin validator warns about (see the plugin guide). */
export interface InstallResult extends InstalledPlugin {
  warnings: { code: string; path: string; message: string }[];
}

const PACKAGE_JSON = {
  name: 'herald-plugins',
  private: true,
  description:
    'Plugins of this Herald service, installed with `npm run plugin:install` (or `herald plugin install`) ' +
    'and enabled by name in SERVICE_PLUGINS. Managed by Herald: edit with those commands.',
  dependencies: {},
};
/**
 * npm settings for the directory: the contract is the service's (never fetched as a peer), no audit or funding noise.
 */
const NPMRC = 'legacy-peer-deps=true\naudit=false\nfund=false\nupdate-notifier=false\n';
const CONTRACT = '@herald/plugin-api';
const NAME = /^(?:@[a-z0-9][a-z0-9._~-]*\/)?[a-z0-9][a-z0-9._~-]*$/;

/** The service's own copy of the contract package (the directory holding its package.json). */
export function serviceContractDir(): string {
  return fs.realpathSync(path.dirname(createRequire(import.meta.url).resolve(`${CONTRACT}/package.json`)));
}

/**
 * What Herald reads of a package.json (a plugin's, the directory's own): fields it has checked the type of, each left
 * out when the file holds something else there.
 */
export interface PackageManifest {
  name?: string;
  version?: string;
  description?: string;
  dependencies?: Record<string, string>;
  /** The `herald` block, when it is an object: the plugin's kind and the plugin API version it speaks. */
  herald?: { kind?: unknown; apiVersion?: unknown };
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The package.json fields Herald reads, from parsed JSON; undefined for `null` (or another falsy value). */
function packageManifest(json: unknown): PackageManifest | undefined {
  if (!json) return undefined;
  const out: PackageManifest = {};
  if (!isObject(json)) return out;
  for (const k of ['name', 'version', 'description'] as const) if (typeof json[k] === 'string') out[k] = json[k];
  if (isObject(json.dependencies))
    out.dependencies = Object.fromEntries(
      Object.entries(json.dependencies).filter((e): e is [string, string] => typeof e[1] === 'string'),
    );
  if (typeof json.herald === 'object' && json.herald !== null) out.herald = json.herald;
  return out;
}

const readJson = (file: string): PackageManifest | undefined => {
  try {
    return packageManifest(JSON.parse(fs.readFileSync(file, 'utf8')));
  } catch {
    return undefined;
  }
};

/** Creates the directory with its package.json and .npmrc, when missing. */
export function ensurePluginDir(dir: string): void {
  fs.mkdirSync(path.join(dir, 'packages'), { recursive: true });
  const pkg = path.join(dir, 'package.json');
  if (!fs.existsSync(pkg)) fs.writeFileSync(pkg, `${JSON.stringify(PACKAGE_JSON, null, 2)}\n`);
  const npmrc = path.join(dir, '.npmrc');
  if (!fs.existsSync(npmrc)) fs.writeFileSync(npmrc, NPMRC);
}

/**
 * Points `<dir>/node_modules/@herald/plugin-api` at the service's contract, so that the plugins
 * there import the service's copy. True when the link is in place (or nothing is installed yet),
 * false when it could not be made (a read-only directory); a real directory there is left alone.
 */
export function linkContract(dir: string): boolean {
  const modules = path.join(dir, 'node_modules');
  if (!fs.existsSync(modules)) return true;
  const link = path.join(modules, CONTRACT);
  const target = serviceContractDir();
  try {
    const st = fs.lstatSync(link, { throwIfNoEntry: false });
    if (st?.isSymbolicLink()) {
      if (fs.realpathSync(link) === target) return true;
      fs.unlinkSync(link);
    } else if (st) {
      return true;
    }
    fs.mkdirSync(path.dirname(link), { recursive: true });
    fs.symlinkSync(target, link, 'junction');
    return true;
  } catch {
    return false;
  }
}

/**
 * Runs npm in the plugin directory, without what an outer `npm run` put in the environment about Herald's own project.
 */
/** What an outer `npm run` sets about Herald's own project (`npm_package_*`, `npm_config_prefix`, …). */
const OUTER_NPM_VARIABLE = new RegExp(
  '^npm_(package_|lifecycle_|command$|config_local_prefix$|config_prefix$|config_loglevel$|' +
    'config_workspaces?$|config_include_workspace_root$)',
  'i',
);

function npm(dir: string, args: string[], o: PluginDirOptions): Promise<string> {
  const base = o.env ?? process.env;
  const env = Object.fromEntries(Object.entries(base).filter(([k]) => !OUTER_NPM_VARIABLE.test(k) && k !== 'INIT_CWD'));
  return new Promise((resolve, reject) => {
    const child = execFile(
      o.npm ?? 'npm',
      [...args, '--prefix', dir],
      { cwd: dir, env, maxBuffer: 16 * 1024 * 1024, timeout: 10 * 60_000 },
      (err, stdout, stderr) => {
        if (err) {
          const tail = `${stderr}`
            .trim()
            .split('\n')
            .filter((l) => l.trim())
            .slice(-12)
            .join('\n');
          const missing = (err as { code?: unknown }).code === 'ENOENT';
          const why = missing ? ': npm is not installed (it comes with Node.js)' : '';
          reject(new PluginDirError(`npm ${args[0]} failed${why}${tail ? `:\n${tail}` : '.'}`));
          return;
        }
        resolve(stdout);
      },
    );
    if (o.onOutput) {
      child.stdout?.on('data', (c: Buffer) => o.onOutput!(c.toString()));
      child.stderr?.on('data', (c: Buffer) => o.onOutput!(c.toString()));
    }
  });
}

const dependencies = (dir: string): Record<string, string> => ({
  ...(readJson(path.join(dir, 'package.json'))?.dependencies ?? {}),
});

function describe(dir: string, name: string, spec: string): InstalledPlugin {
  const pkg = readJson(path.join(dir, 'node_modules', name, 'package.json'));
  const herald = pkg?.herald;
  return {
    name,
    spec,
    installed: Boolean(pkg),
    ...(typeof pkg?.version === 'string' ? { version: pkg.version } : {}),
    ...(herald && (herald.kind === 'provider' || herald.kind === 'target') ? { kind: herald.kind } : {}),
    ...(herald && typeof herald.apiVersion === 'number' ? { apiVersion: herald.apiVersion } : {}),
    ...(typeof pkg?.description === 'string' ? { description: pkg.description } : {}),
  };
}

/** The plugins in the directory, by name; an empty list when there is no directory yet. */
export function listPlugins(dir: string): InstalledPlugin[] {
  return Object.entries(dependencies(dir))
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, spec]) => describe(dir, name, spec));
}

/**
 * The package.json inside a tarball made by `npm pack` (gzipped tar, `package/package.json`); undefined when it has
 * none.
 */
export function readPackedManifest(tgz: string): PackageManifest | undefined {
  let tar: Buffer;
  try {
    tar = zlib.gunzipSync(fs.readFileSync(tgz), { maxOutputLength: 256 * 1024 * 1024 });
  } catch {
    return undefined;
  }
  for (let at = 0; at + 512 <= tar.length; ) {
    const header = tar.subarray(at, at + 512);
    if (header.every((b) => b === 0)) break;
    const field = (from: number, len: number) =>
      header
        .subarray(from, from + len)
        .toString('utf8')
        .replace(/\0.*$/s, '');
    const name = `${field(345, 155) ? `${field(345, 155)}/` : ''}${field(0, 100)}`;
    const size = parseInt(field(124, 12).trim() || '0', 8);
    if (!Number.isFinite(size) || size < 0) return undefined;
    if (/^[^/]+\/package\.json$/.test(name) && name.split('/').length === 2) {
      try {
        return packageManifest(JSON.parse(tar.subarray(at + 512, at + 512 + size).toString('utf8')));
      } catch {
        return undefined;
      }
    }
    at += 512 + Math.ceil(size / 512) * 512;
  }
  return undefined;
}

/** Refuses, before npm runs, a package whose package.json says it is no Herald plugin for this service. */
function checkHerald(pkg: PackageManifest | undefined, what: string): void {
  if (!pkg) throw new PluginDirError(`${what} holds no package.json; it is not an npm package. It was not installed.`);
  const name = pkg.name ?? what;
  if (!pkg.herald)
    throw new PluginDirError(
      `"${name}" is not a Herald plugin: its package.json has no "herald" block. It was not installed.`,
    );
  if (pkg.herald.apiVersion !== PLUGIN_API_VERSION)
    throw new PluginDirError(
      `"${name}" speaks plugin API version ${String(pkg.herald.apiVersion)}, but this Herald speaks ` +
        `version ${PLUGIN_API_VERSION}. It was not installed.`,
    );
}

const looksLikePath = (spec: string) =>
  /^(\.{1,2}[\\/]|[\\/]|~[\\/]|[A-Za-z]:[\\/])/.test(spec) || /\.(tgz|tar\.gz)$/i.test(spec);

/**
 * Installs a plugin into the directory from a tarball (`npm pack` output), a directory holding a
 * plugin's package.json (packed first, so its `prepack` build runs), or a package name (with an
 * optional version or range) from the registry. The package must be a Herald plugin the service
 * can load (its `herald` block, its import, the plugin validator); otherwise it is removed again
 * and the error says why. Herald's own package.json and node_modules are never touched.
 */
export async function installPlugin(dir: string, spec: string, o: PluginDirOptions = {}): Promise<InstallResult> {
  const given = spec.trim();
  if (!given)
    throw new PluginDirError(
      'Name a plugin to install: a tarball (npm pack output), a directory holding its package.json, or a package name.',
    );
  const abs = path.resolve(given.replace(/^~(?=[\\/])/, process.env.HOME ?? '~'));
  ensurePluginDir(dir);
  const store = path.join(dir, 'packages');
  let npmSpec: string;
  let copied: string | undefined;
  if (looksLikePath(given) || fs.existsSync(abs)) {
    const st = fs.statSync(abs, { throwIfNoEntry: false });
    if (!st) throw new PluginDirError(`There is no file or directory "${abs}" to install.`);
    if (st.isDirectory()) {
      if (!fs.existsSync(path.join(abs, 'package.json')))
        throw new PluginDirError(
          `The directory "${abs}" has no package.json: name the plugin's own directory, a tarball made ` +
            'with npm pack, or a package name.',
        );
      checkHerald(readJson(path.join(abs, 'package.json')), `The directory "${abs}"`);
      // Packed like a publish (its prepack builds it), so the plugin directory keeps a copy of its own.
      const out = await npm(abs, ['pack', '--json', '--pack-destination', store], { ...o, onOutput: undefined }).catch(
        (err: Error) => {
          throw new PluginDirError(`Packing "${abs}" failed (does it build? try npm run build there): ${err.message}`);
        },
      );
      const packed = JSON.parse(out.slice(out.indexOf('['))) as { filename: string }[];
      copied = path.join(store, path.basename(packed[0]!.filename));
    } else {
      checkHerald(readPackedManifest(abs), `"${abs}"`);
      copied = path.join(store, path.basename(abs));
      if (path.resolve(copied) !== abs) fs.copyFileSync(abs, copied);
    }
    npmSpec = `file:packages/${path.basename(copied)}`;
  } else {
    const name = given.replace(/(?<=.)@[^@/]*$/, '');
    if (!NAME.test(name)) throw new PluginDirError(`"${given}" is neither a file, a directory nor a package name.`);
    npmSpec = given;
  }

  const before = dependencies(dir);
  await npm(dir, ['install', '--save', '--no-audit', '--no-fund', '--legacy-peer-deps', npmSpec], o);
  const after = dependencies(dir);
  const name =
    Object.keys(after).find((k) => after[k] === npmSpec && before[k] !== npmSpec) ??
    Object.keys(after).find((k) => after[k] !== before[k]) ??
    Object.keys(after).find((k) => after[k] === npmSpec) ??
    (copied ? undefined : given.replace(/(?<=.)@[^@/]*$/, ''));
  if (!name || !after[name])
    throw new PluginDirError(
      `npm installed "${given}" but the plugin directory's package.json does not list it; run npm run plugin:list.`,
    );
  linkContract(dir);

  const undo = async (why: string): Promise<never> => {
    if (before[name] === undefined)
      await npm(dir, ['uninstall', '--save', '--no-audit', '--no-fund', '--legacy-peer-deps', name], o).catch(() => {});
    else
      await npm(
        dir,
        ['install', '--save', '--no-audit', '--no-fund', '--legacy-peer-deps', `${name}@${before[name]}`],
        o,
      ).catch(() => {});
    if (copied && !Object.values(dependencies(dir)).includes(`file:packages/${path.basename(copied)}`))
      fs.rmSync(copied, { force: true });
    linkContract(dir);
    throw new PluginDirError(
      `${why} It was not installed${before[name] !== undefined ? '; the version installed before is back' : ''}.`,
    );
  };
  const info = describe(dir, name, after[name]!);
  const herald = readJson(path.join(dir, 'node_modules', name, 'package.json'))?.herald;
  if (!herald) return undo(`"${name}" is not a Herald plugin: its package.json has no "herald" block.`);
  if (herald.apiVersion !== PLUGIN_API_VERSION)
    return undo(
      `"${name}" speaks plugin API version ${String(herald.apiVersion)}, but this Herald speaks version ` +
        `${PLUGIN_API_VERSION}.`,
    );
  // What the service will do at boot: import it from here and run the plugin validator.
  const { loadPlugins } = await import('./loader.ts');
  let warnings: InstallResult['warnings'] = [];
  try {
    const [loaded] = await loadPlugins([name], { pluginDir: dir });
    warnings = loaded?.warnings ?? [];
  } catch (err) {
    return undo((err as Error).message);
  }
  for (const file of fs.readdirSync(store)) {
    // Tarballs no dependency names any more (an older version of this plugin) go.
    if (!Object.values(after).includes(`file:packages/${file}`)) fs.rmSync(path.join(store, file), { force: true });
  }
  return { ...info, warnings };
}

/** Removes an installed plugin from the directory (and its tarball). Throws when it is not there. */
export async function removePlugin(dir: string, name: string, o: PluginDirOptions = {}): Promise<InstalledPlugin> {
  const deps = dependencies(dir);
  const spec = deps[name];
  if (spec === undefined) {
    const names = Object.keys(deps);
    throw new PluginDirError(
      `"${name}" is not installed in the plugin directory ` +
        `${dir}${names.length ? `; installed there: ${names.join(', ')}` : ' (it holds no plugin)'}.`,
    );
  }
  const info = describe(dir, name, spec);
  await npm(dir, ['uninstall', '--save', '--no-audit', '--no-fund', '--legacy-peer-deps', name], o);
  const m = /^file:packages\/([^/\\]+)$/.exec(spec);
  if (m && !Object.values(dependencies(dir)).includes(spec))
    fs.rmSync(path.join(dir, 'packages', m[1]!), { force: true });
  linkContract(dir);
  return info;
}

/**
 * The plugin directory from the environment, as the service computes it: SERVICE_PLUGIN_DIR
 * (relative to the data directory), else `<SERVICE_DATA_DIR>/plugins`.
 */
export function pluginDirFromEnv(env: NodeJS.ProcessEnv = process.env): string {
  return path.resolve(path.resolve(env.SERVICE_DATA_DIR || '/data'), env.SERVICE_PLUGIN_DIR || 'plugins');
}
