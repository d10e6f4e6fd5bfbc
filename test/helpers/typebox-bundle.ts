/**
 * The test processes' typebox as a few bundled files instead of its ~700 modules. A test file that imports the
 * service from source loaded typebox module by module, each through the resolver and tap's file-recording load
 * hook: a file that starts one service took 6.8 s of CPU with them, 6.1 s with this (~400 such processes a run).
 *
 * Imported first in every test process (package.json "tap" "node-arg"): builds once, with rolldown, the entries
 * typebox exports (its package.json "exports") into node_modules/.cache/herald-typebox/<version>, without
 * tree-shaking (every module's code and side effects as published), and answers `typebox` and `typebox/<subpath>`
 * with those files. Still one copy of typebox in a process, as the built service has its own bundled copy
 * (scripts/build/shared.ts). Run alone (`node test/helpers/typebox-bundle.ts`), it only builds, if needed.
 */
import fs from 'node:fs';
import { registerHooks } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** Bumped when what is built changes, so that an older bundle of the same typebox version is not used. */
const LAYOUT = 1;

const ROOT = path.resolve(import.meta.dirname, '../..');
const PACKAGE = 'typebox';

// The installed package, as the sources would resolve it (before the hook below answers for it).
const entry = fileURLToPath(import.meta.resolve(PACKAGE));
let pkgDir = path.dirname(entry);
while (!fs.existsSync(path.join(pkgDir, 'package.json'))) {
  if (pkgDir === path.dirname(pkgDir)) throw new Error(`no package.json above ${entry}`);
  pkgDir = path.dirname(pkgDir);
}
const pkg = JSON.parse(fs.readFileSync(path.join(pkgDir, 'package.json'), 'utf8')) as {
  version: string;
  exports: Record<string, { import?: string; default?: string } | string>;
};
const dir = path.join(ROOT, 'node_modules/.cache/herald-typebox', `${pkg.version}-${LAYOUT}`);
const MAP = 'entries.json';

/** Specifier (`typebox`, `typebox/value`) → its bundled file, relative to `dir`. */
async function bundle(): Promise<Record<string, string>> {
  const done = path.join(dir, MAP);
  if (fs.existsSync(done)) return JSON.parse(fs.readFileSync(done, 'utf8')) as Record<string, string>;
  const input: Record<string, string> = {};
  const entries: Record<string, string> = {};
  for (const [sub, target] of Object.entries(pkg.exports)) {
    const file = typeof target === 'string' ? target : (target.import ?? target.default);
    if (!file?.endsWith('.mjs') && !file?.endsWith('.js')) continue; // ./package.json and the like
    const name = sub === '.' ? 'index' : sub.slice(2).replaceAll('/', '-');
    input[name] = path.join(pkgDir, file);
    entries[sub === '.' ? PACKAGE : `${PACKAGE}/${sub.slice(2)}`] = `${name}.mjs`;
  }
  const { build } = await import('rolldown');
  // Built aside and moved in place: test processes started together may each build; the first move wins.
  const tmp = `${dir}.tmp-${process.pid}`;
  fs.rmSync(tmp, { recursive: true, force: true });
  await build({
    input,
    platform: 'node',
    treeshake: false,
    logLevel: 'warn',
    output: { dir: tmp, format: 'esm', entryFileNames: '[name].mjs', chunkFileNames: 'chunk-[hash].mjs' },
  });
  fs.writeFileSync(path.join(tmp, MAP), JSON.stringify(entries));
  fs.mkdirSync(path.dirname(dir), { recursive: true });
  try {
    fs.renameSync(tmp, dir);
  } catch {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  return JSON.parse(fs.readFileSync(done, 'utf8')) as Record<string, string>;
}

const urls = new Map(
  Object.entries(await bundle()).map(([spec, file]) => [spec, pathToFileURL(path.join(dir, file)).href]),
);

registerHooks({
  resolve(specifier, context, nextResolve) {
    const url = urls.get(specifier);
    return url ? { url, format: 'module', shortCircuit: true } : nextResolve(specifier, context);
  },
});
