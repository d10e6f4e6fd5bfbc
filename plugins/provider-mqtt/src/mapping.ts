/**
 * Turns one MQTT message into the `mqtt_message` payload. A JSON object or array is read with the
 * operator's mapping (the generic webhook's path expressions and `{{path}}` templates); anything
 * else is plain text and becomes the body, the topic the title. Both see `$topic` (the topic),
 * `$levels` (its levels, e.g. `$levels[-1]`) and `$text` (the message as text). Expressions are
 * compiled once, at create().
 */
import { jsonTooDeep } from '@herald/plugin-api';
import type { MappingConfig, Severity } from './config.ts';
import { SEVERITIES } from './config.ts';
import type { TemplatePart } from './interpolate.ts';
import { isTemplate, parseTemplate, renderTemplate } from './interpolate.ts';
import type { PathExpression, PathVars } from './path-expr.ts';
import { evaluate, isEmpty, PathExpressionError, parsePathExpression, stringify } from './path-expr.ts';

type TextField = { kind: 'expr'; expr: PathExpression } | { kind: 'template'; parts: TemplatePart[] };

export interface CompiledMapping {
  title?: TextField;
  body?: TextField;
  severity?: PathExpression;
  severityMap: Map<string, Severity>;
  eventKey?: PathExpression;
}

/** The payload of one `mqtt_message` event. */
export interface MqttMessagePayload {
  [key: string]: unknown;
  topic: string;
  title: string;
  body: string;
  severity: Severity;
  event_key?: string;
  /** The mapped values as text, by mapping field name; null when the message had no value there. */
  fields: Record<string, string | null>;
  /** Present (true) for a retained message the broker replayed on subscribing. */
  retained?: boolean;
}

export const MAX_TITLE = 300;
export const MAX_BODY = 8000;
const MAX_FIELD = 1000;
const MAX_TOPIC = 1024;
/** Larger payloads are not parsed as JSON: they are read as text (and cut to the body's length). */
export const MAX_JSON_BYTES = 256 * 1024;

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

const given = (s: string | undefined): s is string => typeof s === 'string' && s.trim() !== '';

/** Compiles a mapping; throws PathExpressionError naming the mapping field and the problem. An empty field is unset. */
export function compileMapping(m: MappingConfig): CompiledMapping {
  const severityMap = new Map<string, Severity>();
  for (const [raw, sev] of Object.entries(m.severity_map ?? {})) severityMap.set(raw.trim().toLowerCase(), sev);
  return {
    title: given(m.title) ? field('title', () => compileText(m.title)) : undefined,
    body: given(m.body) ? field('body', () => compileText(m.body)) : undefined,
    severity: given(m.severity) ? field('severity', () => parsePathExpression(m.severity)) : undefined,
    severityMap,
    eventKey: given(m.event_key) ? field('event_key', () => parsePathExpression(m.event_key!)) : undefined,
  };
}

/**
 * A message's bytes as text (null when they are not UTF-8) and as parsed JSON (undefined unless an object or array).
 */
export function decodePayload(payload: Uint8Array): { text: string | null; json: unknown } {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(payload);
  } catch {
    return { text: null, json: undefined };
  }
  const start = text.trimStart()[0];
  if ((start !== '{' && start !== '[') || payload.byteLength > MAX_JSON_BYTES || jsonTooDeep(payload))
    return { text, json: undefined };
  try {
    return { text, json: JSON.parse(text) as unknown };
  } catch {
    return { text, json: undefined };
  }
}

function textOf(f: TextField | undefined, data: unknown, vars: PathVars): string | null {
  if (!f) return null;
  const v = f.kind === 'template' ? renderTemplate(f.parts, data, vars) : evaluate(f.expr, data, vars);
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

/** The `mqtt_message` payload of one message. */
export function mapMessage(
  c: CompiledMapping,
  msg: { topic: string; payload: Uint8Array; retained?: boolean },
): MqttMessagePayload {
  const { text, json } = decodePayload(msg.payload);
  const vars: PathVars = { $topic: msg.topic, $levels: msg.topic.split('/'), $text: text ?? '' };
  const title = textOf(c.title, json, vars);
  const body = textOf(c.body, json, vars);
  const rawSeverity = c.severity ? evaluate(c.severity, json, vars) : undefined;
  const severityText = isEmpty(rawSeverity) ? null : stringify(rawSeverity);
  const eventKey = c.eventKey ? evaluate(c.eventKey, json, vars) : undefined;
  const eventKeyText = isEmpty(eventKey) ? undefined : clip(stringify(eventKey), MAX_FIELD);
  const fields: Record<string, string | null> = {};
  if (c.title) fields.title = title === null ? null : clip(title, MAX_FIELD);
  if (c.body) fields.body = body === null ? null : clip(body, MAX_FIELD);
  if (c.severity) fields.severity = severityText === null ? null : clip(severityText, MAX_FIELD);
  if (c.eventKey) fields.event_key = eventKeyText ?? null;
  const raw = text ?? `(binary payload, ${msg.payload.byteLength} bytes)`;
  const out: MqttMessagePayload = {
    topic: clip(msg.topic, MAX_TOPIC),
    title: clip(title ?? msg.topic, MAX_TITLE),
    body: clip(body ?? raw, MAX_BODY),
    severity: mapSeverity(severityText, c.severityMap),
    fields,
  };
  if (eventKeyText !== undefined) out.event_key = eventKeyText;
  if (msg.retained) out.retained = true;
  return out;
}
