// No open record typed `any` in the service or the web client: a database row, a request's data or an API
// answer is typed from its definition (a `…DbRow` type, a `Static<>` of its schema) or read as
// `Record<string, unknown>` and narrowed where it is used. `Record<string, any>` lets any field be read as
// anything, which is how rows cast field by field drifted from their tables (issue 30).
//
// Flagged, in core/src's and core/web/src's .ts/.tsx files other than tests: `Record<string, any>` (spaces
// and line breaks anywhere inside). Strings and comments are skipped (the lexer of request-casts.ts).
// Run by `npm run lint`.
// Usage: node scripts/lint/untyped-rows.ts [root] [file...]. With files, checks those (paths relative to
// root) instead. Prints file:line: message for each and exits 1 if any.
import fs from 'node:fs';
import path from 'node:path';
import { isPunct, lineAt, sourceFiles, tokenize } from './request-casts.ts';

/** The folders checked, relative to the root. */
export const CHECKED_DIRS = ['core/src', 'core/web/src'];

export interface UntypedRecord {
  file: string;
  line: number;
  message: string;
}

/** The `Record<string, any>` types in one file's code, by line. */
export function untypedRecords(code: string): { line: number; message: string }[] {
  const tokens = tokenize(code);
  const found: { line: number; message: string }[] = [];
  for (let k = 0; k + 5 < tokens.length; k++) {
    const [r, lt, s, comma, a, gt] = tokens.slice(k, k + 6);
    if (r?.kind !== 'name' || r.value !== 'Record' || !isPunct(lt, '<')) continue;
    if (s?.value !== 'string' || !isPunct(comma, ',') || a?.value !== 'any' || !gt?.value.startsWith('>')) continue;
    found.push({
      line: lineAt(code, r.start),
      message: 'Record<string, any>: name the row or answer type, or read Record<string, unknown> and narrow it',
    });
  }
  return found;
}

/** The untyped records in core/src and core/web/src under root (or in `only`, paths relative to root). */
export function checkUntypedRecords(root: string, only?: string[]): UntypedRecord[] {
  const files = only?.length
    ? only.map((f) => path.resolve(root, f)).filter((f) => !/\.test\.[mc]?tsx?$/.test(f))
    : CHECKED_DIRS.flatMap((dir) => sourceFiles(root, dir, /\.[mc]?tsx?$/));
  const out: UntypedRecord[] = [];
  for (const file of files.sort()) {
    const rel = path.relative(root, file).split(path.sep).join('/');
    for (const c of untypedRecords(fs.readFileSync(file, 'utf8'))) out.push({ file: rel, ...c });
  }
  return out;
}

if (import.meta.main) {
  const [root = process.cwd(), ...only] = process.argv.slice(2);
  const found = checkUntypedRecords(path.resolve(root), only);
  for (const c of found) console.log(`${c.file}:${c.line}: ${c.message}`);
  if (found.length) {
    console.log(`${found.length} Record<string, any> type(s)`);
    process.exit(1);
  }
}
