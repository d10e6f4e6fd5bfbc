/**
 * Turns an inbound JSON body into the `webhook_received` payload using the operator's mapping.
 * Expressions are compiled once at create() so a bad mapping fails there, not per request.
 */

import type { MappingConfig, Severity } from './config.ts';
import { SEVERITIES } from './config.ts';
import type { TemplatePart } from './interpolate.ts';
import { isTemplate, parseTemplate, renderTemplate } from './interpolate.ts';
import type { PathExpression } from './path-expr.ts';
import { evaluate, isEmpty, PathExpressionError, parsePathExpression, stringify } from './path-expr.ts';

type TextField = { kind: 'expr'; expr: PathExpression } | { kind: 'template'; parts: TemplatePart[] };

export interface CompiledMapping {
  title: TextField;
  body?: TextField;
  severity?: PathExpression;
  severityMap: Map<string, Severity>;
  eventKey?: PathExpression;
}

export interface MappedValues {
  title: string;
  body: string;
  severity: Severity;
  event_key?: string;
  /** The mapped values as text, by mapping field name; null when the body had no value. */
  fields: Record<string, string | null>;
}

const MAX_TITLE = 300;
const MAX_BODY = 8000;
const MAX_FIELD = 1000;

function compileText(source: string): TextField {
  return isTemplate(source)
    ? { kind: 'template', parts: parseTemplate(source) }
    : { kind: 'expr', expr: parsePathExpression(source) };
}

/** Runs one field's compiler, prefixing its error with the mapping field name. */
function field<T>(name: string, compile: () => T): T {
  try {
    return compile();
  } catch (err) {
    if (err instanceof PathExpressionError) throw new PathExpressionError(`mapping.${name}: ${err.message}`);
    throw err;
  }
}

/** Compiles a mapping; throws PathExpressionError naming the mapping field and the problem. */
export function compileMapping(m: MappingConfig): CompiledMapping {
  const severityMap = new Map<string, Severity>();
  for (const [raw, sev] of Object.entries(m.severity_map ?? {})) severityMap.set(raw.trim().toLowerCase(), sev);
  return {
    title: field('title', () => compileText(m.title)),
    body: m.body ? field('body', () => compileText(m.body!)) : undefined,
    severity: m.severity ? field('severity', () => parsePathExpression(m.severity!)) : undefined,
    severityMap,
    eventKey: m.event_key ? field('event_key', () => parsePathExpression(m.event_key!)) : undefined,
  };
}

function text(field: TextField | undefined, data: unknown): string | null {
  if (!field) return null;
  const v = field.kind === 'template' ? renderTemplate(field.parts, data) : evaluate(field.expr, data);
  return isEmpty(v) ? null : stringify(v);
}

function clip(s: string, max: number): string {
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}

/** Maps a raw severity through `severity_map` (case-insensitive), accepting the three names as is. */
export function mapSeverity(raw: string | null, map: Map<string, Severity>): Severity {
  if (raw === null) return 'info';
  const key = raw.trim().toLowerCase();
  const mapped = map.get(key);
  if (mapped) return mapped;
  return (SEVERITIES as readonly string[]).includes(key) ? (key as Severity) : 'info';
}

/** Applies a compiled mapping to parsed JSON. */
export function applyMapping(c: CompiledMapping, data: unknown): MappedValues {
  const title = text(c.title, data);
  const body = text(c.body, data);
  const rawSeverity = c.severity ? evaluate(c.severity, data) : undefined;
  const severityText = isEmpty(rawSeverity) ? null : stringify(rawSeverity);
  const eventKey = c.eventKey ? evaluate(c.eventKey, data) : undefined;
  const eventKeyText = isEmpty(eventKey) ? undefined : clip(stringify(eventKey), MAX_FIELD);
  const fields: Record<string, string | null> = { title: title === null ? null : clip(title, MAX_FIELD) };
  if (c.body) fields.body = body === null ? null : clip(body, MAX_FIELD);
  if (c.severity) fields.severity = severityText === null ? null : clip(severityText, MAX_FIELD);
  if (c.eventKey) fields.event_key = eventKeyText ?? null;
  return {
    title: clip(title ?? '', MAX_TITLE),
    body: clip(body ?? '', MAX_BODY),
    severity: mapSeverity(severityText, c.severityMap),
    event_key: eventKeyText,
    fields,
  };
}
