/** Field names whose values are secrets wherever they appear. */
export const SENSITIVE_KEY = /oauth|client_secret|webhook_secret|csrf|token|password|passwd|secret|api[-_]?key|apikey|authorization|cookie|credential|private[-_]?key/i;
/** Substrings redacted inside free text (template extras, payload excerpts, header logs). */
export const SENSITIVE_WORDS = ['oauth', 'client_secret', 'webhook_secret', 'csrf', 'token', 'password', 'secret'];
export const MASK = '[REDACTED]';

/** Deep copy of `value` with every sensitive field's value masked. */
export function redactObject<T>(value: T, depth = 0): T {
  if (depth > 12 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((v) => redactObject(v, depth + 1)) as T;
  if (Buffer.isBuffer(value)) return value;
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null && !(value instanceof Error)) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    out[k] = SENSITIVE_KEY.test(k) && v !== null && v !== undefined && v !== '' ? MASK : redactObject(v, depth + 1);
  }
  return out as T;
}

const SENSITIVE_IN_KEY = new RegExp(`(?:${SENSITIVE_WORDS.join('|')}|api[-_]?key|authorization)`, 'i');
/** The key just before a separator: optional quote, word characters, optional quote, spaces. */
const KEY_BEFORE = /["']?([\w.-]{1,64})["']?\s{0,8}$/;
const VALUE_AFTER = /^\s{0,8}("[^"]{0,4096}"|'[^']{0,4096}'|[^\s,;&}]{1,4096})/;

/**
 * Masks the value of every `key=value` / `key: value` / `"key": "value"` whose key names a secret.
 * Scans separators and looks at a bounded window around each, so it stays linear on any input
 * (a backtracking regex over long runs of word characters once froze the event loop).
 */
function maskKeyValues(text: string): string {
  let out = '';
  let last = 0;
  for (let i = text.indexOf(':') < 0 && text.indexOf('=') < 0 ? -1 : 0; i >= 0 && i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c !== 58 /* : */ && c !== 61 /* = */) continue;
    const key = KEY_BEFORE.exec(text.slice(Math.max(last, i - 80), i));
    if (!key || !SENSITIVE_IN_KEY.test(key[1]!)) continue;
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
 * Redacts secrets from free text: values of sensitive keys (`token=…`, `"password": "…"`),
 * and bearer credentials. The words themselves stay, so the text still reads.
 */
export function redactText(text: string): string {
  return maskKeyValues(text.replace(BEARER, (_m, scheme: string) => `${scheme} ${MASK}`));
}

/** Secret values known at run time (the secret key, plugin secrets); masked wherever they appear in text. */
export class SecretValues {
  private values = new Set<string>();
  add(value: string | undefined | null): void { if (value && value.length >= 6) this.values.add(value); }
  mask(text: string): string {
    if (this.values.size === 0) return text;
    let out = text;
    for (const v of this.values) if (out.includes(v)) out = out.split(v).join(MASK);
    return out;
  }
}
