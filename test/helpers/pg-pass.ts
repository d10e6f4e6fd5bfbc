/**
 * Which test files the PostgreSQL pass of scripts/test.sh runs: those under test/ whose run can
 * differ from their SQLite run. A test process learns the backend only from `HERALD_TEST_DB` and
 * `HERALD_TEST_PG_URL` (read by test/helpers/service.ts and a few supports and tests); a file that
 * reaches none of their readers through its imports runs the same code against the same SQLite
 * files in both passes, so it runs once, in the SQLite pass.
 *
 * Left out of the second pass, whatever it imports: test/scale (it runs its replicas on PostgreSQL
 * in either pass), test/lint (it reads source files only), and the browser tests (those that drive
 * Chromium through test/web/browser.ts: they check the web client; on a 2-core machine they were a
 * quarter of the second pass). When they were left out (November 2026), a log of both sets'
 * requests showed every API path they call also called by the files this pass keeps; a browser test
 * that needs a route no API test calls should bring that API test along.
 * A file with an import whose specifier is computed (which cannot be followed) stays in.
 * When a file outside test/ names those variables, nothing can be told from test/ alone and every
 * file stays in.
 *
 * Usage: `npx node test/helpers/pg-pass.ts [file-or-folder ...]` prints the selected files, one a
 * line (with no arguments, from every test file under test/).
 */
import fs from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '../..');
const SELF = path.relative(ROOT, import.meta.filename);
const NAMES = /\b(HERALD_TEST_DB|HERALD_TEST_PG_URL|TEST_DB)\b/;
const SOURCE = /\.(ts|mts|cts|js|mjs|cjs)$/;
const SKIP_DIRS = new Set(['node_modules', 'dist', '.git', '.tap', 'fixtures']);

function walk(dir: string, out: string[] = []): string[] {
  for (const e of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
    const rel = path.join(dir, e.name);
    if (e.isDirectory()) {
      if (!SKIP_DIRS.has(e.name) && !e.name.startsWith('dist.')) walk(rel, out);
    } else if (SOURCE.test(e.name)) out.push(rel);
  }
  return out;
}

const texts = new Map<string, string | undefined>();
function text(rel: string): string | undefined {
  if (!texts.has(rel)) {
    let t: string | undefined;
    try {
      t = fs.readFileSync(path.join(ROOT, rel), 'utf8');
    } catch {
      t = undefined;
    }
    texts.set(rel, t);
  }
  return texts.get(rel);
}

/** A reader of the backend choice outside test/ (the runner and this selector aside). */
function readerOutsideTest(): string | undefined {
  for (const dir of ['core', 'plugins', 'packages', 'scripts'])
    if (fs.existsSync(path.join(ROOT, dir)))
      for (const f of walk(dir)) if (f !== SELF && NAMES.test(text(f) ?? '')) return f;
  return undefined;
}

const LITERAL = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)(['"`])([^'"`$]+)\1/g;
const COMPUTED = /\bimport\s*\(\s*(?!(['"`])[^'"`$]*\1\s*[,)])/;

/** True when `file` or anything it imports by a relative path reads the backend choice (or cannot be followed). */
function reachesReader(file: string): boolean {
  const seen = new Set<string>();
  const stack = [file];
  while (stack.length) {
    const f = stack.pop()!;
    if (seen.has(f)) continue;
    seen.add(f);
    const src = text(f);
    if (src === undefined) continue;
    if (NAMES.test(src)) return true;
    if (f.startsWith('test/') && COMPUTED.test(src)) return true;
    for (const m of src.matchAll(LITERAL)) {
      const spec = m[2]!;
      if (spec.startsWith('.')) stack.push(path.normalize(path.join(path.dirname(f), spec)));
    }
  }
  return false;
}

const given = process.argv.slice(2).map((a) => path.normalize(a));
const isDir = (f: string) => fs.statSync(path.join(ROOT, f), { throwIfNoEntry: false })?.isDirectory() ?? false;
const files = (given.length ? given : ['test']).flatMap((f) =>
  isDir(f) ? walk(f).filter((x) => x.endsWith('.test.ts')) : [f],
);
/** A test that drives Chromium: it imports test/web/browser.ts. */
const BROWSER = path.join('test', 'web', 'browser.ts');
const drivesBrowser = (file: string) =>
  [...(text(file) ?? '').matchAll(LITERAL)].some(
    (m) => m[2]!.startsWith('.') && path.normalize(path.join(path.dirname(file), m[2]!)) === BROWSER,
  );

const everything = readerOutsideTest() !== undefined;
for (const f of files.sort()) {
  if (!f.startsWith('test/') || f.startsWith('test/scale/') || f.startsWith('test/lint/')) continue;
  if (drivesBrowser(f)) continue;
  if (everything || reachesReader(f)) process.stdout.write(`${f}\n`);
}
