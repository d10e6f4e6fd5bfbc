// No cast of an event's target in the web client: in a Preact handler `e.currentTarget` is typed by
// the element the handler sits on (`e.currentTarget.value` on an <input>, `.checked`, `.select()`), so
// `(e.target as HTMLInputElement)` only hides a handler moved to another element. A value narrowed to a
// union (`e.currentTarget.value as Locale`) is checked instead: `oneOf(LOCALES, value)` in lib/form.ts.
//
// Flagged, in core/web/src's .ts/.tsx files other than tests: `e.target as X`, `ev.currentTarget as X`,
// `(e.target as X).value`, `(e.target!) as X`, `<X>e.target`, `e.currentTarget.value as L`,
// `(e.target.value ?? '') as L` (`.target` of an object named e, ev, evt, event or …Event). Found by
// the small lexer of request-casts.ts, not a type checker.
// Run by `npm run lint`.
// Usage: node scripts/lint/event-target-casts.ts [root] [file...]. With files, checks those (paths
// relative to root) instead of core/web/src. Prints file:line: message for each cast and exits 1 if any.
import fs from 'node:fs';
import path from 'node:path';
import { castAt, isPunct, lineAt, pastMembers, sourceFiles, type Token, tokenize } from './request-casts.ts';

/** The folder checked, relative to the root. */
export const CHECKED_DIR = 'core/web/src';
/** An event's fields naming the element. */
const TARGET_FIELDS = new Set(['target', 'currentTarget']);
/** Names an event goes by: `.target` of anything else (a delivery's `row.target`) is data, not an element. */
const EVENT_NAME = /^(e|ev|evt|event|\w*Event)$/;

export interface EventTargetCast {
  file: string;
  line: number;
  message: string;
}

/** The start of the member chain `a.b.c` that ends at token `k` (a name). */
function chainStart(tokens: Token[], k: number): number {
  while (isPunct(tokens[k - 1], '.') && tokens[k - 2]?.kind === 'name') k -= 2;
  return k;
}

/** The casts of event targets (and of their values) in one file's code: the line and what is cast. */
export function eventTargetCasts(code: string): { line: number; message: string }[] {
  const tokens = tokenize(code);
  const found: { line: number; message: string }[] = [];
  for (let k = 1; k < tokens.length; k++) {
    const t = tokens[k];
    if (t.kind !== 'name' || !TARGET_FIELDS.has(t.value) || !isPunct(tokens[k - 1], '.')) continue;
    const object = tokens[k - 2];
    if (object?.kind !== 'name' || (t.value === 'target' && !EVENT_NAME.test(object.value))) continue;
    const start = chainStart(tokens, k - 2);
    const what = tokens
      .slice(start, k + 1)
      .map((x) => x.value)
      .join('');
    let j = k + 1;
    while (isPunct(tokens[j], '!') && !isPunct(tokens[j + 1], '=')) j++;
    if (castAt(tokens, start, j)) {
      found.push({
        line: lineAt(code, tokens[start].start),
        message: `${what} is cast; use the handler's e.currentTarget, typed by the element it sits on`,
      });
      continue;
    }
    const end = pastMembers(tokens, j);
    if (end > j && castAt(tokens, start, end))
      found.push({
        line: lineAt(code, tokens[start].start),
        message: `a value of ${what} is cast; narrow it with a check (oneOf in lib/form.ts) instead`,
      });
  }
  return found;
}

/** The casts of event targets in core/web/src under root (or in `only`, paths relative to root). */
export function checkEventTargetCasts(root: string, only?: string[]): EventTargetCast[] {
  const files = only?.length
    ? only.map((f) => path.resolve(root, f)).filter((f) => !/\.test\.[mc]?tsx?$/.test(f))
    : sourceFiles(root, CHECKED_DIR, /\.[mc]?tsx?$/);
  const out: EventTargetCast[] = [];
  for (const file of files.sort()) {
    const rel = path.relative(root, file).split(path.sep).join('/');
    for (const c of eventTargetCasts(fs.readFileSync(file, 'utf8'))) out.push({ file: rel, ...c });
  }
  return out;
}

if (import.meta.main) {
  const [root = process.cwd(), ...only] = process.argv.slice(2);
  const casts = checkEventTargetCasts(path.resolve(root), only);
  for (const c of casts) console.log(`${c.file}:${c.line}: ${c.message}`);
  if (casts.length) {
    console.log(`${casts.length} cast(s) of event targets`);
    process.exit(1);
  }
}
