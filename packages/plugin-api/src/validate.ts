/**
 * The plugin validator: what the core checks when it loads a plugin, exported so that a plugin's
 * own tests find the same problems first.
 *
 * ```ts
 * import { validatePlugin } from '@herald/plugin-api';
 * import pkg from '../package.json' with { type: 'json' };
 * const { errors, warnings } = validatePlugin(plugin, { packageJson: pkg });
 * assert.deepEqual([...errors, ...warnings], []);
 * ```
 *
 * **Errors** refuse the load (the service does not start, naming the plugin and the problem):
 * a schema type JSON cannot hold (`Type.BigInt`, `Type.Function`, `Type.Undefined`,
 * `Type.Symbol`…) in a config, tracker or event payload schema; a field name the core or its web
 * form takes over, declared otherwise than they use it (see {@link RESERVED_FIELDS}); an
 * `apiVersion` or `kind` that differs between the manifest and the package.json `herald` block.
 *
 * **Warnings** are logged at WARNING with the plugin's id and do not stop it: a config or tracker
 * field the web form cannot show as a field (a union of objects, a tuple, an array of objects…:
 * shown as a raw JSON text box, secrets in clear), and locale strings missing in English or
 * Russian (shown in English, or from the manifest, instead).
 */
import { LOCALES, PLUGIN_API_VERSION, SECRET_KEY } from './index.ts';
import { type LocalizableManifest, missingLocaleStrings } from './locales.ts';

/** One problem the validator found. */
export interface PluginIssue {
  /** Stable code: `non_json_type`, `reserved_field`, `api_version`, `form_raw_json`, `locale_missing`… */
  code: string;
  /** Where: `config.base_url`, `tracker.albums[]`, `events.acme_failed.payload.count`, `locales.ru`, `package.json`. */
  path: string;
  /** A sentence saying what is wrong and what to do. */
  message: string;
}

export interface PluginValidation {
  /** True when there is no error (warnings allowed). */
  ok: boolean;
  errors: PluginIssue[];
  warnings: PluginIssue[];
}

export interface ValidatePluginOptions {
  /**
   * The plugin's package.json (or just its `herald` block as `{ herald }`): its `apiVersion` and
   * `kind` must match the manifest's.
   */
  packageJson?: { name?: unknown; herald?: { apiVersion?: unknown; kind?: unknown } | unknown };
}

/**
 * Config field names the core or its web form give a meaning of their own, and how a plugin may
 * declare them (anything else is refused at load).
 */
export const RESERVED_FIELDS = {
  /** Providers: the form shows its own webhook authentication choice in its place and sends it outside the config. */
  auth_mode: 'provider: only as a choice of exactly hmac_sha256, bearer and none (webhook authentication)',
  /** Providers: the form shows it only beside auth_mode "none", and sends it outside the config. */
  acknowledge_unauthenticated: 'provider: only as a boolean beside auth_mode',
  /** Targets: the form shows a choice of the user's bots; the service accepts only one of their bots of this kind. */
  bot_id: 'target: only as a string, in a plugin with a botDriver',
  /** Providers: the core reads it as the instance's poll interval in seconds. */
  poll_interval_seconds: 'provider: only as a number of seconds (Type.Integer or Type.Number)',
} as const;

/** Fields of a provider record in the API: a config alias must not take one of these names. */
const RECORD_FIELDS = [
  'id',
  'kind',
  'name',
  'enabled',
  'config',
  'secrets_set',
  'status',
  'status_detail',
  'webhook_url',
  'webhook_connection',
  'webhook_example',
  'smtp_listener_off',
  'core_managed',
  'plugin_enabled',
  'outbound_allow',
  'created_at',
  'updated_at',
  'user_id',
  'webhook_token',
];

const AUTH_MODES = ['bearer', 'hmac_sha256', 'none'];
const JSON_TYPES = new Set(['string', 'number', 'integer', 'boolean', 'null', 'array', 'object']);
const TYPEBOX_NAME: Record<string, string> = {
  bigint: 'Type.BigInt',
  function: 'Type.Function',
  constructor: 'Type.Constructor',
  undefined: 'Type.Undefined',
  symbol: 'Type.Symbol',
  void: 'Type.Void',
  promise: 'Type.Promise',
  date: 'Type.Date',
  uint8array: 'Type.Uint8Array',
};

type Json = Record<string, any>;
const isObj = (v: unknown): v is Json => Boolean(v) && typeof v === 'object' && !Array.isArray(v);
const typeOf = (s: Json): string | undefined =>
  Array.isArray(s.type) ? s.type.find((x: unknown) => x !== 'null') : s.type;

/** The allowed values of an enum field (`enum`, or `anyOf`/`oneOf` of `const`s), or null. */
function enumValues(s: Json): unknown[] | null {
  if (Array.isArray(s.enum)) return s.enum;
  const alts = s.anyOf ?? s.oneOf;
  if (Array.isArray(alts) && alts.length && alts.every((a: Json) => isObj(a) && a.const !== undefined))
    return alts.map((a: Json) => a.const);
  return null;
}

const SCALAR = new Set(['string', 'integer', 'number', 'boolean']);
function mapValueSchema(s: Json): Json | null {
  if (isObj(s.properties) && Object.keys(s.properties).length) return null;
  const pattern = Object.values(isObj(s.patternProperties) ? s.patternProperties : {});
  const value =
    pattern.length === 1
      ? pattern[0]
      : !s.patternProperties && isObj(s.additionalProperties)
        ? s.additionalProperties
        : null;
  if (!isObj(value)) return null;
  const t = typeOf(value) ?? (enumValues(value) ? 'string' : undefined);
  return t && SCALAR.has(t) ? value : null;
}

/** The control the web form gives a field (the same rules as the form's own). */
export type FormFieldKind =
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

/**
 * Which control the web form shows for a field schema: `json` is a raw JSON text box, the form's
 * last resort. The guide's table "Schema shapes and form fields" lists every case.
 */
export function formFieldKind(s: unknown): FormFieldKind {
  if (!isObj(s)) return 'json';
  if (enumValues(s)) return 'enum';
  const type = typeOf(s);
  if (type === 'boolean' || type === 'integer' || type === 'number') return type;
  if (type === 'string') return (s.maxLength ?? 0) > 4096 ? 'text' : 'string';
  if (type === 'array' && isObj(s.items) && typeOf(s.items) === 'string' && !enumValues(s.items)) return 'string-list';
  if (type === 'object' && s.properties && !s.patternProperties) return 'object';
  if (type === 'object' && mapValueSchema(s)) return 'map';
  return 'json';
}

/** Every sub-schema of `s` with a readable path, depth first. */
function walk(s: unknown, path: string, visit: (s: Json, path: string) => void, depth = 0): void {
  if (!isObj(s) || depth > 64) return;
  visit(s, path);
  const sub = (x: unknown, p: string) => walk(x, p, visit, depth + 1);
  if (isObj(s.properties)) for (const [k, v] of Object.entries(s.properties)) sub(v, path ? `${path}.${k}` : k);
  if (isObj(s.patternProperties)) for (const v of Object.values(s.patternProperties)) sub(v, `${path}.*`);
  if (isObj(s.additionalProperties)) sub(s.additionalProperties, `${path}.*`);
  if (Array.isArray(s.items)) s.items.forEach((v: unknown, i: number) => sub(v, `${path}[${i}]`));
  else if (isObj(s.items)) sub(s.items, `${path}[]`);
  if (Array.isArray(s.prefixItems)) s.prefixItems.forEach((v: unknown, i: number) => sub(v, `${path}[${i}]`));
  for (const key of ['anyOf', 'oneOf', 'allOf'] as const)
    if (Array.isArray(s[key])) for (const v of s[key]) sub(v, path);
  for (const key of ['not', 'if', 'then', 'else'] as const) sub(s[key], path);
  for (const key of ['$defs', 'definitions'] as const)
    if (isObj(s[key])) for (const [k, v] of Object.entries(s[key])) sub(v, `${path}#${k}`);
  // TypeBox's Type.Function and Type.Constructor keep their signature here.
  if (Array.isArray(s.parameters)) s.parameters.forEach((v: unknown, i: number) => sub(v, `${path}(${i})`));
  sub(s.returnType, `${path}()`);
}

const secretsIn = (s: unknown, path: string): string[] => {
  const out: string[] = [];
  walk(s, path, (x, p) => {
    if (x[SECRET_KEY] === true) out.push(p);
  });
  return [...new Set(out)];
};

/** Why a field is a raw JSON box, in a few words. */
function shapeOf(s: Json): string {
  const alts = s.anyOf ?? s.oneOf;
  if (Array.isArray(alts)) {
    if (alts.some((a: Json) => isObj(a) && typeOf(a) === 'object')) return 'a union of objects';
    if (alts.some((a: Json) => isObj(a) && a.type === 'null')) return 'a union with null (use Type.Optional instead)';
    return 'a union of different types';
  }
  if (Array.isArray(s.allOf)) return 'an intersection (Type.Intersect)';
  const type = typeOf(s);
  if (type === 'array') {
    if (Array.isArray(s.items) || Array.isArray(s.prefixItems)) return 'a tuple';
    if (isObj(s.items) && enumValues(s.items)) return 'an array of choices';
    if (isObj(s.items) && typeOf(s.items) === 'object') return 'an array of objects';
    const plural = isObj(s.items) && typeOf(s.items) ? 's' : '';
    return `an array of ${typeOf(s.items ?? {}) ?? 'values of any type'}${plural}`;
  }
  if (type === 'object')
    return 'a map whose values are not plain strings, numbers or booleans, or an object without declared fields';
  if (s.$ref) return 'a reference ($ref)';
  if (type === undefined) return 'a value of any type (Type.Any, Type.Unknown)';
  return `a value of type ${String(type)}`;
}

export function validatePlugin(def: unknown, opts: ValidatePluginOptions = {}): PluginValidation {
  const errors: PluginIssue[] = [];
  const warnings: PluginIssue[] = [];
  const error = (code: string, path: string, message: string) => {
    errors.push({ code, path, message });
  };
  const warn = (code: string, path: string, message: string) => {
    warnings.push({ code, path, message });
  };
  const done = (): PluginValidation => ({ ok: errors.length === 0, errors, warnings });

  const d = def as Json | undefined;
  const m = d?.manifest as Json | undefined;
  if (!isObj(m)) {
    error(
      'not_a_plugin',
      'manifest',
      'There is no manifest: the default export must be made with defineProvider() or defineTarget().',
    );
    return done();
  }
  if (typeof d?.create !== 'function') error('not_a_plugin', 'create', 'There is no create() function.');
  if (m.kind !== 'provider' && m.kind !== 'target')
    error(
      'kind',
      'manifest.kind',
      `The manifest's kind is ${JSON.stringify(m.kind)}; it must be "provider" or "target".`,
    );
  if (typeof m.id !== 'string' || !/^[a-z][a-z0-9_]{1,40}$/.test(m.id))
    error(
      'id',
      'manifest.id',
      `The id ${JSON.stringify(m.id)} is not valid: 2-41 lower-case letters, digits and underscores, starting ` +
        'with a letter.',
    );
  if (m.apiVersion !== PLUGIN_API_VERSION)
    error(
      'api_version',
      'manifest.apiVersion',
      `The manifest says apiVersion ${String(m.apiVersion)}, but this contract is plugin API version ` +
        `${PLUGIN_API_VERSION}.`,
    );

  const pkg = opts.packageJson;
  if (pkg !== undefined) {
    const herald = (pkg as Json).herald as Json | undefined;
    if (!isObj(herald)) {
      error(
        'package_json',
        'package.json',
        `package.json has no "herald" block; add "herald": { "apiVersion": ${PLUGIN_API_VERSION}, "kind": ` +
          `"${String(m.kind)}" }.`,
      );
    } else {
      if (herald.apiVersion !== m.apiVersion)
        error(
          'api_version_mismatch',
          'package.json',
          `package.json says "herald": { "apiVersion": ${String(herald.apiVersion)} } but the manifest says ` +
            `apiVersion ${String(m.apiVersion)}; they must be the same.`,
        );
      if (herald.kind !== m.kind)
        error(
          'kind_mismatch',
          'package.json',
          `package.json says "herald": { "kind": "${String(herald.kind)}" } but the manifest's kind is ` +
            `"${String(m.kind)}"; they must be the same.`,
        );
    }
  }

  // Schemas JSON cannot hold: configs are stored and sent as JSON, payloads recorded as JSON.
  const schemas: [string, unknown, string][] = [
    ['config', m.configSchema, 'config field'],
    ['tracker', m.trackerSchema, 'tracker field'],
  ];
  for (const [type, spec] of Object.entries(isObj(m.events) ? m.events : {}))
    schemas.push([`events.${type}.payload`, (spec as Json)?.payload, `payload field of event type "${type}"`]);
  for (const [root, schema, what] of schemas) {
    walk(schema, '', (s, p) => {
      const types = Array.isArray(s.type) ? s.type : s.type === undefined ? [] : [s.type];
      for (const t of types) {
        if (JSON_TYPES.has(t)) continue;
        const name = TYPEBOX_NAME[String(t).toLowerCase()] ?? `"type": "${String(t)}"`;
        const where = p
          ? `${what} "${p}"`
          : `the ${root === 'config' ? 'config' : root === 'tracker' ? 'tracker' : 'payload'} schema itself`;
        const instead =
          t === 'bigint'
            ? 'Type.Integer, or Type.String for digits beyond 2^53'
            : 'Type.String, Type.Number, Type.Boolean, Type.Object, Type.Array';
        error(
          'non_json_type',
          p ? `${root}.${p}` : root,
          `The ${where} is ${name}, which JSON cannot hold: every value is stored and sent as JSON, so every save ` +
            `would fail. Use a JSON type (${instead}) or leave the field out.`,
        );
      }
    });
  }
  const configProps =
    isObj(m.configSchema) && isObj(m.configSchema.properties)
      ? (m.configSchema.properties as Record<string, Json>)
      : undefined;
  if (!isObj(m.configSchema) || m.configSchema.type !== 'object')
    error(
      'config_schema',
      'config',
      'The configSchema must be an object schema (Type.Object({...})), even one without fields.',
    );
  if (
    m.kind === 'provider' &&
    m.trackerSchema !== undefined &&
    (!isObj(m.trackerSchema) || m.trackerSchema.type !== 'object')
  )
    error('tracker_schema', 'tracker', 'The trackerSchema must be an object schema (Type.Object({...})).');

  // Reserved field names.
  const props = configProps ?? {};
  const has = (k: string) => Object.hasOwn(props, k);
  if (m.kind === 'provider') {
    if (has('auth_mode')) {
      const values = enumValues(props.auth_mode ?? {});
      if (!values || values.length !== AUTH_MODES.length || !AUTH_MODES.every((v) => values.includes(v))) {
        error(
          'reserved_field',
          'config.auth_mode',
          'The config field "auth_mode" is reserved: the web form replaces it with its own webhook authentication ' +
            'choice (hmac_sha256, bearer or none) and sends that outside the config, so saving fails. Rename the ' +
            'field, or declare it as exactly that choice to use it.',
        );
      }
    }
    if (
      has('acknowledge_unauthenticated') &&
      (typeOf(props.acknowledge_unauthenticated ?? {}) !== 'boolean' || !has('auth_mode'))
    ) {
      error(
        'reserved_field',
        'config.acknowledge_unauthenticated',
        'The config field "acknowledge_unauthenticated" is reserved: the web form shows it only beside auth_mode ' +
          '"none" and sends it outside the config. Rename the field, or declare it as a Type.Boolean beside an ' +
          'auth_mode field.',
      );
    }
    if (
      has('poll_interval_seconds') &&
      !['integer', 'number'].includes(typeOf(props.poll_interval_seconds ?? {}) ?? '')
    ) {
      error(
        'reserved_field',
        'config.poll_interval_seconds',
        'The config field "poll_interval_seconds" is reserved: the core reads it as the instance\'s poll interval ' +
          'in seconds. Declare it as Type.Integer (or Type.Number), or rename it.',
      );
    }
    for (const a of Array.isArray(m.configAliases) ? m.configAliases : []) {
      if (RECORD_FIELDS.includes(a))
        error(
          'reserved_field',
          `configAliases.${a}`,
          `The config alias "${a}" is reserved: a provider record in the API already has a field of that name. ` +
            'Leave it out of configAliases.',
        );
    }
  }
  if (m.kind === 'target' && has('bot_id')) {
    if (!d?.botDriver)
      error(
        'reserved_field',
        'config.bot_id',
        'The config field "bot_id" is reserved for targets with a botDriver: the web form shows it as a choice of ' +
          "the user's bots, and the service accepts only the id of one of their bots of this kind. Rename the " +
          'field, or add a botDriver.',
      );
    else if (typeOf(props.bot_id ?? {}) !== 'string')
      error(
        'reserved_field',
        'config.bot_id',
        'The config field "bot_id" holds the id of one of the user\'s bots: declare it as Type.String.',
      );
  }

  // Shapes the form cannot show as fields.
  const formFields = (schema: unknown, root: string, prefix = ''): void => {
    const p = isObj(schema) && isObj(schema.properties) ? schema.properties : {};
    for (const [k, s] of Object.entries(p)) {
      const path = prefix ? `${prefix}.${k}` : k;
      if (!isObj(s)) {
        error(
          'field_schema',
          `${root}.${path}`,
          `The ${root} field "${path}" has no schema (a Type.* value is needed).`,
        );
        continue;
      }
      const kind = formFieldKind(s);
      if (kind === 'object') {
        formFields(s, root, path);
        continue;
      }
      if (kind === 'json') {
        const secrets = secretsIn(s, path);
        const named =
          secrets.length === 1
            ? `its secret "${secrets[0]}"`
            : `its secrets ${secrets.map((x) => `"${x}"`).join(', ')}`;
        const inClear = secrets.length ? `, with ${named} in clear` : '';
        warn(
          'form_raw_json',
          `${root}.${path}`,
          `The ${root} field "${path}" is ${shapeOf(s as Json)}: the web form cannot show it as a field and ` +
            `offers a raw JSON text box instead${inClear}. Flatten it into plain fields (a choice plus the fields ` +
            'of each option, a list of strings…) or accept the JSON box.',
        );
        continue;
      }
      if ((kind === 'map' || kind === 'string-list') && secretsIn(s, path).some((x) => x !== path)) {
        warn(
          'form_secret_in_clear',
          `${root}.${path}`,
          `The ${root} field "${path}" is a ${kind === 'map' ? 'map' : 'list'} of secrets: the web form shows its ` +
            'values in clear text ' +
            `boxes${kind === 'map' ? ', and the service neither masks nor seals secrets inside a Type.Record' : ''}` +
            '. Use separate Secret() fields.',
        );
      }
    }
  };
  formFields(m.configSchema, 'config');
  if (m.kind === 'provider') formFields(m.trackerSchema, 'tracker');

  // Locale strings in both languages.
  if (!isObj(m.locales)) {
    warn(
      'locale_missing',
      'locales',
      "The plugin has no locale files: every language shows the manifest's English. Add locales/en.json and " +
        "locales/ru.json and attach them as manifest.locales (see the guide's Locales).",
    );
  } else {
    for (const locale of LOCALES) {
      const language = locale === 'ru' ? 'Russian' : 'English';
      if (!isObj(m.locales[locale])) {
        warn(
          'locale_missing',
          `locales.${locale}`,
          `The plugin has no ${language} locale file (locales/${locale}.json): ` +
            (locale === 'en'
              ? "every language falls back to the manifest's own words"
              : 'Russian users see it in English') +
            '.',
        );
        continue;
      }
      let missing: string[];
      try {
        missing = missingLocaleStrings(m as unknown as LocalizableManifest, locale);
      } catch (err) {
        warn(
          'locale_missing',
          `locales.${locale}`,
          `The ${language} locale file could not be checked: ${(err as Error)?.message ?? String(err)}.`,
        );
        continue;
      }
      const lacking = missing.filter((k) => !k.startsWith('unknown: '));
      const unknown = missing.filter((k) => k.startsWith('unknown: ')).map((k) => k.slice('unknown: '.length));
      const list = (keys: string[]) =>
        `${keys.slice(0, 12).join(', ')}${keys.length > 12 ? ` and ${keys.length - 12} more` : ''}`;
      if (lacking.length)
        warn(
          'locale_missing',
          `locales.${locale}`,
          `locales/${locale}.json lacks ${lacking.length} string${lacking.length === 1 ? '' : 's'}, shown ` +
            `${locale === 'en' ? 'from the manifest or as the field name' : 'in English'} instead: ` +
            `${list(lacking)}.`,
        );
      if (unknown.length)
        warn(
          'locale_unknown_key',
          `locales.${locale}`,
          `locales/${locale}.json has key${unknown.length === 1 ? '' : 's'} matching no field, option or event ` +
            `type (a typo, or a renamed field?): ${list(unknown)}.`,
        );
    }
  }
  return done();
}
