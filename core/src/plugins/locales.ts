/**
 * A plugin's words in the caller's language: which language a request wants, and the manifest's
 * name, description, schema titles and hints, option labels and event descriptions resolved from
 * the plugin's locale files, English string by string where a translation is missing.
 */
import {
  LOCALES,
  type Locale,
  localeFields,
  type PluginFieldText,
  type PluginLocaleStrings,
  type PluginManifest,
} from '@herald/plugin-api';
import type { JsonSchema } from './api-types.ts';

const isLocale = (v: unknown): v is Locale => typeof v === 'string' && (LOCALES as readonly string[]).includes(v);

/** Language tags of an `Accept-Language` header, most wanted first (`q=0` left out). */
export function acceptedLanguages(header: string | undefined): string[] {
  if (!header) return [];
  return header
    .split(',')
    .map((part, i) => {
      const [tag, ...params] = part.trim().split(';');
      const q = params.map((p) => /^\s*q\s*=\s*([\d.]+)\s*$/i.exec(p)).find(Boolean);
      return { tag: tag.trim().toLowerCase(), q: q ? Number(q[1]) : 1, i };
    })
    .filter((x) => x.tag && x.q > 0)
    .sort((a, b) => b.q - a.q || a.i - b.i)
    .map((x) => x.tag);
}

/**
 * The language to answer in: an explicit `?locale=` (the web client's own language), else the
 * user's language, else the first supported one in `Accept-Language` (`ru-RU` counts as `ru`),
 * else English. Values Herald does not ship are skipped.
 */
export function pickLocale(o: { query?: unknown; user?: string | null; acceptLanguage?: string }): Locale {
  if (isLocale(o.query)) return o.query;
  if (isLocale(o.user)) return o.user;
  for (const tag of acceptedLanguages(o.acceptLanguage)) {
    const base = tag.split('-')[0];
    if (isLocale(base)) return base;
  }
  return 'en';
}

/** A manifest's user-facing strings in one language. */
export interface LocalizedPlugin {
  display_name: string;
  description: string | null;
  /** The manifest's config schema (an object schema: the plugin validator refuses a manifest with another). */
  config_schema: JsonSchema;
  tracker_schema: JsonSchema | null;
  /** Event type → description (null when neither the locales nor the manifest have one). */
  events: Record<string, string | null>;
}

const nonEmpty = (...vs: unknown[]): string | undefined =>
  vs.find((v): v is string => typeof v === 'string' && v.trim() !== '');

/**
 * A copy of `schema` with each form field's `title` and `description` set to its label and hint in
 * the language (then English, then what the schema says), and `x-option-labels` on enum fields.
 */
export function localizeSchema(
  schema: unknown,
  section: 'config' | 'tracker',
  l: PluginLocaleStrings,
  en: PluginLocaleStrings,
): unknown {
  if (!schema || typeof schema !== 'object') return schema ?? null;
  const copy: unknown = JSON.parse(JSON.stringify(schema));
  for (const f of localeFields(copy)) {
    const s = f.schema;
    const text: PluginFieldText = l[section]?.[f.path] ?? {};
    const fallback: PluginFieldText = en[section]?.[f.path] ?? {};
    const title = nonEmpty(text.label, fallback.label, s.title);
    const hint = nonEmpty(text.hint, fallback.hint, s.description);
    if (title !== undefined) s.title = title;
    if (hint !== undefined) s.description = hint;
    if (f.options) {
      const labels: Record<string, string> = {};
      for (const o of f.options) {
        const label = nonEmpty(text.options?.[o], fallback.options?.[o]);
        if (label !== undefined) labels[o] = label;
      }
      if (Object.keys(labels).length) s['x-option-labels'] = labels;
    }
  }
  return copy;
}

const cache = new WeakMap<object, Map<Locale, LocalizedPlugin>>();

/** The manifest's strings in `locale`, computed once per manifest and language. */
export function localizeManifest(m: PluginManifest, locale: Locale): LocalizedPlugin {
  let byLocale = cache.get(m);
  if (!byLocale) cache.set(m, (byLocale = new Map()));
  const hit = byLocale.get(locale);
  if (hit) return hit;
  const en = m.locales?.en ?? {};
  const l = m.locales?.[locale] ?? {};
  const events: Record<string, string | null> = {};
  for (const [type, spec] of Object.entries(m.events ?? {})) {
    events[type] = nonEmpty(l.events?.[type]?.description, en.events?.[type]?.description, spec.description) ?? null;
  }
  const out: LocalizedPlugin = {
    display_name: nonEmpty(l.displayName, en.displayName, m.displayName) ?? m.id,
    description: nonEmpty(l.description, en.description, m.description) ?? null,
    // Object schemas both, as the plugin validator checked (see LocalizedPlugin).
    config_schema: localizeSchema(m.configSchema, 'config', l, en) as JsonSchema,
    tracker_schema: m.trackerSchema ? (localizeSchema(m.trackerSchema, 'tracker', l, en) as JsonSchema) : null,
    events,
  };
  byLocale.set(locale, out);
  return out;
}
