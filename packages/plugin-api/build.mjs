// Builds the publishable package: JavaScript and declarations in dist/, from src/, with the
// workspace's TypeScript (7, native). Sources import each other as `./x.ts` (so Node runs them in
// the repository); the emitted JavaScript imports `./x.js`, and so must the declarations.
//
// Where TypeScript's native binary is missing (an install with optional dependencies omitted),
// the JavaScript is produced by Node's own type stripping instead (the sources use erasable syntax
// only) and no declarations are written: enough to run the service, not to publish.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import module from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const src = path.join(here, 'src');
const dist = path.join(here, 'dist');
// Built beside dist/ first, then moved in file by file (each rename replaces one file at once): a
// process importing the package while it is rebuilt (npm pack's prepack, beside running tests)
// never finds dist/ empty or a file half written.
const out = path.join(here, `dist.build-${process.pid}`);
const toJs = (text) => text.replace(/((?:from|import)\s*\(?\s*['"]\.{1,2}\/[^'"]+)\.ts(['"])/g, '$1.js$2');

fs.rmSync(out, { recursive: true, force: true });
const tsDir = path.dirname(module.createRequire(import.meta.url).resolve('typescript/package.json'));
let native = true;
try {
  const { default: getExePath } = await import(pathToFileURL(path.join(tsDir, 'lib', 'getExePath.js')).href);
  if (!fs.existsSync(getExePath())) native = false;
} catch {
  native = false;
}

if (native) {
  const r = spawnSync(process.execPath, [path.join(tsDir, 'bin', 'tsc'), '-p', path.join(here, 'tsconfig.build.json'), '--outDir', out], { stdio: 'inherit' });
  if (r.status !== 0) process.exit(r.status ?? 1);
  for (const f of fs.readdirSync(out)) {
    if (f.endsWith('.d.ts')) fs.writeFileSync(path.join(out, f), toJs(fs.readFileSync(path.join(out, f), 'utf8')));
  }
} else {
  process.emitWarning('TypeScript\'s native compiler is not installed: @herald/plugin-api is built by stripping types, without declarations (not for publishing).');
  fs.mkdirSync(out, { recursive: true });
  for (const f of fs.readdirSync(src)) {
    if (!f.endsWith('.ts') || f.endsWith('.test.ts') || f.endsWith('.d.ts')) continue;
    const js = module.stripTypeScriptTypes(fs.readFileSync(path.join(src, f), 'utf8'), { mode: 'strip' });
    fs.writeFileSync(path.join(out, f.replace(/\.ts$/, '.js')), toJs(js));
  }
}

fs.mkdirSync(dist, { recursive: true });
const built = new Set(fs.readdirSync(out));
for (const f of built) fs.renameSync(path.join(out, f), path.join(dist, f));
for (const f of fs.readdirSync(dist)) {
  if (!built.has(f)) fs.rmSync(path.join(dist, f), { recursive: true, force: true });
}
fs.rmSync(out, { recursive: true, force: true });
