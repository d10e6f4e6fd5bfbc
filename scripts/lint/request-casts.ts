// No cast of request data in the core: a route's `req.body`, `req.query`, `req.params` and
// `req.headers` are typed from its schema by the TypeBox type provider, so `req.body as X` only
// hides a schema that drifted from the code reading it. Fix the schema (or give the route one)
// instead; where a type is still needed, write `Static<typeof Schema>`.
//
// Flagged, in core/src's .ts files other than tests: `req.body as X`, `req.params as unknown as Y`,
// `(req.query as any).x`, `req.body.locale as L`, `(req.body ?? {}) as X`, `<X>req.body`, and the
// same on `request`. A cast is found by a small lexer (comments, strings, template literals with
// their `${}`, regular expressions), not a type checker: a value copied out of the request first
// (`const b = req.body; b as X`) is not seen.
// Usage: node scripts/lint/request-casts.ts [root] [file...]. With files, checks those (paths
// relative to root) instead of core/src. Prints file:line: message for each cast and exits 1 if any.
import fs from 'node:fs';
import path from 'node:path';
import { includedFiles, parseJsonc } from './biome.ts';

/** The folder checked, relative to the root. */
export const CHECKED_DIR = 'core/src';
/** Names a route handler's request goes by. */
const REQUEST_NAMES = new Set(['req', 'request']);
/** The request's fields a route schema types. */
const REQUEST_FIELDS = new Set(['body', 'query', 'params', 'headers']);

export interface RequestCast {
  file: string;
  line: number;
  message: string;
}

export interface Token {
  kind: 'name' | 'punct' | 'other';
  value: string;
  start: number;
}

const ID_START = /[A-Za-z_$\u00a0-\uffff]/;
const ID_PART = /[\w$\u00a0-\uffff]/;
// After these keywords an expression starts, so `/` opens a regular expression.
const EXPRESSION_KEYWORDS = new Set([
  'return',
  'typeof',
  'instanceof',
  'in',
  'of',
  'new',
  'delete',
  'void',
  'throw',
  'case',
  'do',
  'else',
  'yield',
  'await',
]);

/** The code's names and punctuation; strings, comments and regular expressions are skipped. */
export function tokenize(code: string): Token[] {
  const tokens: Token[] = [];
  const n = code.length;
  let i = 0;
  const expressionExpected = (): boolean => {
    const t = tokens[tokens.length - 1];
    if (!t) return true;
    if (t.kind === 'name') return EXPRESSION_KEYWORDS.has(t.value);
    // `</` closes a JSX element (`</div>`); it never starts a regular expression in this code.
    if (t.kind === 'punct') return !(t.value === ')' || t.value === ']' || t.value === '}' || t.value === '<');
    return false;
  };
  const quoted = (quote: string): void => {
    i++;
    while (i < n && code[i] !== quote && code[i] !== '\n') i += code[i] === '\\' ? 2 : 1;
    i++;
  };
  const regex = (): void => {
    let inClass = false;
    i++;
    while (i < n && code[i] !== '\n') {
      const c = code[i];
      if (c === '\\') {
        i += 2;
        continue;
      }
      if (c === '[') inClass = true;
      else if (c === ']') inClass = false;
      else if (c === '/' && !inClass) break;
      i++;
    }
    i++;
    while (i < n && ID_PART.test(code[i])) i++;
  };
  // A template literal's text is skipped; its substitutions are code.
  const template = (): void => {
    i++;
    while (i < n && code[i] !== '`') {
      if (code[i] === '\\') i += 2;
      else if (code[i] === '$' && code[i + 1] === '{') {
        i += 2;
        scan(true);
      } else i++;
    }
    i++;
  };
  const scan = (nested: boolean): void => {
    let depth = 0;
    while (i < n) {
      const c = code[i];
      const start = i;
      if (c === '/' && code[i + 1] === '/') {
        while (i < n && code[i] !== '\n') i++;
      } else if (c === '/' && code[i + 1] === '*') {
        const end = code.indexOf('*/', i + 2);
        i = end < 0 ? n : end + 2;
      } else if (/\s/.test(c)) i++;
      else if (c === '"' || c === "'") {
        quoted(c);
        tokens.push({ kind: 'other', value: 'string', start });
      } else if (c === '`') {
        template();
        tokens.push({ kind: 'other', value: 'template', start });
      } else if (ID_START.test(c)) {
        while (i < n && ID_PART.test(code[i])) i++;
        tokens.push({ kind: 'name', value: code.slice(start, i), start });
      } else if (/[0-9]/.test(c)) {
        while (i < n && /[\w.]/.test(code[i])) i++;
        tokens.push({ kind: 'other', value: code.slice(start, i), start });
      } else if (c === '/' && expressionExpected()) {
        regex();
        tokens.push({ kind: 'other', value: 'regex', start });
      } else {
        i++;
        if (c === '{') depth++;
        else if (c === '}') {
          if (nested && depth === 0) return;
          depth--;
        }
        tokens.push({ kind: 'punct', value: c, start });
      }
    }
  };
  scan(false);
  return tokens;
}

export const isPunct = (t: Token | undefined, value: string): boolean => t?.kind === 'punct' && t.value === value;

/** The index after the bracket group opening at `k` (`(`, `[`, `<`). */
export function closeOf(tokens: Token[], k: number): number {
  const open = tokens[k].value;
  const close = open === '(' ? ')' : open === '[' ? ']' : '>';
  let depth = 0;
  for (let j = k; j < tokens.length; j++) {
    if (isPunct(tokens[j], open)) depth++;
    else if (isPunct(tokens[j], close) && --depth === 0) return j + 1;
  }
  return tokens.length;
}

/** The index of the `(` whose group holds token `k` and starts with it (through more such groups), or -1. */
export function groupStart(tokens: Token[], k: number): number {
  let p = -1;
  while (isPunct(tokens[k - 1], '(')) {
    p = k - 1;
    k = p;
  }
  return p;
}

/** Past a member chain: `.x`, `?.x`, `!`, `[…]`, `(…)`. */
export function pastMembers(tokens: Token[], j: number): number {
  for (;;) {
    const t = tokens[j];
    if (isPunct(t, '.') && tokens[j + 1]?.kind === 'name') j += 2;
    else if (isPunct(t, '?') && isPunct(tokens[j + 1], '.')) j += isPunct(tokens[j + 2], '[') ? 2 : 3;
    else if (isPunct(t, '!') && !isPunct(tokens[j + 1], '=')) j++;
    else if (isPunct(t, '[') || isPunct(t, '(')) j = closeOf(tokens, j);
    else return j;
  }
}

export const lineAt = (code: string, offset: number): number => {
  let line = 1;
  for (let k = 0; k < offset; k++) if (code.charCodeAt(k) === 10) line++;
  return line;
};

/** Whether the expression from token `k` to before token `j` is cast: `x as X`, `(x ?? y) as X` (a group
 *  that starts with it), `<X>x` (an angle-bracket assertion, not a call's type arguments). */
export function castAt(tokens: Token[], k: number, j: number): boolean {
  let cast = tokens[j]?.kind === 'name' && tokens[j].value === 'as';
  // `(req.body ?? {}) as X`, `((req.query)) as X`: a group that starts with the expression.
  for (let p = groupStart(tokens, k); !cast && p >= 0; p = groupStart(tokens, p)) {
    const after = closeOf(tokens, p);
    cast = tokens[after]?.kind === 'name' && tokens[after].value === 'as';
  }
  // `<X>req.body` (angle-bracket assertion): a type argument list right before it, not a call.
  // An arrow's `=>` (`(e) => e.target`) is no assertion.
  const arrow = isPunct(tokens[k - 2], '=') && tokens[k - 2].start === tokens[k - 1]?.start - 1;
  if (!cast && isPunct(tokens[k - 1], '>') && !arrow) {
    let depth = 0;
    let open = -1;
    for (let b = k - 1; b >= 0; b--) {
      if (isPunct(tokens[b], '>')) depth++;
      else if (isPunct(tokens[b], '<') && --depth === 0) {
        open = b;
        break;
      }
    }
    const before = tokens[open - 1];
    cast =
      open >= 0 &&
      (!before ||
        (before.kind === 'punct' && !/[)\]}]/.test(before.value)) ||
        (before.kind === 'name' && EXPRESSION_KEYWORDS.has(before.value)));
  }
  return cast;
}

/** The casts of request data in one file's code: the line and what is cast. */
export function requestCasts(code: string): { line: number; message: string }[] {
  const tokens = tokenize(code);
  const found: { line: number; message: string }[] = [];
  for (let k = 0; k < tokens.length; k++) {
    const t = tokens[k];
    if (t.kind !== 'name' || !REQUEST_NAMES.has(t.value) || isPunct(tokens[k - 1], '.')) continue;
    let j = k + 1;
    if (isPunct(tokens[j], '?')) j++;
    if (!isPunct(tokens[j], '.') || !REQUEST_FIELDS.has(tokens[j + 1]?.value ?? '')) continue;
    const what = `${t.value}.${tokens[j + 1].value}`;
    j = pastMembers(tokens, j + 2);
    const cast = castAt(tokens, k, j);
    if (cast)
      found.push({
        line: lineAt(code, t.start),
        message: `${what} is cast; it is typed by the route's schema: fix the schema instead`,
      });
  }
  return found;
}

/** The files Biome checks (biome.jsonc's `files.includes`, or all but node_modules without one) under
 *  `dir` (core/src unless told) matching `ext`, tests left out. */
export function sourceFiles(root: string, dir = CHECKED_DIR, ext = /\.[mc]?ts$/): string[] {
  const configFile = path.join(root, 'biome.jsonc');
  const includes = fs.existsSync(configFile)
    ? (parseJsonc(fs.readFileSync(configFile, 'utf8')) as { files?: { includes?: string[] } }).files?.includes
    : undefined;
  return includedFiles(root, includes ?? ['**', '!**/node_modules'])
    .filter((f) => f.startsWith(`${dir}/`) && ext.test(f) && !/\.test\.[mc]?tsx?$/.test(f))
    .map((f) => path.join(root, f));
}

/** The casts of request data in core/src under root (or in `only`, paths relative to root). */
export function checkRequestCasts(root: string, only?: string[]): RequestCast[] {
  const files = only?.length
    ? only.map((f) => path.resolve(root, f)).filter((f) => !/\.test\.[mc]?ts$/.test(f))
    : sourceFiles(root);
  const out: RequestCast[] = [];
  for (const file of files.sort()) {
    const rel = path.relative(root, file).split(path.sep).join('/');
    for (const c of requestCasts(fs.readFileSync(file, 'utf8'))) out.push({ file: rel, ...c });
  }
  return out;
}

if (import.meta.main) {
  const [root = process.cwd(), ...only] = process.argv.slice(2);
  const casts = checkRequestCasts(path.resolve(root), only);
  for (const c of casts) console.log(`${c.file}:${c.line}: ${c.message}`);
  if (casts.length) {
    console.log(`${casts.length} cast(s) of request data`);
    process.exit(1);
  }
}
