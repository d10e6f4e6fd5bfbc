// No line over 120 characters, in the files biome.jsonc's `files.includes` selects (the same set
// Biome lints). Biome's formatter (line width 120) breaks code, but not a long string literal or
// comment; this check catches those. Characters are counted as Unicode code points, not bytes nor
// UTF-16 units, so a line of accented text or emoji is measured as it reads.
//
// PENDING lists the path prefixes not yet made to comply, each with its reason; their files are
// skipped. Remove an entry once its files pass.
// Usage: node scripts/lint/line-length.ts [root] [file...]. With files, checks those (paths relative
// to root) instead of the whole tree; the includes and PENDING still decide which are checked.
// Prints file:line: length for each line over the limit and exits 1 if any.
import fs from 'node:fs';
import path from 'node:path';
import { includedFiles, parseJsonc } from './biome.ts';

export const MAX_LINE_LENGTH = 120;

/** Path prefixes (relative to the root, `/`-separated) skipped for now, each with why. */
export const PENDING: ReadonlyArray<{ prefix: string; reason: string }> = [];

export interface LongLine {
  file: string;
  line: number;
  length: number;
}

/** Length of a line in characters (code points). */
export function lineLength(line: string): number {
  let n = 0;
  for (const _ of line) n++;
  return n;
}

/** The lines of `text` longer than `max` characters (a trailing `\r` is not counted). */
export function longLines(text: string, max = MAX_LINE_LENGTH): { line: number; length: number }[] {
  const out: { line: number; length: number }[] = [];
  text.split('\n').forEach((raw, k) => {
    const length = lineLength(raw.endsWith('\r') ? raw.slice(0, -1) : raw);
    if (length > max) out.push({ line: k + 1, length });
  });
  return out;
}

/** Checks what biome.jsonc includes under root (or those of `only`), less the pending prefixes. */
export function checkLineLength(
  root: string,
  only?: string[],
  pending: ReadonlyArray<{ prefix: string }> = PENDING,
  max = MAX_LINE_LENGTH,
): { findings: LongLine[]; files: number } {
  root = path.resolve(root);
  const config = parseJsonc(fs.readFileSync(path.join(root, 'biome.jsonc'), 'utf8')) as {
    files?: { includes?: string[] };
  };
  let files = includedFiles(root, config.files?.includes ?? ['**']);
  if (only) {
    const wanted = new Set(only.map((f) => path.relative(root, path.resolve(root, f)).split(path.sep).join('/')));
    files = files.filter((f) => wanted.has(f));
  }
  files = files.filter((f) => !pending.some((p) => f.startsWith(p.prefix)));
  const findings: LongLine[] = [];
  for (const file of files) {
    for (const l of longLines(fs.readFileSync(path.join(root, file), 'utf8'), max)) findings.push({ file, ...l });
  }
  return { findings, files: files.length };
}

if (import.meta.main) {
  const [rootArg, ...only] = process.argv.slice(2);
  const root = rootArg ?? path.resolve(import.meta.dirname, '../..');
  const { findings, files } = checkLineLength(root, only.length > 0 ? only : undefined);
  for (const f of findings) console.error(`${f.file}:${f.line}: ${f.length} characters`);
  if (findings.length > 0) {
    console.error(
      `line length: ${findings.length} line(s) over ${MAX_LINE_LENGTH} characters in ${files} files ` +
        `(${PENDING.length} pending prefix(es) skipped)`,
    );
    process.exit(1);
  }
  console.log(`line length: ${files} files, no line over ${MAX_LINE_LENGTH} characters`);
}
