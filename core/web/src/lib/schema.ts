/**
 * Reading a plugin's JSON schema (TypeBox output) for the config forms: which control each
 * field gets, its default values, and the config to send back (secrets kept when untouched).
 */
import type { JsonSchema } from './types.ts';

/** What the service sends in place of a stored secret, and accepts back as "keep it". */
export const MASK = '********';

export type FieldKind =
  | 'enum'
  | 'boolean'
  | 'integer'
  | 'number'
  | 'string'
  | 'text'
  | 'string-list'
  | 'object'
  | 'map'
  | 'json';

/** The allowed values of an enum field (`enum`, or `anyOf`/`oneOf` of `const`s), or null. */
export function enumValues(s: JsonSchema): unknown[] | null {
  if (Array.isArray(s.enum)) return s.enum;
  const alts = s.anyOf ?? s.oneOf;
  if (alts?.length && alts.every((a) => a.const !== undefined)) return alts.map((a) => a.const);
  return null;
}

const typeOf = (s: JsonSchema): string | undefined =>
  Array.isArray(s.type) ? s.type.find((x) => x !== 'null') : s.type;

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
  if (type === 'object' && mapValueSchema(s)) return 'map';
  return 'json';
}

const SCALAR = new Set(['string', 'integer', 'number', 'boolean']);

/**
 * The schema of a map's values (`Type.Record`: one `patternProperties` entry, or an object with no
 * properties and `additionalProperties` given as a schema), when they are scalars or an enum; null otherwise.
 */
export function mapValueSchema(s: JsonSchema): JsonSchema | null {
  if (s.properties && Object.keys(s.properties).length) return null;
  const pattern = Object.values(s.patternProperties ?? {});
  const value =
    pattern.length === 1
      ? pattern[0]!
      : !s.patternProperties && typeof s.additionalProperties === 'object'
        ? s.additionalProperties
        : null;
  if (!value) return null;
  const t = typeOf(value) ?? (enumValues(value) ? 'string' : undefined);
  return t && SCALAR.has(t) ? value : null;
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
export function cleanConfig(
  schema: JsonSchema | null | undefined,
  value: Record<string, unknown>,
  secretsSet: string[] = [],
  prefix = '',
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const props = schema?.properties ?? {};
  for (const [k, v] of Object.entries(value)) {
    const s = props[k];
    const path = prefix ? `${prefix}.${k}` : k;
    if (!s) {
      if (!isEmpty(v)) out[k] = v;
      continue;
    }
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
export const initialConfig = (
  schema: JsonSchema | null | undefined,
  stored?: Record<string, unknown>,
): Record<string, unknown> => ({ ...defaults(schema), ...(stored ?? {}) });

/** A field's problem in the words of JSON Schema: the keyword and its values (the server sends the same). */
export interface FieldIssue {
  code: string;
  params: Record<string, unknown> /** The server's English sentence, for codes the client has no words for. */;
  message?: string;
}

const isHttpPattern = (p: string | undefined): boolean => typeof p === 'string' && p.startsWith('^https?://');

/** The first problem of one value against its schema (a field of the form), or null. */
export function checkValue(s: JsonSchema, value: unknown, required: boolean): FieldIssue | null {
  if (isEmpty(value) || (Array.isArray(value) && !value.some((x) => String(x).trim()))) {
    if (required) return { code: 'required', params: {} };
    return null;
  }
  const allowed = enumValues(s);
  if (allowed)
    return allowed.some((a) => a === value) ? null : { code: 'enum', params: { allowedValues: allowed.map(String) } };
  const type = typeOf(s);
  if (type === 'integer' && !(typeof value === 'number' && Number.isInteger(value)))
    return { code: 'type', params: { type: 'integer' } };
  if (type === 'number' && !(typeof value === 'number' && Number.isFinite(value)))
    return { code: 'type', params: { type: 'number' } };
  if (typeof value === 'number') {
    if (s.minimum !== undefined && value < s.minimum) return { code: 'minimum', params: { limit: s.minimum } };
    if (s.maximum !== undefined && value > s.maximum) return { code: 'maximum', params: { limit: s.maximum } };
    const ex = s as { exclusiveMinimum?: number; exclusiveMaximum?: number };
    if (ex.exclusiveMinimum !== undefined && value <= ex.exclusiveMinimum)
      return { code: 'exclusiveMinimum', params: { limit: ex.exclusiveMinimum } };
    if (ex.exclusiveMaximum !== undefined && value >= ex.exclusiveMaximum)
      return { code: 'exclusiveMaximum', params: { limit: ex.exclusiveMaximum } };
  }
  if (typeof value === 'string') {
    const length = [...value].length;
    if (s.minLength !== undefined && length < s.minLength) return { code: 'minLength', params: { limit: s.minLength } };
    if (s.maxLength !== undefined && length > s.maxLength) return { code: 'maxLength', params: { limit: s.maxLength } };
    if (s.pattern) {
      let ok = true;
      try {
        ok = new RegExp(s.pattern, 'u').test(value);
      } catch {
        /* a pattern this browser cannot read: the server decides */
      }
      if (!ok) return { code: 'pattern', params: { pattern: s.pattern } };
    }
    if (s.format && !formatOk(s.format, value)) return { code: 'format', params: { format: s.format } };
  }
  if (Array.isArray(value)) {
    const list = value.map((x) => String(x).trim()).filter(Boolean);
    const a = s as { minItems?: number; maxItems?: number };
    if (a.minItems !== undefined && list.length < a.minItems)
      return { code: 'minItems', params: { limit: a.minItems } };
    if (a.maxItems !== undefined && list.length > a.maxItems)
      return { code: 'maxItems', params: { limit: a.maxItems } };
    if (s.items)
      for (const item of list) {
        const p = checkValue(s.items, item, false);
        if (p) return p;
      }
  }
  return null;
}

function formatOk(format: string, v: string): boolean {
  if (format === 'email') return /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(v);
  if (format === 'uri' || format === 'url') {
    try {
      new URL(v);
      return true;
    } catch {
      return false;
    }
  }
  if (format === 'uuid') return /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(v);
  return true;
}

/** True when a `pattern` problem means "not a web address": the plugins' URL patterns all start with `^https?://`. */
export const isUrlPattern = (params: Record<string, unknown>, s?: JsonSchema): boolean =>
  isHttpPattern(String(params.pattern ?? s?.pattern ?? ''));

/**
 * Checks a whole form value against its schema before it is sent: one problem per field, keyed by
 * the field's dotted path (`mapping.title`). An empty secret with a stored value counts as kept.
 */
export function checkConfig(
  schema: JsonSchema | null | undefined,
  value: Record<string, unknown>,
  secretsSet: string[] = [],
  skip: string[] = [],
  prefix = '',
): Record<string, FieldIssue> {
  const out: Record<string, FieldIssue> = {};
  for (const [k, s] of Object.entries(schema?.properties ?? {})) {
    if (!prefix && skip.includes(k)) continue;
    const path = prefix ? `${prefix}.${k}` : k;
    const required = schema?.required?.includes(k) ?? false;
    const v = value?.[k];
    if (s['x-secret'] && (isEmpty(v) || v === MASK) && secretsSet.includes(path)) continue;
    const kind = fieldKind(s);
    if (kind === 'object') {
      if (v && typeof v === 'object')
        Object.assign(out, checkConfig(s, v as Record<string, unknown>, secretsSet, [], path));
      else if (required) Object.assign(out, checkConfig(s, {}, secretsSet, [], path));
      continue;
    }
    if (kind === 'map') {
      const vs = mapValueSchema(s)!;
      for (const [key, item] of Object.entries((v as Record<string, unknown>) ?? {})) {
        const p = checkValue(vs, item, true);
        if (p) {
          out[`${path}.${key}`] = p;
          break;
        }
      }
      continue;
    }
    if (kind === 'json' || kind === 'boolean') continue;
    const p = checkValue(s, v, required);
    if (p) out[path] = p;
  }
  return out;
}

/**
 * The field problems of a service answer (`errors[]` with `body/config/...` paths), keyed like
 * `checkConfig` (dotted, relative to `base`). Problems elsewhere are left out.
 */
export function serverIssues(
  errors: { path: string; message: string; code?: string; params?: Record<string, unknown> }[] | undefined,
  base = 'body/config',
): Record<string, FieldIssue> {
  const out: Record<string, FieldIssue> = {};
  for (const e of errors ?? []) {
    if (e.path !== base && !e.path.startsWith(`${base}/`)) continue;
    const path = e.path
      .slice(base.length + 1)
      .split('/')
      .filter(Boolean)
      .join('.');
    if (!path || out[path]) continue;
    out[path] = { code: e.code ?? '', params: e.params ?? {}, message: e.message };
  }
  return out;
}

/** The problems under one field: its own, or those of its entries (a map's keys, a list's items). */
export function issueAt(issues: Record<string, FieldIssue>, path: string): FieldIssue | undefined {
  return issues[path] ?? Object.entries(issues).find(([p]) => p.startsWith(`${path}.`))?.[1];
}
