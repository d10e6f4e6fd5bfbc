/**
 * The resolve hook of the built service (installed by its launcher and by its worker-thread entries before
 * anything else loads):
 * - a plugin's `import 'typebox'` (or a subpath, or the plugin contract) is answered with the built service's own
 *   entry for it, so the plugin shares the service's copy instead of loading the package's 683 modules a second
 *   time;
 * - the import of a first-party plugin by its package name is answered with the build's file for it
 *   (plugins/<dir>/index.js), when Node would have found the very source the build was made from (a package of
 *   that name installed elsewhere, e.g. another version in node_modules, loads from its own files as before);
 * - a package a built plugin imports (its lazily loaded libraries) resolves from the plugin's source directory,
 *   exactly as it would from source.
 * Imports from within the build and every other specifier resolve as Node would.
 */
import fs from 'node:fs';
import module from 'node:module';
import { SHARED_ENTRIES } from './shared.ts';

/** What build.json says of the first-party plugins built (scripts/build/server.ts). */
export interface BuiltPlugin {
  /** The package's directory, relative to the repository's root (`plugins/<dir>`). */
  dir: string;
  /** Its entry's source file, relative to the root: what Node resolves the package name to. */
  source: string;
  /** Its built file, relative to the build's directory. */
  file: string;
}

const BARE = /^(?![./]|[a-z][a-z0-9+.-]*:)/i;

export function installSharedResolve(buildUrl: string): void {
  const base = buildUrl.endsWith('/') ? buildUrl : `${buildUrl}/`;
  const urls = new Map(Object.entries(SHARED_ENTRIES).map(([spec, file]) => [spec, new URL(file, base).href]));
  let info: { root?: string; plugins?: Record<string, BuiltPlugin> } = {};
  try {
    info = JSON.parse(fs.readFileSync(new URL('build.json', base), 'utf8')) as typeof info;
  } catch {
    /* no build.json (a build in the making): no plugin is answered from the build */
  }
  const root = new URL(info.root ?? '../../', base);
  const plugins = new Map(
    Object.entries(info.plugins ?? {}).map(([name, p]) => [
      name,
      { source: new URL(p.source, root).href, url: new URL(p.file, base).href },
    ]),
  );
  // A built plugin's files sit in plugins/<dir>/ of the build; its own imports resolve from plugins/<dir>/ of the root.
  const sourceDirs = new Map(
    Object.values(info.plugins ?? {}).map((p) => [
      new URL(`${p.file.slice(0, p.file.lastIndexOf('/') + 1)}`, base).href,
      new URL(`${p.dir}/package.json`, root).href,
    ]),
  );
  module.registerHooks({
    resolve(specifier, context, nextResolve) {
      const parent = context.parentURL;
      const plugin = plugins.get(specifier);
      if (plugin !== undefined) {
        const found = nextResolve(specifier, context);
        return found.url === plugin.source ? { url: plugin.url, format: 'module', shortCircuit: true } : found;
      }
      const url = urls.get(specifier);
      if (url !== undefined && !parent?.startsWith(base)) return { url, format: 'module', shortCircuit: true };
      if (parent?.startsWith(`${base}plugins/`) && BARE.test(specifier) && !module.isBuiltin(specifier)) {
        const dir = parent.slice(0, parent.lastIndexOf('/') + 1);
        const from = sourceDirs.get(dir);
        if (from !== undefined) return nextResolve(specifier, { ...context, parentURL: from });
      }
      return nextResolve(specifier, context);
    },
  });
}
