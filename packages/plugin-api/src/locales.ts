/**
 * Plugin locale files: the words a plugin shows to people in the web client and the API, one file
 * per language, shipped inside the plugin package and attached to the manifest as `locales`.
 *
 * ## Files
 *
 * Put them next to `package.json` as `locales/<language>.json` (`en.json` is required; first-party
 * plugins also ship `ru.json`), list `locales` in the package's `files`, and import them from the
 * manifest module. A JSON import with the `type` attribute works the same in TypeScript source and
 * in a plugin built to JavaScript and installed from a tarball:
 *
 * ```ts
 * import en from '../locales/en.json' with { type: 'json' };
 * import ru from '../locales/ru.json' with { type: 'json' };
 * export default defineProvider({ manifest: { …, locales: { en, ru } }, create … });
 * ```
 *
 * ## Format
 *
 * ```json
 * {
 *   "displayName": "Immich (photo library)",
 *   "description": "Notifies when assets are added to or removed from followed Immich albums.",
 *   "config": {
 *     "base_url": { "label": "Server address", "hint": "e.g. https://photos.example.net" },
 *     "security": { "label": "Encryption", "options": { "starttls": "STARTTLS", "none": "None" } },
 *     "entity_filters": { "label": "Entity filters" },
 *     "entity_filters.include_domains": { "label": "Domains", "hint": "…" }
 *   },
 *   "tracker": { "album_ids": { "label": "Albums", "hint": "…" } },
 *   "events": { "album_assets_changed": { "description": "Photos were added to or removed from an album" } }
 * }
 * ```
 *
 * - `displayName`, `description`: the plugin's name and one-line description.
 * - `config` / `tracker`: one entry per field of `configSchema` / `trackerSchema`, keyed by the
 *   field's dotted path (nested objects, the ones the form shows as a group, add their own fields as
 *   `parent.child`). `label` is the field's name on the form, `hint` the help under it, `options`
 *   one label per allowed value of an enum field (keyed by the value as a string).
 * - `events`: one entry per event type the provider declares; `description` says when it fires.
 * - `connection`: for a webhook provider with `webhook.connection`, one `label` per value it lists.
 *
 * ## Resolution
 *
 * The core answers in the caller's language and falls back to English string by string: a
 * string missing from `ru.json` shows the `en.json` one, and one missing there too the manifest's
 * own `displayName`/`description`, schema `title`/`description` or event `description` — never
 * a key. Every field, option and event type needs a `label`/`options`/`description` in `en.json`;
 * {@link missingLocaleStrings} lists what a locale lacks, so a plugin's test can require completeness.
 */
import type { Locale } from './index.ts';

/** The words of one configuration or tracker field. */
export interface PluginFieldText {
  /** The field's name on the form. */
  label?: string;
  /** Help shown under the field. */
  hint?: string;
  /** Labels of an enum field's allowed values, keyed by the value as a string. */
  options?: Record<string, string>;
}

/** The words of one event type. */
export interface PluginEventText {
  /** When the event fires, in a sentence. */
  description?: string;
}

/** The content of one `locales/<language>.json` file. */
export interface PluginLocaleStrings {
  displayName?: string;
  description?: string;
  /** Keyed by the dotted path of a `configSchema` field. */
  config?: Record<string, PluginFieldText>;
  /** Keyed by the dotted path of a `trackerSchema` field. */
  tracker?: Record<string, PluginFieldText>;
  /** Keyed by event type. */
  events?: Record<string, PluginEventText>;
  /**
   * Keyed by the `key` of each value a webhook provider's `webhook.connection` lists (`server_url`,
   * `app_token`…): its `label` (and optional `hint`) where the user is told what to paste.
   */
  connection?: Record<string, PluginFieldText>;
}

/** A plugin's locale files by language; English is required and is the fallback for every string. */
export type PluginLocales = { en: PluginLocaleStrings } & Partial<Record<Locale | (string & {}), PluginLocaleStrings>>;

/** A form field found in a schema: its dotted path, and the allowed values when it is an enum. */
export interface LocaleField {
  path: string;
  options: string[] | null;
  schema: Record<string, unknown>;
}

type Json = Record<string, any>;
const typeOf = (s: Json): string | undefined =>
  Array.isArray(s.type) ? s.type.find((x: string) => x !== 'null') : s.type;

/** The allowed values of an enum field (`enum`, or `anyOf`/`oneOf` of `const`s) as strings, or null. */
export function enumOptions(s: Json): string[] | null {
  if (Array.isArray(s.enum)) return s.enum.map(String);
  const alts = s.anyOf ?? s.oneOf;
  if (Array.isArray(alts) && alts.length && alts.every((a: Json) => a && a.const !== undefined))
    return alts.map((a: Json) => String(a.const));
  return null;
}

/**
 * Every field of a config or tracker schema that the form shows, depth first: top-level
 * properties, and the properties of nested objects (objects with `properties` and no
 * `patternProperties`, which the form renders as a group).
 */
export function localeFields(schema: unknown, prefix = ''): LocaleField[] {
  const out: LocaleField[] = [];
  const props = (schema as Json | null | undefined)?.properties;
  if (!props || typeof props !== 'object') return out;
  for (const [key, s] of Object.entries<Json>(props)) {
    const path = prefix ? `${prefix}.${key}` : key;
    const options = enumOptions(s);
    out.push({ path, options, schema: s });
    if (!options && typeOf(s) === 'object' && s.properties && !s.patternProperties) out.push(...localeFields(s, path));
  }
  return out;
}

/** The part of a manifest the locale check reads. */
export interface LocalizableManifest {
  displayName: string;
  description?: string;
  configSchema: unknown;
  trackerSchema?: unknown;
  events?: Record<string, { description?: string }>;
  webhook?: {
    connection?(
      publicUrl: string,
      token: string,
      env?: { webhookUrl: string; smtp?: { host: string; port: number } },
    ): { fields?: { key: string }[] };
  };
  locales?: PluginLocales;
}

/**
 * What `locale` lacks, as dotted keys of the locale file (`displayName`, `config.base_url.label`,
 * `config.security.options.tls`, `events.push.description`…), plus keys it has that match no
 * field, option or event type (prefixed `unknown: `). Required: the display name, a description
 * when the manifest or `en.json` has one, a label for every schema field, a hint for every field
 * whose schema or `en.json` entry has one, a label for every enum value, and a description for
 * every event type, and a label for every value `webhook.connection` lists; for a language other
 * than English, also every string `en.json` has.
 * An empty list means complete.
 */
export function missingLocaleStrings(m: LocalizableManifest, locale: string): string[] {
  const en = m.locales?.en ?? {};
  const l = m.locales?.[locale] ?? {};
  const missing: string[] = [];
  const has = (v: unknown) => typeof v === 'string' && v.trim() !== '';
  if (!has(l.displayName)) missing.push('displayName');
  if ((m.description || en.description || locale === 'en') && !has(l.description)) missing.push('description');
  for (const section of ['config', 'tracker'] as const) {
    const schema = section === 'config' ? m.configSchema : m.trackerSchema;
    const fields = localeFields(schema);
    const known = new Set(fields.map((f) => f.path));
    for (const f of fields) {
      const text = l[section]?.[f.path] ?? {};
      const enText = en[section]?.[f.path] ?? {};
      if (!has(text.label)) missing.push(`${section}.${f.path}.label`);
      if ((has(f.schema.description) || has(enText.hint)) && !has(text.hint)) missing.push(`${section}.${f.path}.hint`);
      for (const o of f.options ?? []) if (!has(text.options?.[o])) missing.push(`${section}.${f.path}.options.${o}`);
      for (const o of Object.keys(text.options ?? {}))
        if (!f.options?.includes(o)) missing.push(`unknown: ${section}.${f.path}.options.${o}`);
    }
    for (const p of Object.keys(l[section] ?? {})) if (!known.has(p)) missing.push(`unknown: ${section}.${p}`);
  }
  const events = Object.keys(m.events ?? {});
  for (const type of events) if (!has(l.events?.[type]?.description)) missing.push(`events.${type}.description`);
  for (const type of Object.keys(l.events ?? {})) if (!events.includes(type)) missing.push(`unknown: events.${type}`);
  // The values listed with the SMTP listener on and off, both labelled.
  const env = { webhookUrl: 'https://herald.example/api/hooks/token' };
  const listed = [env, { ...env, smtp: { host: 'herald.example', port: 2525 } }].flatMap(
    (e) => m.webhook?.connection?.('https://herald.example', 'token', e).fields ?? [],
  );
  const connection = [...new Set(listed.map((f) => f.key))];
  for (const key of connection) if (!has(l.connection?.[key]?.label)) missing.push(`connection.${key}.label`);
  for (const key of Object.keys(l.connection ?? {}))
    if (!connection.includes(key)) missing.push(`unknown: connection.${key}`);
  return missing;
}
