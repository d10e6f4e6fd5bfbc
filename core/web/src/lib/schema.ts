/**
 * Reading a plugin's JSON schema (TypeBox output) for the config forms: which control each
 * field gets, its default values, and the config to send back (secrets kept when untouched).
 */
import type { JsonSchema } from './types.ts';

/** What the service sends in place of a stored secret, and accepts back as "keep it". */
export const MASK = '********';

export type FieldKind = 'enum' | 'boolean' | 'integer' | 'number' | 'string' | 'text' | 'string-list' | 'object' | 'json';

/** The allowed values of an enum field (`enum`, or `anyOf`/`oneOf` of `const`s), or null. */
export function enumValues(s: JsonSchema): unknown[] | null {
  if (Array.isArray(s.enum)) return s.enum;
  const alts = s.anyOf ?? s.oneOf;
  if (alts?.length && alts.every((a) => a.const !== undefined)) return alts.map((a) => a.const);
  return null;
}

const typeOf = (s: JsonSchema): string | undefined => (Array.isArray(s.type) ? s.type.find((x) => x !== 'null') : s.type);

export function fieldKind(s: JsonSchema): FieldKind {
  if (enumValues(s)) return 'enum';
  const type = typeOf(s);
  if (type === 'boolean') return 'boolean';
  if (type === 'integer') return 'integer';
  if (type === 'number') return 'number';
  // Long free text (certificates, prompts) gets a text area; URLs and names stay one line.
  if (type === 'string') return (s.maxLength ?? 0) > 4096 ? 'text' : 'string';
  if (type === 'array' && s.items && typeOf(s.items) === 'string' && !enumValues(s.items)) return 'string-list';
  if (type === 'object' && s.properties && !s.patternProperties) return 'object';
  return 'json';
}

/** "base_url" → "Base url": a readable label when the schema has no title. */
export const humanize = (key: string): string => {
  const s = key.replace(/[_-]+/g, ' ').trim();
  return s.charAt(0).toUpperCase() + s.slice(1);
};

/** Default values for a new config: declared defaults, and nested required objects. */
export function defaults(schema: JsonSchema | null | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, s] of Object.entries(schema?.properties ?? {})) {
    if (s.default !== undefined) out[k] = structuredClone(s.default);
    else if (fieldKind(s) === 'object' && schema?.required?.includes(k)) out[k] = defaults(s);
  }
  return out;
}

const isEmpty = (v: unknown) => v === undefined || v === null || v === '' || (typeof v === 'number' && Number.isNaN(v));

/**
 * The config to send: empty optional fields left out, blank list lines dropped, and an empty
 * secret field that has a stored value sent as the mask (the service keeps the stored one).
 */
export function cleanConfig(schema: JsonSchema | null | undefined, value: Record<string, unknown>, secretsSet: string[] = [], prefix = ''): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const props = schema?.properties ?? {};
  for (const [k, v] of Object.entries(value)) {
    const s = props[k];
    const path = prefix ? `${prefix}.${k}` : k;
    if (!s) { if (!isEmpty(v)) out[k] = v; continue; }
    if (s['x-secret'] && (isEmpty(v) || v === MASK)) {
      if (secretsSet.includes(path)) out[k] = MASK;
      continue;
    }
    const kind = fieldKind(s);
    if (kind === 'string-list') {
      const list = (Array.isArray(v) ? v : []).map((x) => String(x).trim()).filter(Boolean);
      if (list.length || schema?.required?.includes(k)) out[k] = list;
    } else if (kind === 'object' && v && typeof v === 'object') {
      out[k] = cleanConfig(s, v as Record<string, unknown>, secretsSet, path);
    } else if (!isEmpty(v)) out[k] = v;
  }
  return out;
}

/** The form's starting value for an existing record: stored config over the defaults. */
export const initialConfig = (schema: JsonSchema | null | undefined, stored?: Record<string, unknown>): Record<string, unknown> =>
  ({ ...defaults(schema), ...(stored ?? {}) });
