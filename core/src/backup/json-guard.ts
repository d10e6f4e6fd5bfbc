/**
 * A streaming JSON scanner that enforces limits before `JSON.parse` builds a single object: nesting
 * depth, total node count, string length, and forbidden keys (`__proto__`, `constructor`,
 * `prototype`). It checks the full JSON grammar, so text that passes is safe to hand to JSON.parse.
 * Feed it chunks as they arrive (`write`), then `end()`; it throws `JsonGuardError` at the first problem.
 */

export interface JsonLimits {
  /** Deepest nesting of objects and arrays; the outermost container is depth 1. */
  maxDepth: number;
  /** Most values (objects, arrays, strings, numbers, literals) in the document. */
  maxNodes: number;
  /** Longest string (key or value), in characters as written (escapes count as written). */
  maxStringLength: number;
}

/** The backup import limits of the specification (depth 10, 100,000 nodes) and a bound on strings. */
export const BACKUP_LIMITS: JsonLimits = { maxDepth: 10, maxNodes: 100_000, maxStringLength: 1024 * 1024 };

/** Keys that could reach an object's prototype chain when the parsed value is merged or spread. */
export const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

export type JsonGuardReason = 'syntax' | 'depth' | 'nodes' | 'string_length' | 'forbidden_key';

export class JsonGuardError extends Error {
  readonly reason: JsonGuardReason;
  readonly offset: number;
  constructor(reason: JsonGuardReason, message: string, offset: number) {
    super(message);
    this.reason = reason;
    this.offset = offset;
  }
}

// What the scanner expects next.
type Expect = 'value' | 'value_or_close' | 'key_or_close' | 'key' | 'colon' | 'comma_or_close' | 'done';
type Mode = 'none' | 'string' | 'escape' | 'unicode' | 'number' | 'literal';

const WS = new Set([' ', '\t', '\n', '\r']);
const NUMBER = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/;
const NUMBER_CHAR = /[-+0-9.eE]/;
const LITERALS = ['true', 'false', 'null'];

/** Streaming scanner; one instance per document. */
export class JsonGuard {
  private readonly limits: JsonLimits;
  /** Container stack: '{' or '['. */
  private stack: string[] = [];
  private expect: Expect = 'value';
  private mode: Mode = 'none';
  private nodes = 0;
  private offset = 0;
  private strLen = 0;
  private isKey = false;
  /** The raw text of the key being read (bounded by maxStringLength). */
  private keyRaw = '';
  private unicodeLeft = 0;
  private token = '';

  constructor(limits: JsonLimits = BACKUP_LIMITS) {
    this.limits = limits;
  }

  /** Node count so far (for reports and tests). */
  get nodeCount(): number {
    return this.nodes;
  }

  private fail(reason: JsonGuardReason, message: string): never {
    throw new JsonGuardError(reason, `${message} (at character ${this.offset})`, this.offset);
  }

  private countNode(): void {
    if (++this.nodes > this.limits.maxNodes)
      this.fail('nodes', `The JSON holds more than ${this.limits.maxNodes} values`);
  }

  /** A value finished: decide what may follow it. */
  private afterValue(): void {
    this.expect = this.stack.length === 0 ? 'done' : 'comma_or_close';
  }

  write(chunk: string): void {
    for (let i = 0; i < chunk.length; i++, this.offset++) this.char(chunk[i]!);
  }

  end(): void {
    if (this.mode === 'number' || this.mode === 'literal') this.finishToken();
    if (this.mode !== 'none') this.fail('syntax', 'The JSON ends early, inside a string (truncated?)');
    if (this.expect !== 'done')
      this.fail('syntax', this.nodes === 0 ? 'The file is empty' : 'The JSON ends early (truncated?)');
  }

  private finishToken(): void {
    const t = this.token;
    this.mode = 'none';
    this.token = '';
    if (LITERALS.includes(t) || NUMBER.test(t)) {
      this.afterValue();
      return;
    }
    this.fail('syntax', `"${t.slice(0, 20)}" is not a JSON value`);
  }

  private char(c: string): void {
    switch (this.mode) {
      case 'string':
        return this.stringChar(c);
      case 'escape':
        if (c === 'u') {
          this.mode = 'unicode';
          this.unicodeLeft = 4;
        } else if ('"\\/bfnrt'.includes(c)) this.mode = 'string';
        else this.fail('syntax', `"\\${c}" is not a JSON escape`);
        return this.keep(c);
      case 'unicode':
        if (!/[0-9a-fA-F]/.test(c)) this.fail('syntax', 'A \\u escape needs four hex digits');
        if (--this.unicodeLeft === 0) this.mode = 'string';
        return this.keep(c);
      case 'number':
      case 'literal':
        if ((this.mode === 'number' && NUMBER_CHAR.test(c)) || (this.mode === 'literal' && /[a-z]/.test(c))) {
          if (this.token.length > 64) this.fail('syntax', 'A number or literal is too long');
          this.token += c;
          return;
        }
        this.finishToken();
        return this.char(c);
      default:
        return this.structural(c);
    }
  }

  private keep(c: string): void {
    if (++this.strLen > this.limits.maxStringLength)
      this.fail('string_length', `A string is longer than ${this.limits.maxStringLength} characters`);
    if (this.isKey) this.keyRaw += c;
  }

  private stringChar(c: string): void {
    if (c === '"') {
      this.mode = 'none';
      if (this.isKey) {
        let key: string;
        try {
          key = JSON.parse(`"${this.keyRaw}"`) as string;
        } catch {
          this.fail('syntax', 'A key is not a valid JSON string');
        }
        if (FORBIDDEN_KEYS.has(key)) this.fail('forbidden_key', `The key "${key}" is not allowed`);
        this.expect = 'colon';
      } else this.afterValue();
      return;
    }
    if (c === '\\') {
      this.mode = 'escape';
      return this.keep(c);
    }
    if (c < ' ') this.fail('syntax', 'A string holds an unescaped control character');
    this.keep(c);
  }

  private open(c: '{' | '['): void {
    this.countNode();
    this.stack.push(c);
    if (this.stack.length > this.limits.maxDepth)
      this.fail('depth', `The JSON is nested deeper than ${this.limits.maxDepth} levels`);
    this.expect = c === '{' ? 'key_or_close' : 'value_or_close';
  }

  private close(c: '}' | ']'): void {
    const top = this.stack.pop();
    if ((c === '}' && top !== '{') || (c === ']' && top !== '[')) this.fail('syntax', `Unexpected "${c}"`);
    this.afterValue();
  }

  private structural(c: string): void {
    if (WS.has(c)) return;
    const e = this.expect;
    if (e === 'done') this.fail('syntax', 'Unexpected text after the JSON value');
    if (e === 'colon') {
      if (c !== ':') this.fail('syntax', 'Expected ":" after a key');
      this.expect = 'value';
      return;
    }
    if (e === 'comma_or_close') {
      if (c === ',') {
        this.expect = this.stack.at(-1) === '{' ? 'key' : 'value';
        return;
      }
      if (c === '}' || c === ']') return this.close(c);
      this.fail('syntax', `Expected "," or a closing bracket, found "${c}"`);
    }
    if (e === 'key_or_close' || e === 'key') {
      if (c === '}' && e === 'key_or_close') return this.close(c);
      if (c !== '"') this.fail('syntax', 'Expected a quoted key');
      this.mode = 'string';
      this.isKey = true;
      this.keyRaw = '';
      this.strLen = 0;
      return;
    }
    // A value is expected.
    if (c === ']' && e === 'value_or_close') return this.close(c);
    if (c === '{' || c === '[') return this.open(c);
    this.countNode();
    if (c === '"') {
      this.mode = 'string';
      this.isKey = false;
      this.strLen = 0;
      return;
    }
    if (c === '-' || (c >= '0' && c <= '9')) {
      this.mode = 'number';
      this.token = c;
      return;
    }
    if (c === 't' || c === 'f' || c === 'n') {
      this.mode = 'literal';
      this.token = c;
      return;
    }
    this.fail('syntax', `Unexpected "${c}"`);
  }
}

/** Scans a whole text at once; throws JsonGuardError when it breaks a limit or is not JSON. */
export function guardJson(text: string, limits: JsonLimits = BACKUP_LIMITS): void {
  const g = new JsonGuard(limits);
  g.write(text);
  g.end();
}

/** Guards, then parses. The guard runs first so a bomb never becomes objects. */
export function parseGuarded(text: string, limits: JsonLimits = BACKUP_LIMITS): unknown {
  guardJson(text, limits);
  return JSON.parse(text);
}
