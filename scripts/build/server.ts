/**
 * Builds the service that `npm start` runs (`npm run build:server`, also run by `prepare`): core/src/run.ts and
 * what it imports, the npm dependencies included, bundled with rolldown into core/dist. The boot then loads a few
 * tens of files instead of ~1,800 modules (each ES module costs ~10 KB of private memory besides its code:
 * scripts/bench/RESULTS.md, issue 27's goal 1). Dynamic imports stay chunks of their own, loaded on first use
 * (test/core/lazy-loading.test.ts lists what must stay lazy).
 *
 * Entries (core/dist/<name>.js):
 * - main: the launcher (scripts/build/main.ts): compile cache, freshness check, the plugins' resolve hook (hook).
 * - service: core/src/run.ts.
 * - worker-*: the worker threads' entries, each behind the same resolve hook.
 * - shared-*: typebox, its subpaths and the plugin contract, re-exported for the other plugins (shared.ts).
 * - plugins/<dir>/index: each first-party plugin (PLUGINS), which the launcher's resolve hook answers its name with.
 *
 * Files found at run time next to a source file (locales, templates, the web client, the .mjs workers, package.json)
 * keep being found there: `import.meta.url` in core/src is replaced by the URL of the source file itself, relative
 * to the build's directory, so the repository must keep core/src beside core/dist (it does: the build is a cache of
 * the sources, not a package of its own). Native and run-time-resolved packages stay external (EXTERNAL).
 *
 * Written to core/dist.build-<pid> and then moved in place of core/dist; build.json lists the inputs so that the
 * launcher can tell a build older than its sources.
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { build, type Plugin } from 'rolldown';
import { parseSync } from 'rolldown/utils';
import { FIRST_PARTY_PLUGINS } from '../../core/src/config/config.ts';
import type { BuiltPlugin } from './hook.ts';
import { SHARED_ENTRIES } from './shared.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
// `--out <dir>`: another directory than core/dist (a test's build); paths to the sources stay relative to it.
const outAt = process.argv.indexOf('--out');
const OUT = outAt > 0 ? path.resolve(process.argv[outAt + 1] ?? '') : path.join(ROOT, 'core/dist');
const CORE_SRC = path.join(ROOT, 'core/src') + path.sep;
const PACKAGES = path.join(ROOT, 'packages') + path.sep;
const posix = (p: string) => p.split(path.sep).join('/');
const inNodeModules = (id: string) => id.includes(`${path.sep}node_modules${path.sep}`);

/**
 * The first-party plugins (the core's FIRST_PARTY_PLUGINS), each built into plugins/<dir>/index.js of the build
 * (its dynamic imports of its own files chunks beside it), which the resolve hook (hook.ts) answers the plugin's
 * package name with: the boot loads one file per plugin instead of its 6 to 15 source modules. The package's
 * directory is the one Node finds by the name from the core (a workspace link in node_modules); its entry is the
 * package's `exports` `.` (or `main`). Its imports of typebox and the plugin contract are bundled with the core's
 * own (one copy); the packages it imports besides stay external, loaded from node_modules (lazily, as from source).
 */
const PLUGINS = FIRST_PARTY_PLUGINS.map((name) => {
  const req = createRequire(path.join(ROOT, 'core/src/plugins/resolve.ts'));
  const dir = fs.realpathSync(path.dirname(req.resolve(`${name}/package.json`)));
  const pkg = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')) as {
    exports?: Record<string, unknown>;
    main?: string;
  };
  const rel = (pkg.exports?.['.'] as string | undefined) ?? pkg.main;
  if (typeof rel !== 'string' || !dir.startsWith(`${ROOT}${path.sep}`))
    throw new Error(`${name}: a first-party plugin is a package of this repository with an "exports" "." file`);
  const relDir = posix(path.relative(ROOT, dir));
  return { name, dir, source: path.resolve(dir, rel), entry: `plugins/${path.basename(dir)}/index`, relDir };
});
const pluginOf = (id: string) => PLUGINS.find((p) => id.startsWith(p.dir + path.sep) && !inNodeModules(id));
/** What a plugin may import from the core's copy: the contract and typebox (bundled, one copy with the core). */
const SHARED_SPEC = /^(typebox|@herald\/plugin-api)(\/|$)/;

/** Worker threads started from a source file by URL: the file, the URL it names, and the entry that replaces it. */
const WORKERS = [
  {
    host: 'core/src/relay/pipeline/dispatch-worker-host.ts',
    file: './dispatch-worker-entry.ts',
    entry: 'worker-dispatch',
  },
  { host: 'core/src/assistant/document-text.ts', file: './pdf-worker.ts', entry: 'worker-pdf' },
  { host: 'core/src/assistant/reports.ts', file: './report-worker.ts', entry: 'worker-report' },
];

/**
 * Not bundled, imported from node_modules at run time as from source: native addons, the packages the core
 * requires by a path resolved at run time (createRequire), and the first-use libraries that find their own files
 * next to their modules (pdfkit's fonts and colour profile, pdf.js) or load drivers by name (the ORM). These load
 * only on first use, so bundling them would save nothing at idle.
 */
const EXTERNAL_PACKAGES = [
  'better-sqlite3',
  'bcrypt',
  'pino-pretty',
  'pdfkit',
  'unpdf',
  'openai',
  'undici',
  'smtp-server',
  'pg',
  'kysely',
  '@mikro-orm/core',
  '@mikro-orm/sql',
  '@mikro-orm/postgresql',
  '@mikro-orm/sqlite',
];
const EXTERNAL = (id: string, importer: string | undefined) =>
  EXTERNAL_PACKAGES.some((p) => id === p || id.startsWith(`${p}/`)) ||
  // A package a first-party plugin imports (its libraries, loaded on first use) stays its own, found from the plugin.
  (importer !== undefined &&
    pluginOf(importer) !== undefined &&
    /^(?![./]|node:)/.test(id) &&
    !path.isAbsolute(id) &&
    !SHARED_SPEC.test(id));

/**
 * Packages the core requires at run time from another package's dependencies (createRequire), which a bundle would
 * then load a second time from node_modules beside its own copy: each is imported instead from the file the
 * package would have found, so the bundle holds one copy.
 */
const PEER_REQUIRES = [
  {
    host: 'core/src/http/openapi.ts',
    pattern: /createRequire\(import\.meta\.resolve\('fastify'\)\)\(\s*'@fastify\/fast-json-stringify-compiler',?\s*\)/,
    from: 'fastify',
    spec: '@fastify/fast-json-stringify-compiler',
  },
];

/** Text of ASCII characters only (a chunk's source V8 can hold one byte a character). */
const ASCII = /^[\0-\x7f]*$/;

const SHARED_PREFIX = 'herald-shared:';
const WORKER_PREFIX = 'herald-worker:';

function heraldPlugin(): Plugin {
  const hook = posix(path.join(import.meta.dirname, 'hook.ts'));
  return {
    name: 'herald-build',
    resolveId(id) {
      if (id.startsWith(SHARED_PREFIX) || id.startsWith(WORKER_PREFIX)) return `\0${id}`;
      return null;
    },
    async load(id) {
      if (id.startsWith(`\0${SHARED_PREFIX}`)) {
        const spec = id.slice(SHARED_PREFIX.length + 1);
        const hasDefault = 'default' in (await import(spec));
        const from = JSON.stringify(spec);
        return `export * from ${from};${hasDefault ? ` export { default } from ${from};` : ''}`;
      }
      if (id.startsWith(`\0${WORKER_PREFIX}`)) {
        const file = path.join(ROOT, id.slice(WORKER_PREFIX.length + 1));
        return (
          `import { installSharedResolve } from ${JSON.stringify(hook)};\n` +
          `installSharedResolve(new URL('./', import.meta.url).href);\n` +
          `await import(${JSON.stringify(posix(file))});\n`
        );
      }
      return null;
    },
    // What charset 'ascii' leaves (it escapes strings, regular expressions and names): a non-ASCII character in a
    // comment kept in the output (a licence's author's name), which would make the whole chunk a two-byte string.
    renderChunk(code, chunk) {
      if (ASCII.test(code)) return null;
      let out = '';
      let at = 0;
      for (const c of parseSync(chunk.fileName, code).comments) {
        const text = code.slice(c.start, c.end);
        if (ASCII.test(text)) continue;
        out +=
          code.slice(at, c.start) +
          text.replace(/[^\0-\x7f]/g, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`);
        at = c.end;
      }
      return { code: out + code.slice(at), map: null };
    },
    transform(code, id) {
      const plugin = pluginOf(id);
      if (!(id.startsWith(CORE_SRC) || plugin || (id.startsWith(PACKAGES) && !inNodeModules(id)))) return null;
      if (!code.includes('import.meta')) return null;
      let out = code;
      const rel = posix(path.relative(ROOT, id));
      PEER_REQUIRES.forEach((p, i) => {
        if (p.host !== rel) return;
        if (!p.pattern.test(out))
          throw new Error(`${rel} no longer requires ${p.spec} as the build expects: update PEER_REQUIRES`);
        const file = createRequire(createRequire(path.join(ROOT, p.host)).resolve(p.from)).resolve(p.spec);
        const name = `__heraldPeer${i}`;
        out = `import ${name} from ${JSON.stringify(posix(file))};\n${out.replace(p.pattern, name)}`;
      });
      if (/import\.meta\.(dirname|filename)/.test(out))
        throw new Error(`${rel} uses import.meta.dirname/filename: the build only rewrites import.meta.url`);
      // The source file's own URL, wherever the chunk that holds it is: paths next to it stay right. A plugin's
      // modules are in its own directory of the build (chunkFileNames), the others at its top.
      const at = plugin ? path.join(OUT, path.dirname(plugin.entry)) : OUT;
      const self = `new URL(${JSON.stringify(posix(path.relative(at, id)))}, import.meta.url).href`;
      out = out.replace(/\bimport\.meta\.url\b/g, self);
      // A worker started from a source file starts the build's entry for it instead, next to the chunk.
      for (const w of WORKERS.filter((x) => x.host === rel)) {
        const from = `new URL('${w.file}', ${self})`;
        if (!out.includes(from)) throw new Error(`${rel} no longer starts its worker as ${from}: update WORKERS`);
        out = out.replaceAll(from, `new URL('./${w.entry}.js', import.meta.url)`);
      }
      return { code: out };
    },
  };
}

const started = Date.now();
const tmp = `${OUT}.build-${process.pid}`;
fs.rmSync(tmp, { recursive: true, force: true });
const input: Record<string, string> = {
  main: path.join(import.meta.dirname, 'main.ts'),
  service: path.join(ROOT, 'core/src/run.ts'),
  // Its own entry (the launcher and the workers import it) so that a test can install it too.
  hook: path.join(import.meta.dirname, 'hook.ts'),
};
for (const w of WORKERS) input[w.entry] = `${WORKER_PREFIX}${posix(path.join(path.dirname(w.host), w.file))}`;
for (const [spec, file] of Object.entries(SHARED_ENTRIES)) input[file.replace(/\.js$/, '')] = `${SHARED_PREFIX}${spec}`;
for (const p of PLUGINS) input[p.entry] = p.source;

const result = await build({
  input,
  platform: 'node',
  cwd: ROOT,
  external: EXTERNAL,
  resolve: { conditionNames: ['herald-source', 'node', 'import', 'module', 'default'] },
  plugins: [heraldPlugin()],
  logLevel: 'warn',
  // A name imported that its module does not export, or a module not found, is an error of the sources (often one
  // caught mid-edit): the build fails rather than leave a reference that throws at run time.
  onLog(level, log, handler) {
    if (log.code === 'MISSING_EXPORT' || log.code === 'UNRESOLVED_IMPORT') handler('error', log);
    else handler(level, log);
  },
  // A module imported both ways (the plugin loader) simply stays in the chunk that imports it statically.
  checks: { ineffectiveDynamicImport: false },
  output: {
    dir: tmp,
    format: 'esm',
    entryFileNames: '[name].js',
    // A chunk of one plugin's own modules goes into that plugin's directory (the hook resolves its imports from the
    // plugin's sources by that directory).
    chunkFileNames: (chunk) => {
      const owners = new Set(chunk.moduleIds.map((id) => pluginOf(id)));
      const [only] = owners;
      return owners.size === 1 && only ? `${path.posix.dirname(only.entry)}/[name]-[hash].js` : '[name]-[hash].js';
    },
    sourcemap: false,
    // V8 keeps each module's source text for as long as the module lives (lazy compilation, toString): one byte a
    // character when the text is all ASCII, two for the whole file when a single character is not (service.js,
    // 1.8 MB, was held as 3.6 MB for 52 lines with an arrow, a dash or a Russian word). Non-ASCII characters are
    // written as escapes, and the sources' doc comments, which only readers of the sources need, are not copied
    // (−8 % of the build); licence and annotation comments stay.
    charset: 'ascii',
    comments: { legal: true, annotation: true, jsdoc: false },
  },
  write: true,
});

const inputs = new Set<string>();
for (const chunk of result.output)
  if (chunk.type === 'chunk')
    for (const id of chunk.moduleIds)
      if (path.isAbsolute(id) && id.startsWith(ROOT) && !inNodeModules(id)) inputs.add(posix(path.relative(ROOT, id)));
// A plugin's package.json says which file its name resolves to (and the hook checks that it still does).
for (const p of PLUGINS) inputs.add(`${p.relDir}/package.json`);
const plugins: Record<string, BuiltPlugin> = Object.fromEntries(
  PLUGINS.map((p) => [p.name, { dir: p.relDir, source: posix(path.relative(ROOT, p.source)), file: `${p.entry}.js` }]),
);
// The sources only: an install or update of the dependencies runs `prepare`, which builds again, and the lockfiles
// change without a new build where nothing needs one (`npm prune --omit=dev` in the image).
const info = { builtAt: started, root: `${posix(path.relative(OUT, ROOT))}/`, plugins, inputs: [...inputs].sort() };
fs.writeFileSync(path.join(tmp, 'build.json'), `${JSON.stringify(info, null, 1)}\n`);
// In place at once: the old build moves aside and is removed (a service already running from it keeps what it
// loaded; a first-use chunk it had not loaded yet would be gone, as a source file replaced under it would).
const old = `${OUT}.old-${process.pid}`;
try {
  if (fs.existsSync(OUT)) fs.renameSync(OUT, old);
  fs.renameSync(tmp, OUT);
} catch (err) {
  // Two builds at once (two services started after an edit): the other one's is in place, as good as this one.
  if (!fs.existsSync(path.join(OUT, 'build.json'))) throw err;
  fs.rmSync(tmp, { recursive: true, force: true });
}
fs.rmSync(old, { recursive: true, force: true });
const files = result.output.filter((o) => o.type === 'chunk').length;
const took = Date.now() - started;
process.stderr.write(
  `built ${posix(path.relative(ROOT, OUT))}: ${files} files from ${inputs.size} sources in ${took} ms\n`,
);
