/** Field names whose values are secrets wherever they appear. */
export const SENSITIVE_KEY = new RegExp(
  'oauth|client_secret|webhook_secret|csrf|token|password|passwd|secret|api[-_]?key|apikey|authorization|' +
    'cookie|credential|private[-_]?key',
  'i',
);
/** Substrings redacted inside free text (template extras, payload excerpts, header logs). */
export const SENSITIVE_WORDS = ['oauth', 'client_secret', 'webhook_secret', 'csrf', 'token', 'password', 'secret'];
export const MASK = '[REDACTED]';

/**
 * Names that say something about a secret without holding one: a setting (`secrets_mode`), a
 * count, a flag (`password_set`), a version, a type, a time. The secret word is followed by one
 * of these as the name's last part (`_mode`, `-count`, `.version`, or `Mode` in camelCase).
 */
const ABOUT =
  'mode|count|set|version|type|kind|at|expires|length|present|included|paths|fields|status|enabled|required';
const ABOUT_SNAKE = new RegExp(`[_.-](?:${ABOUT})$`, 'i');
const ABOUT_CAMEL = new RegExp(
  `[a-z0-9](?:${ABOUT.split('|')
    .map((w) => w[0]!.toUpperCase() + w.slice(1))
    .join('|')})$`,
);
const isAboutSecret = (key: string): boolean => ABOUT_SNAKE.test(key) || ABOUT_CAMEL.test(key);

/**
 * True when the values of a field named `key` are secrets (its name holds a secret word and does not merely describe
 * one).
 */
export const isSecretKey = (key: string): boolean => SENSITIVE_KEY.test(key) && !isAboutSecret(key);

/**
 * How a secret sealed at rest begins (`SEALED_PREFIX` of secrets/at-rest.ts, which this leaf module
 * does not import): such a value is a secret whatever its field is called.
 */
export const SEALED_MARK = 'enc:v1:';
const isSealed = (v: unknown): boolean => typeof v === 'string' && v.startsWith(SEALED_MARK);

/**
 * Deep copy of `value` with every sensitive field's value masked, and every value sealed at rest
 * (a config whose plugin is not loaded has no schema left to say which of its fields are secrets).
 */
export function redactObject<T>(value: T, depth = 0): T {
  if (isSealed(value)) return MASK as T;
  if (depth > 12 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((v) => redactObject(v, depth + 1)) as T;
  if (Buffer.isBuffer(value)) return value;
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null && !(value instanceof Error)) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    out[k] = isSecretKey(k) && v !== null && v !== undefined && v !== '' ? MASK : redactObject(v, depth + 1);
  }
  return out as T;
}

const SENSITIVE_IN_KEY = new RegExp(`(?:${SENSITIVE_WORDS.join('|')}|api[-_]?key|authorization)`, 'i');
const isKeyChar = (c: number): boolean =>
  (c >= 48 && c <= 57) ||
  (c >= 65 && c <= 90) ||
  (c >= 97 && c <= 122) ||
  c === 95 /* _ */ ||
  c === 46 /* . */ ||
  c === 45 /* - */;
const isQuote = (c: number): boolean => c === 34 || c === 39;

/**
 * The key just before the separator at `i` (never reaching below `floor`): up to 8 spaces, an
 * optional quote, then the last 1–64 word characters. Scanned backwards, so each separator costs
 * only the length of its key (an end-anchored regex retried at every start position of the window
 * once dominated the webhook path's CPU time).
 */
function keyBefore(text: string, i: number, floor: number): string | undefined {
  let j = i - 1;
  for (let n = 0; n < 8 && j >= floor && /\s/.test(text[j]!); n++) j--;
  if (j >= floor && isQuote(text.charCodeAt(j))) j--;
  const end = j + 1;
  for (let n = 0; n < 64 && j >= floor && isKeyChar(text.charCodeAt(j)); n++) j--;
  return end - (j + 1) > 0 ? text.slice(j + 1, end) : undefined;
}
const VALUE_AFTER = /^\s{0,8}("[^"]{0,4096}"|'[^']{0,4096}'|[^\s,;&}]{1,4096})/;

/**
 * Masks the value of every `key=value` / `key: value` / `"key": "value"` whose key names a secret.
 * Scans separators and looks at a bounded window around each, so it stays linear on any input
 * (a backtracking regex over long runs of word characters once froze the event loop).
 */
export function maskKeyValues(text: string): string {
  let out = '';
  let last = 0;
  for (let i = text.indexOf(':') < 0 && text.indexOf('=') < 0 ? -1 : 0; i >= 0 && i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c !== 58 /* : */ && c !== 61 /* = */) continue;
    const key = keyBefore(text, i, Math.max(last, i - 80));
    if (!key || !SENSITIVE_IN_KEY.test(key) || isAboutSecret(key)) continue;
    const val = VALUE_AFTER.exec(text.slice(i + 1, i + 1 + 4110));
    if (!val) continue;
    const v = val[1]!;
    const masked = v.startsWith('"') ? `"${MASK}"` : v.startsWith("'") ? `'${MASK}'` : MASK;
    const valueStart = i + 1 + val[0].length - v.length;
    out += text.slice(last, valueStart) + masked;
    last = valueStart + v.length;
    i = last - 1;
  }
  return last === 0 ? text : out + text.slice(last);
}
const BEARER = /\b([Bb]earer|Basic|Token)\s{1,8}[A-Za-z0-9._~+/=-]{6,4096}/g;
/**
 * The login of an address (`https://user:pass@host`, `mqtt://token@broker`): everything between `://` and `@` before
 * any path.
 */
const URL_LOGIN = /\b([a-z][a-z0-9+.-]{0,31}:\/\/)[^/?#\s@"'<>]{1,512}@/gi;

/**
 * Redacts secrets from free text: values of sensitive keys (`token=…`, `"password": "…"`),
 * bearer credentials, and the login of an address. The words themselves stay, so the text still reads.
 */
export function redactText(text: string): string {
  // Each pattern runs only where the text could hold a match (cheap exact checks first: most text holds none).
  const masked = mayHoldBearer(text) ? text.replace(BEARER, (_m, scheme: string) => `${scheme} ${MASK}`) : text;
  const logins = mayHoldLogin(masked) ? masked.replace(URL_LOGIN, `$1${MASK}@`) : masked;
  // A key maskKeyValues masks is a part of the text that SENSITIVE_IN_KEY matches: none in the text, none to mask.
  return SENSITIVE_IN_KEY.test(logins) ? maskKeyValues(logins) : logins;
}

/** False only when BEARER cannot match: none of its scheme words is in the text. */
const mayHoldBearer = (text: string): boolean =>
  text.includes('earer') || text.includes('Basic') || text.includes('Token');

/** Characters that end the login part of URL_LOGIN (`[^/?#\s@"'<>]` without the `@` itself and the spaces). */
const notLogin = (c: number): boolean =>
  c === 47 /* / */ ||
  c === 63 /* ? */ ||
  c === 35 /* # */ ||
  c === 34 /* " */ ||
  c === 39 /* ' */ ||
  c === 60 ||
  c === 62;

/**
 * False only when URL_LOGIN cannot match: after no `://` in the text does a run of 1–512 login characters end in `@`
 * (the pattern's own tail; its scheme part is checked by the pattern itself where this says true).
 */
function mayHoldLogin(text: string): boolean {
  for (let p = text.indexOf('://'); p >= 0; p = text.indexOf('://', p + 1)) {
    const from = p + 3;
    const end = Math.min(text.length, from + 513);
    for (let i = from; i < end; i++) {
      const c = text.charCodeAt(i);
      if (c === 64 /* @ */) {
        if (i > from) return true;
        break;
      }
      if (notLogin(c) || /\s/.test(text[i]!)) break;
    }
  }
  return false;
}

/** Thrown inside redactedJson for a value JSON.stringify would treat in a way of its own (toJSON, undefined, ...). */
const NOT_PLAIN = Symbol('not plain');
/** Thrown inside redactedJson once the limit is reached. */
const FULL = Symbol('full');
/** Characters JSON.stringify escapes (and lone surrogates): text without any is written between quotes as it is. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters are what it looks for.
const ESCAPED = /[\u0000-\u001f"\\\ud800-\udfff]/;
const quote = (s: string): string => (ESCAPED.test(s) ? JSON.stringify(s) : `"${s}"`);
/** isSecretKey per field name: payloads of one kind repeat their names. Emptied when it grows large. */
const secretKeys = new Map<string, boolean>();
function isSecretKeyCached(key: string): boolean {
  let secret = secretKeys.get(key);
  if (secret === undefined) {
    if (secretKeys.size >= 4096) secretKeys.clear();
    secret = isSecretKey(key);
    secretKeys.set(key, secret);
  }
  return secret;
}

/**
 * `JSON.stringify(redactObject(value)).slice(0, limit)`, for parsed JSON (plain objects, arrays, strings, finite
 * numbers, booleans, null), without the deep copy and stopping once `limit` characters are written. Anything else
 * takes the long way, so the answer is the same for every value.
 */
export function redactedJson(value: unknown, limit: number): string {
  let out = '';
  const put = (s: string): void => {
    out += s;
    if (out.length >= limit) throw FULL;
  };
  // `masked`: redactObject is still at work (it stops at depth 12 and hands deeper values over as they are).
  const write = (v: unknown, depth: number, masked: boolean): void => {
    if (masked && isSealed(v)) return put(`"${MASK}"`);
    if (masked && depth > 12) masked = false;
    if (v === null) return put('null');
    switch (typeof v) {
      case 'string':
        // Escaping only lengthens: the first characters of the text decide the first characters written.
        return put(quote(v.length > limit - out.length ? v.slice(0, limit - out.length) : v));
      case 'number':
        return put(Number.isFinite(v) ? String(v) : 'null');
      case 'boolean':
        return put(v ? 'true' : 'false');
      case 'object':
        break;
      default:
        throw NOT_PLAIN;
    }
    if (Array.isArray(v)) {
      put('[');
      for (let i = 0; i < v.length; i++) {
        if (i) put(',');
        const item: unknown = v[i];
        if (item === undefined) throw NOT_PLAIN;
        write(item, depth + 1, masked);
      }
      return put(']');
    }
    const proto = Object.getPrototypeOf(v);
    if ((proto !== Object.prototype && proto !== null) || 'toJSON' in (v as object)) throw NOT_PLAIN;
    put('{');
    let first = true;
    for (const k in v as object) {
      if (proto !== null && !Object.hasOwn(v as object, k)) continue;
      const item = (v as Record<string, unknown>)[k];
      if (item === undefined || typeof item === 'function' || typeof item === 'symbol') throw NOT_PLAIN;
      // redactObject's copy takes a `__proto__` key as its prototype, which JSON.stringify then leaves out.
      if (masked && k === '__proto__') continue;
      put(first ? `${quote(k)}:` : `,${quote(k)}:`);
      first = false;
      if (masked && item !== null && item !== '' && isSecretKeyCached(k)) put(`"${MASK}"`);
      else write(item, depth + 1, masked);
    }
    return put('}');
  };
  try {
    if (value === undefined) throw NOT_PLAIN;
    write(value, 0, true);
  } catch (stop) {
    if (stop === NOT_PLAIN) return JSON.stringify(redactObject(value)).slice(0, limit);
    if (stop !== FULL) throw stop;
  }
  return out.slice(0, limit);
}

/** Secret values known at run time (the secret key, plugin secrets); masked wherever they appear in text. */
export class SecretValues {
  private values = new Set<string>();
  add(value: string | undefined | null): void {
    if (value && value.length >= 6) this.values.add(value);
  }
  mask(text: string): string {
    if (this.values.size === 0) return text;
    let out = text;
    for (const v of this.values) if (out.includes(v)) out = out.split(v).join(MASK);
    return out;
  }
}
