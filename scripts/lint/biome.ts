// Biome's lint rules (biome.jsonc), run through Biome's WebAssembly build (@biomejs/js-api with
// @biomejs/wasm-nodejs) rather than its CLI: the CLI is a native binary per platform, and the
// registry this project installs from lacks most of those packages, so `npm ci` could not install
// it (docs/decisions/dependencies.md).
//
// Reads biome.jsonc, checks every file its `files.includes` selects, prints one line per diagnostic
// (file:line:column, rule, message) and exits 1 on any error or warning, as `biome check
// --error-on-warnings` would: the lint rules, and (when the formatter is on) that the file is as
// the formatter writes it with its imports sorted.
// Usage: node scripts/lint/biome.ts [--write] [root] [file...]. With files, checks those (paths
// relative to root) instead of the whole tree; biome.jsonc's includes still decide which of them
// are checked. --write (`npm run format`) first rewrites each file as the formatter would.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { Biome, type Configuration, type Diagnostic } from '@biomejs/js-api/nodejs';

export interface Finding {
  file: string;
  line: number;
  column: number;
  rule: string;
  severity: string;
  message: string;
}

/** JSON with comments and trailing commas, as Biome reads biome.jsonc. */
export function parseJsonc(text: string): unknown {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      const start = i;
      for (i++; i < text.length && text[i] !== '"'; i++) if (text[i] === '\\') i++;
      out += text.slice(start, i + 1);
    } else if (c === '/' && text[i + 1] === '/') {
      while (i < text.length && text[i] !== '\n') i++;
      out += '\n';
    } else if (c === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      out += text.slice(i, end < 0 ? text.length : end + 2).replace(/[^\n]/g, ' ');
      i = end < 0 ? text.length : end + 1;
    } else out += c;
  }
  return JSON.parse(out.replace(/,(\s*[}\]])/g, '$1'));
}

/** Biome's glob subset: `**` any folders, `*` within one segment; a pattern without `/` and `*`
 *  (e.g. `test-output`) or ending in a folder name also matches everything under it. */
function globToRegExp(glob: string): RegExp {
  let re = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i];
    if (c === '*' && glob[i + 1] === '*') {
      const slash = glob[i + 2] === '/';
      re += slash ? '(?:.*/)?' : '.*';
      i += slash ? 2 : 1;
    } else if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else re += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${re}(?:/.*)?$`);
}

/** The files `files.includes` selects under root: positive globs, less the `!` ones. */
export function includedFiles(root: string, includes: string[]): string[] {
  const positive = includes.filter((g) => !g.startsWith('!')).map(globToRegExp);
  const negative = includes.filter((g) => g.startsWith('!')).map((g) => globToRegExp(g.replace(/^!+/, '')));
  const out: string[] = [];
  const walk = (rel: string) => {
    for (const entry of fs.readdirSync(path.join(root, rel), { withFileTypes: true })) {
      const child = rel ? `${rel}/${entry.name}` : entry.name;
      if (entry.name === '.git' || negative.some((re) => re.test(child))) continue;
      if (entry.isDirectory()) walk(child);
      else if (positive.some((re) => re.test(child))) out.push(child);
    }
  };
  walk('');
  return out.sort();
}

function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let k = text.indexOf('\n'); k >= 0 && k < offset; k = text.indexOf('\n', k + 1)) {
    line++;
    lineStart = k + 1;
  }
  return { line, column: offset - lineStart + 1 };
}

/** UTF-8 byte offset (Biome's spans) to a string index. */
function byteToIndex(text: string, byte: number): number {
  return Buffer.from(text, 'utf8').subarray(0, byte).toString('utf8').length;
}

function loadConfig(root: string): Configuration {
  const config = parseJsonc(fs.readFileSync(path.join(root, 'biome.jsonc'), 'utf8')) as Configuration & {
    $schema?: string;
  };
  delete config.$schema;
  return config;
}

/** The parts of the js-api's Biome object it does not type: the workspace, and a file opened for one call. */
interface BiomeInternals {
  workspace: { fixFile(p: Record<string, unknown>): { code: string } };
  withFile<T>(projectKey: number, path: string, content: string, fn: (path: unknown) => T): T;
}

/**
 * The text as Biome's formatter writes it, imports sorted by the organizeImports assist and nothing
 * else changed (no lint fix is applied). The same as `biome check --write` with only those two.
 */
function formatted(biome: Biome, projectKey: number, file: string, text: string): string {
  const b = biome as unknown as BiomeInternals;
  return b.withFile(
    projectKey,
    file,
    text,
    (p) =>
      b.workspace.fixFile({
        projectKey,
        path: p,
        fixFileMode: 'safeFixes',
        shouldFormat: true,
        ruleCategories: ['action'],
        only: ['assist/source/organizeImports'],
      }).code,
  );
}

/** Lints `files` (relative to root) in this thread; with `write`, first rewrites each as the formatter would. */
function lintFiles(root: string, files: string[], write = false): Finding[] {
  const biome = new Biome();
  const { projectKey } = biome.openProject('');
  try {
    biome.applyConfiguration(projectKey, loadConfig(root));
  } catch (err) {
    throw new Error(`biome.jsonc is not a valid Biome ${BIOME_VERSION} configuration: ${JSON.stringify(err)}`);
  }
  const findings: Finding[] = [];
  const formatting = loadConfig(root).formatter?.enabled !== false;
  for (const file of files) {
    let text = fs.readFileSync(path.join(root, file), 'utf8');
    if (formatting) {
      const want = formatted(biome, projectKey, file, text);
      if (want !== text && write) {
        fs.writeFileSync(path.join(root, file), want);
        text = want;
      } else if (want !== text) {
        const a = text.split('\n');
        const b = want.split('\n');
        let line = 0;
        while (line < a.length && a[line] === b[line]) line++;
        findings.push({
          file,
          line: line + 1,
          column: 1,
          rule: 'format',
          severity: 'error',
          message: 'not as the formatter writes it (line width 120, imports sorted): run `npm run format`',
        });
      }
    }
    const { diagnostics } = biome.lintContent(projectKey, text, { filePath: file });
    for (const d of diagnostics as Diagnostic[]) {
      if (d.severity !== 'warning' && d.severity !== 'error' && d.severity !== 'fatal') continue;
      const span = d.location.span;
      const { line, column } = span ? lineAndColumn(text, byteToIndex(text, span[0])) : { line: 1, column: 1 };
      findings.push({ file, line, column, rule: d.category ?? 'biome', severity: d.severity, message: d.description });
    }
  }
  biome.shutdown();
  return findings;
}

const BIOME_VERSION = JSON.parse(
  fs.readFileSync(path.join(import.meta.dirname, '../../node_modules/@biomejs/wasm-nodejs/package.json'), 'utf8'),
).version as string;

/** Lints what biome.jsonc includes under root (or those of `only`), split over worker threads:
 *  the WebAssembly build runs on one thread, about 15 ms a file. */
export async function lint(
  root: string,
  only?: string[],
  write = false,
): Promise<{ findings: Finding[]; files: number }> {
  root = path.resolve(root);
  const includes = (loadConfig(root).files?.includes ?? ['**']) as string[];
  let files = includedFiles(root, includes);
  if (only) {
    const wanted = new Set(only.map((f) => path.relative(root, path.resolve(root, f)).split(path.sep).join('/')));
    files = files.filter((f) => wanted.has(f));
  }
  const threads = Math.max(1, Math.min(os.availableParallelism(), 4, Math.ceil(files.length / 50)));
  if (threads === 1) return { findings: lintFiles(root, files, write), files: files.length };
  const chunks: string[][] = Array.from({ length: threads }, () => []);
  files.forEach((f, k) => chunks[k % threads].push(f));
  const results = await Promise.all(
    chunks.map(
      (chunk) =>
        new Promise<Finding[]>((resolve, reject) => {
          const worker = new Worker(new URL(import.meta.url), { workerData: { root, files: chunk, write } });
          worker.once('message', resolve);
          worker.once('error', reject);
        }),
    ),
  );
  const findings = results
    .flat()
    .sort((a, b) => a.file.localeCompare(b.file) || a.line - b.line || a.column - b.column);
  return { findings, files: files.length };
}

if (!isMainThread && workerData?.files) {
  parentPort!.postMessage(lintFiles(workerData.root, workerData.files, workerData.write));
} else if (import.meta.main) {
  const started = performance.now();
  const args = process.argv.slice(2);
  const write = args.includes('--write');
  const [rootArg, ...only] = args.filter((a) => a !== '--write');
  const root = rootArg ?? path.resolve(import.meta.dirname, '../..');
  const { findings, files } = await lint(root, only.length > 0 ? only : undefined, write);
  for (const f of findings) console.error(`${f.file}:${f.line}:${f.column}: ${f.severity} ${f.rule}: ${f.message}`);
  const took = `${((performance.now() - started) / 1000).toFixed(1)}s`;
  if (findings.length > 0) {
    console.error(`biome ${BIOME_VERSION}: ${findings.length} diagnostic(s) in ${files} files (${took})`);
    process.exit(1);
  }
  console.log(`biome ${BIOME_VERSION}: ${files} files, no diagnostics (${took})`);
}
