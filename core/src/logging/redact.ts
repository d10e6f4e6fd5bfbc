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

const KV_PATTERN = new RegExp(
  // key=value, key: value, "key": "value" where key contains a sensitive word
  `(["']?[\\w.-]*(?:${SENSITIVE_WORDS.join('|')}|api[-_]?key|authorization)[\\w.-]*["']?\\s*[:=]\\s*)("[^"]*"|'[^']*'|[^\\s,;&}]+)`,
  'gi',
);
const BEARER = /\b(Bearer|Basic|Token)\s+[A-Za-z0-9._~+/=-]{6,}/gi;

/**
 * Redacts secrets from free text: values of sensitive keys (`token=…`, `"password": "…"`),
 * and bearer credentials. The words themselves stay, so the text still reads.
 */
export function redactText(text: string): string {
  return text
    .replace(KV_PATTERN, (_m, key: string, val: string) => `${key}${val.startsWith('"') ? `"${MASK}"` : val.startsWith("'") ? `'${MASK}'` : MASK}`)
    .replace(BEARER, (_m, scheme: string) => `${scheme} ${MASK}`);
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
