/**
 * A tiny, safe evaluator for the path expressions of the generic webhook mapping.
 *
 * Grammar (no `eval`, no functions, no prototype access):
 *
 * ```
 * expression  := alternative ( '||' alternative )*      first non-empty value wins
 * alternative := path | 'literal' | "literal"
 * path        := step ( '.' name | '[' index ']' | '[' quoted ']' )*
 * step        := name | '[' index ']' | '[' quoted ']'
 * index       := -?digits                                negative counts from the end
 * ```
 *
 * Examples: `alert.labels.severity`, `items[0].name`, `data.title || data.name || 'untitled'`,
 * `labels["alert-name"]`, `items[-1].id`.
 */

export type Step = { kind: 'key'; key: string } | { kind: 'index'; index: number };
export type Alternative = { kind: 'path'; steps: Step[] } | { kind: 'literal'; value: string };
export interface PathExpression {
  source: string;
  alternatives: Alternative[];
}

/** A malformed or refused expression; the message names the problem and the position. */
export class PathExpressionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PathExpressionError';
  }
}

/** Keys that would reach an object's prototype machinery; refused wherever they appear. */
export const FORBIDDEN_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

const MAX_SOURCE = 500;
const MAX_STEPS = 32;
const MAX_ALTERNATIVES = 8;
const NAME_CHAR = /[A-Za-z0-9_$@:-]/;

/** Parses an expression, throwing PathExpressionError when it is malformed or uses a refused key. */
export function parsePathExpression(source: string): PathExpression {
  if (source.length > MAX_SOURCE) throw new PathExpressionError(`expression is longer than ${MAX_SOURCE} characters`);
  const p = new Parser(source);
  const alternatives: Alternative[] = [p.alternative()];
  while ((p.skipSpace(), p.peek(2) === '||')) {
    p.pos += 2;
    alternatives.push(p.alternative());
    if (alternatives.length > MAX_ALTERNATIVES)
      throw new PathExpressionError(`more than ${MAX_ALTERNATIVES} alternatives in "${source}"`);
  }
  p.skipSpace();
  if (!p.done()) throw p.fail('unexpected character');
  return { source, alternatives };
}

class Parser {
  pos = 0;
  readonly src: string;
  constructor(src: string) {
    this.src = src;
  }

  done(): boolean {
    return this.pos >= this.src.length;
  }
  peek(n = 1): string {
    return this.src.slice(this.pos, this.pos + n);
  }
  skipSpace(): void {
    while (!this.done() && /\s/.test(this.src[this.pos]!)) this.pos++;
  }
  fail(what: string): PathExpressionError {
    return new PathExpressionError(`${what} at position ${this.pos + 1} of "${this.src}"`);
  }

  alternative(): Alternative {
    this.skipSpace();
    const c = this.peek();
    if (c === "'" || c === '"') return { kind: 'literal', value: this.quoted() };
    return { kind: 'path', steps: this.path() };
  }

  path(): Step[] {
    const steps: Step[] = [];
    if (this.peek() === '[') steps.push(this.bracket());
    else steps.push(key(this.name(), this));
    for (;;) {
      const c = this.peek();
      if (c === '.') {
        this.pos++;
        steps.push(key(this.name(), this));
      } else if (c === '[') steps.push(this.bracket());
      else break;
      if (steps.length > MAX_STEPS) throw this.fail(`path deeper than ${MAX_STEPS} steps`);
    }
    return steps;
  }

  name(): string {
    const start = this.pos;
    while (!this.done() && NAME_CHAR.test(this.src[this.pos]!)) this.pos++;
    if (this.pos === start) throw this.fail('expected a field name');
    return this.src.slice(start, this.pos);
  }

  bracket(): Step {
    this.pos++; // '['
    let step: Step;
    const c = this.peek();
    if (c === "'" || c === '"') step = key(this.quoted(), this);
    else {
      const m = /^-?\d{1,9}/.exec(this.src.slice(this.pos));
      if (!m) throw this.fail('expected an array index or a quoted key');
      this.pos += m[0].length;
      step = { kind: 'index', index: Number(m[0]) };
    }
    if (this.peek() !== ']') throw this.fail('expected "]"');
    this.pos++;
    return step;
  }

  quoted(): string {
    const quote = this.src[this.pos]!;
    this.pos++;
    let out = '';
    while (!this.done()) {
      const c = this.src[this.pos]!;
      if (c === '\\' && this.pos + 1 < this.src.length) {
        out += this.src[this.pos + 1];
        this.pos += 2;
        continue;
      }
      if (c === quote) {
        this.pos++;
        return out;
      }
      out += c;
      this.pos++;
    }
    throw this.fail('unterminated quoted string');
  }
}

function key(name: string, p: Parser): Step {
  if (FORBIDDEN_KEYS.has(name)) throw p.fail(`the key "${name}" is not allowed`);
  return { kind: 'key', key: name };
}

/** True for the values a fallback skips: missing, null and the empty string. */
export function isEmpty(v: unknown): boolean {
  return v === undefined || v === null || v === '';
}

/** Follows one path through parsed JSON, reading own properties only. */
export function resolvePath(steps: Step[], data: unknown): unknown {
  let cur: unknown = data;
  for (const s of steps) {
    if (cur === null || typeof cur !== 'object') return undefined;
    if (s.kind === 'index') {
      if (!Array.isArray(cur)) return undefined;
      const i = s.index < 0 ? cur.length + s.index : s.index;
      cur = i >= 0 && i < cur.length ? cur[i] : undefined;
    } else {
      // Own properties only: nothing inherited is reachable even if a key slipped past the parser.
      cur = Object.hasOwn(cur, s.key) ? (cur as Record<string, unknown>)[s.key] : undefined;
    }
  }
  return cur;
}

/** Evaluates an expression: the first alternative whose value is not empty, else undefined. */
export function evaluate(expr: PathExpression, data: unknown): unknown {
  for (const alt of expr.alternatives) {
    const v = alt.kind === 'literal' ? alt.value : resolvePath(alt.steps, data);
    if (!isEmpty(v)) return v;
  }
  return undefined;
}

/** Text form of a value for titles and bodies: objects become compact JSON. */
export function stringify(v: unknown): string {
  if (isEmpty(v)) return '';
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return JSON.stringify(v) ?? '';
}
