/**
 * The plugin validator (`validatePlugin`, `formFieldKind` from the contract) on small hand-made
 * definitions with plain JSON schemas: a valid one, and each kind of problem on both sides of each
 * limit, with the exact code, path and message a plugin author sees. Fast (no plugin is loaded);
 * test/plugins/validator.test.ts checks the first-party plugins and the loader.
 */
import { formFieldKind, RESERVED_FIELDS, validatePlugin } from '@herald/plugin-api';
import type { Test } from 'tap';
import t from 'tap';

type Json = Record<string, any>;
const obj = (properties: Json, extra: Json = {}) => ({ type: 'object', properties, ...extra });
const str = { type: 'string' };
const secret = { type: 'string', 'x-secret': true };

/** English and Russian locale files with a label for each field of `config` (and of `tracker`). */
function locales(config: Json = {}, tracker?: Json, events?: Json) {
  const words = (lang: string) => ({
    displayName: `Probe ${lang}`,
    description: `A probe (${lang}).`,
    config: Object.fromEntries(Object.keys(config).map((k) => [k, { label: `${k} ${lang}` }])),
    ...(tracker ? { tracker: Object.fromEntries(Object.keys(tracker).map((k) => [k, { label: k }])) } : {}),
    ...(events ? { events } : {}),
  });
  return { en: words('en'), ru: words('ru') };
}

/** A complete provider with the config fields `config`; `manifest` overrides the manifest's keys. */
function provider(config: Json = {}, manifest: Json = {}, def: Json = {}): Json {
  return {
    manifest: {
      id: 'probe',
      kind: 'provider',
      apiVersion: 1,
      displayName: 'Probe',
      description: 'A probe.',
      configSchema: obj(config),
      ingest: 'poll',
      events: {},
      locales: locales(config),
      ...manifest,
    },
    create: () => ({}),
    ...def,
  };
}
function target(config: Json = {}, manifest: Json = {}, def: Json = {}): Json {
  return provider(config, { kind: 'target', id: 'probe_target', ingest: undefined, ...manifest }, def);
}

const codes = (list: { code: string; path: string }[]) => list.map((i) => `${i.code} ${i.path}`);
const errorsOf = (def: unknown, opts?: Parameters<typeof validatePlugin>[1]) => codes(validatePlugin(def, opts).errors);
const warningsOf = (def: unknown) => codes(validatePlugin(def).warnings);
/** The message of the only issue of `def` (errors, then warnings). */
function only(t: Test, def: unknown, kind: 'errors' | 'warnings' = 'errors'): string {
  const v = validatePlugin(def);
  t.equal(v[kind].length, 1, `one issue: ${JSON.stringify(codes(v[kind]))}`);
  return v[kind][0]?.message ?? '';
}

t.test('a complete provider and a complete target pass without errors or warnings', async (t) => {
  t.strictSame(validatePlugin(provider({ url: str, token: secret, every: { type: 'integer' } })), {
    ok: true,
    errors: [],
    warnings: [],
  });
  t.strictSame(validatePlugin(target({ chat: str })), { ok: true, errors: [], warnings: [] });
  t.strictSame(
    validatePlugin(provider(), { packageJson: { name: 'p', herald: { apiVersion: 1, kind: 'provider' } } }),
    { ok: true, errors: [], warnings: [] },
    'with a package.json that agrees',
  );
  const warned = validatePlugin(provider({ any: {} }));
  t.equal(warned.ok, true, 'warnings alone leave it ok');
  t.equal(warned.warnings.length, 1);
  const refused = validatePlugin(provider({}, { apiVersion: 2 }));
  t.equal(refused.ok, false, 'an error refuses it');
});

t.test('not a plugin: no manifest, or no create()', async (t) => {
  const none = {
    ok: false,
    errors: [
      {
        code: 'not_a_plugin',
        path: 'manifest',
        message: 'There is no manifest: the default export must be made with defineProvider() or defineTarget().',
      },
    ],
    warnings: [],
  };
  for (const def of [undefined, null, {}, { manifest: null }, { manifest: [] }, { manifest: 'x' }, 'text'])
    t.strictSame(validatePlugin(def), none, `${JSON.stringify(def)}: nothing else is checked`);
  t.strictSame(validatePlugin(provider({}, {}, { create: undefined })).errors, [
    { code: 'not_a_plugin', path: 'create', message: 'There is no create() function.' },
  ]);
  t.strictSame(errorsOf(provider({}, {}, { create: {} })), ['not_a_plugin create'], 'create that is not a function');
});

t.test('the kind must be provider or target', async (t) => {
  t.strictSame(validatePlugin(provider({}, { kind: 'sink' })).errors, [
    {
      code: 'kind',
      path: 'manifest.kind',
      message: 'The manifest\'s kind is "sink"; it must be "provider" or "target".',
    },
  ]);
  t.match(only(t, provider({}, { kind: undefined })), /^The manifest's kind is undefined;/);
});

t.test('the id: 2 to 41 lower-case letters, digits and underscores, starting with a letter', async (t) => {
  const message = (id: string) =>
    `The id ${id} is not valid: 2-41 lower-case letters, digits and underscores, starting with a letter.`;
  for (const id of ['ab', 'a1', 'a_', 'z9_x', `a${'b'.repeat(40)}`, 'abcdefghijklmnopqrstuvwxyz0123456789_'])
    t.strictSame(errorsOf(provider({}, { id })), [], `${id} is accepted`);
  for (const id of ['a', '', `a${'b'.repeat(41)}`, '1ab', '_ab', 'Ab', 'aB', 'a-b', '-ab', 'ab-', 'a b', 'ab\n', 'é1'])
    t.strictSame(
      validatePlugin(provider({}, { id })).errors,
      [{ code: 'id', path: 'manifest.id', message: message(JSON.stringify(id)) }],
      `${JSON.stringify(id)} is refused`,
    );
  t.strictSame(errorsOf(provider({}, { id: 42 })), ['id manifest.id'], 'a number');
  t.equal(only(t, provider({}, { id: undefined })), message('undefined'));
});

t.test("the apiVersion must be this contract's", async (t) => {
  t.strictSame(validatePlugin(provider({}, { apiVersion: 2 })).errors, [
    {
      code: 'api_version',
      path: 'manifest.apiVersion',
      message: 'The manifest says apiVersion 2, but this contract is plugin API version 1.',
    },
  ]);
  t.strictSame(errorsOf(provider({}, { apiVersion: '1' })), ['api_version manifest.apiVersion'], 'the string "1"');
  t.strictSame(errorsOf(provider({}, { apiVersion: 0 })), ['api_version manifest.apiVersion']);
});

t.test('package.json: a herald block whose apiVersion and kind agree with the manifest', async (t) => {
  t.strictSame(errorsOf(provider({}, {}), {}), [], 'no package.json given: not checked');
  for (const pkg of [{ name: 'x' }, { herald: null }, { herald: 'provider' }, { herald: [1, 'provider'] }])
    t.strictSame(
      validatePlugin(provider(), { packageJson: pkg }).errors,
      [
        {
          code: 'package_json',
          path: 'package.json',
          message: 'package.json has no "herald" block; add "herald": { "apiVersion": 1, "kind": "provider" }.',
        },
      ],
      JSON.stringify(pkg),
    );
  t.strictSame(validatePlugin(provider(), { packageJson: { herald: { apiVersion: 2, kind: 'provider' } } }).errors, [
    {
      code: 'api_version_mismatch',
      path: 'package.json',
      message:
        'package.json says "herald": { "apiVersion": 2 } but the manifest says apiVersion 1; they must be the same.',
    },
  ]);
  t.strictSame(validatePlugin(target(), { packageJson: { herald: { apiVersion: 1, kind: 'provider' } } }).errors, [
    {
      code: 'kind_mismatch',
      path: 'package.json',
      message:
        'package.json says "herald": { "kind": "provider" } but the manifest\'s kind is "target"; they must be the ' +
        'same.',
    },
  ]);
  t.strictSame(
    errorsOf(provider(), { packageJson: { herald: {} } }),
    ['api_version_mismatch package.json', 'kind_mismatch package.json'],
    'an empty block',
  );
  t.match(
    validatePlugin(target(), { packageJson: {} }).errors[0]?.message,
    /"kind": "target" \}\.$/,
    "the kind to add is the manifest's",
  );
});

t.test('schema types JSON cannot hold: each named as TypeBox names it, wherever it is', async (t) => {
  const json = ['string', 'number', 'integer', 'boolean', 'null', 'array', 'object'];
  t.strictSame(
    errorsOf(provider(Object.fromEntries(json.map((type) => [type, { type }])))),
    [],
    'every JSON type is accepted',
  );
  t.strictSame(errorsOf(provider({ either: { type: ['null', 'integer'] } })), [], 'a list of JSON types too');
  const names: [string, string][] = [
    ['bigint', 'Type.BigInt'],
    ['function', 'Type.Function'],
    ['constructor', 'Type.Constructor'],
    ['undefined', 'Type.Undefined'],
    ['symbol', 'Type.Symbol'],
    ['void', 'Type.Void'],
    ['promise', 'Type.Promise'],
    ['Date', 'Type.Date'],
    ['date', 'Type.Date'],
    ['Uint8Array', 'Type.Uint8Array'],
    ['BigInt', 'Type.BigInt'],
    ['weird', '"type": "weird"'],
  ];
  const other = 'Type.String, Type.Number, Type.Boolean, Type.Object, Type.Array';
  const bigint = 'Type.Integer, or Type.String for digits beyond 2^53';
  for (const [type, name] of names)
    t.strictSame(
      validatePlugin(provider({ f: { type } })).errors,
      [
        {
          code: 'non_json_type',
          path: 'config.f',
          message:
            `The config field "f" is ${name}, which JSON cannot hold: every value is stored and sent as JSON, so ` +
            `every save would fail. Use a JSON type (${type === 'bigint' ? bigint : other}) or leave the field out.`,
        },
      ],
      type,
    );
  t.strictSame(
    errorsOf(provider({ f: { type: ['string', 'bigint', 'symbol'] } })),
    ['non_json_type config.f', 'non_json_type config.f'],
    'each type of a list that JSON cannot hold',
  );
});

t.test('schema types JSON cannot hold: the config, tracker and payload schemas, and their roots', async (t) => {
  const bad = { type: 'bigint' };
  const def = provider(
    {},
    {
      configSchema: { type: 'object', properties: { a: obj({ b: bad }) } },
      trackerSchema: obj({ t: bad }),
      events: { seen: { payload: obj({ id: bad }) }, plain: {}, gone: null, odd: 'x' },
    },
  );
  const v = validatePlugin(def);
  t.strictSame(codes(v.errors), [
    'non_json_type config.a.b',
    'non_json_type tracker.t',
    'non_json_type events.seen.payload.id',
  ]);
  t.match(v.errors[0]?.message, /^The config field "a\.b" is Type\.BigInt/);
  t.match(v.errors[1]?.message, /^The tracker field "t" is Type\.BigInt/);
  t.match(v.errors[2]?.message, /^The payload field of event type "seen" "id" is Type\.BigInt/);

  const roots = validatePlugin(
    provider(
      {},
      { configSchema: { type: 'object' }, trackerSchema: { type: 'void' }, events: { e: { payload: bad } } },
    ),
  );
  t.strictSame(codes(roots.errors), [
    'non_json_type tracker',
    'non_json_type events.e.payload',
    'tracker_schema tracker',
  ]);
  t.match(roots.errors[0]?.message, /^The the tracker schema itself is Type\.Void, which JSON cannot hold/);
  t.match(roots.errors[1]?.message, /^The the payload schema itself is Type\.BigInt, which/);
  const configRoot = validatePlugin(provider({}, { configSchema: { type: ['object', 'function'] } }));
  t.strictSame(codes(configRoot.errors), ['non_json_type config', 'config_schema config']);
  t.match(configRoot.errors[0]?.message, /^The the config schema itself is Type\.Function/);
  t.strictSame(errorsOf(provider({}, { events: [{ payload: bad }] })), [], 'events that are not a map are not read');
});

/** A schema with `leaf` `depth` levels of properties below the config schema. */
function nested(depth: number, leaf: Json): Json {
  let s = leaf;
  for (let i = 0; i < depth; i++) s = obj({ n: s });
  return s;
}

t.test('every place a sub-schema can be is searched, to a depth of 64', async (t) => {
  const bad = { type: 'bigint' };
  const places: [Json, string][] = [
    [{ type: 'object', patternProperties: { '^a': bad } }, 'f.*'],
    [{ type: 'object', additionalProperties: bad }, 'f.*'],
    [{ type: 'array', items: [str, bad] }, 'f[1]'],
    [{ type: 'array', items: bad }, 'f[]'],
    [{ type: 'array', prefixItems: [bad] }, 'f[0]'],
    [{ anyOf: [str, bad] }, 'f'],
    [{ oneOf: [bad] }, 'f'],
    [{ allOf: [bad] }, 'f'],
    [{ not: bad }, 'f'],
    [{ if: bad }, 'f'],
    [{ then: bad }, 'f'],
    [{ else: bad }, 'f'],
    [{ $defs: { d: bad } }, 'f#d'],
    [{ definitions: { d: bad } }, 'f#d'],
    [{ parameters: [str, bad] }, 'f(1)'],
    [{ returnType: bad }, 'f()'],
  ];
  for (const [s, path] of places)
    t.strictSame(errorsOf(provider({ f: s })), [`non_json_type config.${path}`], JSON.stringify(s));
  t.strictSame(
    errorsOf(provider({ f: { anyOf: 'x', properties: [bad], items: 'x', prefixItems: bad, parameters: bad } })),
    [],
    'keywords of the wrong shape are not followed',
  );
  t.strictSame(
    errorsOf(provider({}, { configSchema: nested(64, bad) })),
    [`non_json_type config.${Array(64).fill('n').join('.')}`],
    'at depth 64: found',
  );
  t.strictSame(errorsOf(provider({}, { configSchema: nested(65, bad) })), [], 'at depth 65: not searched');
});

t.test("the config schema must be an object schema; a provider's tracker schema too", async (t) => {
  const configError = {
    code: 'config_schema',
    path: 'config',
    message: 'The configSchema must be an object schema (Type.Object({...})), even one without fields.',
  };
  for (const configSchema of [undefined, { type: 'string' }, [], 'object', { properties: {} }])
    t.strictSame(validatePlugin(provider({}, { configSchema })).errors, [configError], JSON.stringify(configSchema));
  t.strictSame(validatePlugin(target({}, { configSchema: { type: 'array' } })).errors, [configError], 'a target too');
  t.strictSame(errorsOf(provider({}, { configSchema: { type: 'object' } })), [], 'no properties: accepted');

  const trackerError = {
    code: 'tracker_schema',
    path: 'tracker',
    message: 'The trackerSchema must be an object schema (Type.Object({...})).',
  };
  for (const trackerSchema of [{ type: 'array' }, 'object', null, [], { properties: {} }])
    t.strictSame(validatePlugin(provider({}, { trackerSchema })).errors, [trackerError], JSON.stringify(trackerSchema));
  t.strictSame(errorsOf(provider({}, { trackerSchema: { type: 'object' } })), []);
  t.strictSame(errorsOf(provider({}, { trackerSchema: undefined })), [], 'none: accepted');
  t.strictSame(errorsOf(target({}, { trackerSchema: { type: 'array' } })), [], "a target's is not read");
});

t.test('the reserved field auth_mode: only exactly the webhook authentication choice', async (t) => {
  const message =
    'The config field "auth_mode" is reserved: the web form replaces it with its own webhook authentication choice ' +
    '(hmac_sha256, bearer or none) and sends that outside the config, so saving fails. Rename the field, or declare ' +
    'it as exactly that choice to use it.';
  const consts = (...v: string[]) => v.map((c) => ({ const: c }));
  for (const auth_mode of [
    { enum: ['none', 'bearer', 'hmac_sha256'] },
    { anyOf: consts('hmac_sha256', 'none', 'bearer') },
    { oneOf: consts('bearer', 'hmac_sha256', 'none') },
  ])
    t.strictSame(errorsOf(provider({ auth_mode })), [], JSON.stringify(auth_mode));
  for (const auth_mode of [
    str,
    {},
    { enum: ['none', 'bearer'] },
    { enum: ['none', 'bearer', 'basic'] },
    { enum: ['none', 'bearer', 'hmac_sha256', 'basic'] },
    { enum: ['none', 'none', 'bearer'] },
    { anyOf: [...consts('none', 'bearer', 'hmac_sha256'), str] },
    { anyOf: [] },
  ])
    t.strictSame(
      validatePlugin(provider({ auth_mode })).errors,
      [{ code: 'reserved_field', path: 'config.auth_mode', message }],
      JSON.stringify(auth_mode),
    );
  t.strictSame(errorsOf(target({ auth_mode: str })), [], 'a target may have one');
});

t.test('the reserved field acknowledge_unauthenticated: only a boolean beside auth_mode', async (t) => {
  const auth_mode = { enum: ['none', 'bearer', 'hmac_sha256'] };
  const message =
    'The config field "acknowledge_unauthenticated" is reserved: the web form shows it only beside auth_mode "none" ' +
    'and sends it outside the config. Rename the field, or declare it as a Type.Boolean beside an auth_mode field.';
  t.strictSame(errorsOf(provider({ auth_mode, acknowledge_unauthenticated: { type: 'boolean' } })), []);
  t.strictSame(errorsOf(provider({ auth_mode, acknowledge_unauthenticated: { type: ['boolean', 'null'] } })), []);
  for (const config of [
    { auth_mode, acknowledge_unauthenticated: str },
    { auth_mode, acknowledge_unauthenticated: {} },
    { acknowledge_unauthenticated: { type: 'boolean' } },
  ])
    t.strictSame(
      validatePlugin(provider(config)).errors,
      [{ code: 'reserved_field', path: 'config.acknowledge_unauthenticated', message }],
      JSON.stringify(config),
    );
  t.strictSame(errorsOf(target({ acknowledge_unauthenticated: str })), [], 'a target may have one');
});

t.test('the reserved field poll_interval_seconds: only a number', async (t) => {
  const message =
    'The config field "poll_interval_seconds" is reserved: the core reads it as the instance\'s poll interval in ' +
    'seconds. Declare it as Type.Integer (or Type.Number), or rename it.';
  for (const type of ['integer', 'number', ['null', 'number']])
    t.strictSame(errorsOf(provider({ poll_interval_seconds: { type } })), [], JSON.stringify(type));
  for (const s of [str, {}, { type: 'boolean' }])
    t.strictSame(
      validatePlugin(provider({ poll_interval_seconds: s })).errors,
      [{ code: 'reserved_field', path: 'config.poll_interval_seconds', message }],
      JSON.stringify(s),
    );
  t.strictSame(errorsOf(target({ poll_interval_seconds: str })), [], 'a target may have one');
});

t.test('config aliases must not take the name of a provider record field', async (t) => {
  const taken = [
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
  t.strictSame(
    errorsOf(provider({}, { configAliases: [...taken, 'base_url', 'token'] })),
    taken.map((a) => `reserved_field configAliases.${a}`),
  );
  t.equal(
    only(t, provider({}, { configAliases: ['status'] })),
    'The config alias "status" is reserved: a provider record in the API already has a field of that name. Leave ' +
      'it out of configAliases.',
  );
  t.strictSame(errorsOf(provider({}, { configAliases: { id: true } })), [], 'aliases that are not a list: not read');
  t.strictSame(errorsOf(target({}, { configAliases: ['id'] })), [], "a target's are not read");
});

t.test('the reserved field bot_id: only a string, in a target with a botDriver', async (t) => {
  const withDriver = (bot_id: unknown) => target({ bot_id }, {}, { botDriver: {} });
  t.strictSame(errorsOf(withDriver(str)), []);
  t.strictSame(errorsOf(withDriver({ type: ['string', 'null'] })), []);
  t.strictSame(validatePlugin(target({ bot_id: str })).errors, [
    {
      code: 'reserved_field',
      path: 'config.bot_id',
      message:
        'The config field "bot_id" is reserved for targets with a botDriver: the web form shows it as a choice of ' +
        "the user's bots, and the service accepts only the id of one of their bots of this kind. Rename the field, " +
        'or add a botDriver.',
    },
  ]);
  for (const s of [{ type: 'integer' }, {}])
    t.strictSame(
      validatePlugin(withDriver(s)).errors,
      [
        {
          code: 'reserved_field',
          path: 'config.bot_id',
          message: 'The config field "bot_id" holds the id of one of the user\'s bots: declare it as Type.String.',
        },
      ],
      JSON.stringify(s),
    );
  t.strictSame(errorsOf(provider({ bot_id: { type: 'integer' } })), [], 'a provider may name a field bot_id');
  t.strictSame(errorsOf(target({ chat: str }, {}, { botDriver: {} })), [], 'a bot driver without bot_id');
});

t.test('RESERVED_FIELDS describes each reserved name', async (t) => {
  t.strictSame(RESERVED_FIELDS, {
    auth_mode: 'provider: only as a choice of exactly hmac_sha256, bearer and none (webhook authentication)',
    acknowledge_unauthenticated: 'provider: only as a boolean beside auth_mode',
    bot_id: 'target: only as a string, in a plugin with a botDriver',
    poll_interval_seconds: 'provider: only as a number of seconds (Type.Integer or Type.Number)',
  });
});

t.test('formFieldKind: the control the web form gives each shape', async (t) => {
  const cases: [unknown, string][] = [
    [null, 'json'],
    ['string', 'json'],
    [[str], 'json'],
    [{ enum: ['a'] }, 'enum'],
    [{ type: 'string', enum: [] }, 'enum'],
    [{ anyOf: [{ const: 'a' }, { const: 0 }] }, 'enum'],
    [{ oneOf: [{ const: null }] }, 'enum'],
    [{ anyOf: [{ const: 'a' }, str] }, 'json'],
    [{ anyOf: [{ const: 'a' }, null] }, 'json'],
    [{ anyOf: [] }, 'json'],
    [{ anyOf: { const: 'a' } }, 'json'],
    [{ type: 'boolean' }, 'boolean'],
    [{ type: 'integer' }, 'integer'],
    [{ type: 'number' }, 'number'],
    [{ type: ['null', 'number'] }, 'number'],
    [{ type: ['integer', 'null'] }, 'integer'],
    [str, 'string'],
    [{ type: 'string', maxLength: 4096 }, 'string'],
    [{ type: 'string', maxLength: 4097 }, 'text'],
    [{ type: 'array', items: str }, 'string-list'],
    [{ type: 'array', items: { type: 'string', enum: ['a'] } }, 'json'],
    [{ type: 'array', items: { type: 'integer' } }, 'json'],
    [{ type: 'array', items: 'string' }, 'json'],
    [{ type: 'array' }, 'json'],
    [{ type: 'object', properties: {} }, 'object'],
    [obj({ a: str }), 'object'],
    [{ type: 'object', properties: {}, patternProperties: { x: str } }, 'map'],
    [{ type: 'object', properties: { a: str }, patternProperties: { x: str } }, 'json'],
    [{ type: 'object', patternProperties: { x: { type: 'boolean' } } }, 'map'],
    [{ type: 'object', patternProperties: { x: str, y: str } }, 'json'],
    [{ type: 'object', patternProperties: {} }, 'json'],
    [{ type: 'object', patternProperties: {}, additionalProperties: str }, 'json'],
    [{ type: 'object', patternProperties: { x: str }, additionalProperties: obj({}) }, 'map'],
    [{ type: 'object', patternProperties: { x: 'string' } }, 'json'],
    [{ type: 'object', additionalProperties: { type: 'integer' } }, 'map'],
    [{ type: 'object', additionalProperties: { type: 'number' } }, 'map'],
    [{ type: 'object', additionalProperties: { type: ['null', 'string'] } }, 'map'],
    [{ type: 'object', additionalProperties: { enum: ['a', 'b'] } }, 'map'],
    [{ type: 'object', additionalProperties: {} }, 'json'],
    [{ type: 'object', additionalProperties: { type: 'null' } }, 'json'],
    [{ type: 'object', additionalProperties: { type: 'object' } }, 'json'],
    [{ type: 'object', additionalProperties: true }, 'json'],
    [{ type: 'object' }, 'json'],
    [{}, 'json'],
    [{ type: 'null' }, 'json'],
    // The keywords of a list or an object count only with the type that uses them.
    [{ items: str }, 'json'],
    [{ type: 'object', items: str }, 'json'],
    [{ properties: { a: str } }, 'json'],
    [{ type: 'string', properties: { a: str } }, 'string'],
    [{ additionalProperties: str }, 'json'],
    [{ type: 'array', additionalProperties: str }, 'json'],
  ];
  for (const [s, kind] of cases) t.equal(formFieldKind(s), kind, JSON.stringify(s));
});

t.test('shapes the form shows as a raw JSON box: a warning saying which shape', async (t) => {
  const shapes: [Json, string][] = [
    [{ anyOf: [str, obj({ a: str })] }, 'a union of objects'],
    [{ oneOf: [{ type: ['null', 'object'] }] }, 'a union of objects'],
    [{ anyOf: [str, { type: 'null' }] }, 'a union with null (use Type.Optional instead)'],
    [{ anyOf: [null, str, { type: 'integer' }] }, 'a union of different types'],
    [{ oneOf: [str, { type: 'integer' }] }, 'a union of different types'],
    [{ allOf: [str] }, 'an intersection (Type.Intersect)'],
    [{ type: 'array', items: [str] }, 'a tuple'],
    [{ type: 'array', prefixItems: [str] }, 'a tuple'],
    [{ type: 'array', items: { enum: ['a', 'b'] } }, 'an array of choices'],
    [{ type: 'array', items: obj({ a: str }) }, 'an array of objects'],
    [{ type: 'array', items: { type: 'integer' } }, 'an array of integers'],
    [{ type: 'array', items: { type: ['null', 'boolean'] } }, 'an array of booleans'],
    [{ type: 'array', items: {} }, 'an array of values of any type'],
    [{ type: 'array' }, 'an array of values of any type'],
    [{ type: 'array', items: 'x' }, 'an array of values of any type'],
    [
      { type: 'object', additionalProperties: obj({}) },
      'a map whose values are not plain strings, numbers or booleans, or an object without declared fields',
    ],
    [{ $ref: '#/$defs/x' }, 'a reference ($ref)'],
    [{}, 'a value of any type (Type.Any, Type.Unknown)'],
    [{ type: 'null' }, 'a value of type null'],
  ];
  for (const [s, shape] of shapes)
    t.strictSame(
      validatePlugin(provider({ f: s })).warnings,
      [
        {
          code: 'form_raw_json',
          path: 'config.f',
          message:
            `The config field "f" is ${shape}: the web form cannot show it as a field and offers a raw JSON text box ` +
            'instead. Flatten it into plain fields (a choice plus the fields of each option, a list of strings…) or ' +
            'accept the JSON box.',
        },
      ],
      shape,
    );
  t.match(
    validatePlugin(provider({ f: { type: 'bigint' } })).warnings[0]?.message,
    /"f" is a value of type bigint:/,
    'a type JSON cannot hold is also a warning',
  );
  t.notMatch(
    validatePlugin(provider({ f: { type: 'array', items: { type: '' } } })).warnings[0]?.message,
    /an array of objects/,
    'an array of items of an empty type is not an array of objects',
  );
});

t.test('a raw JSON box names the secrets it shows in clear', async (t) => {
  const say = (s: Json) => validatePlugin(provider({ f: s })).warnings[0]?.message ?? '';
  t.match(
    say({ anyOf: [obj({ token: secret }), obj({ token: secret })] }),
    /instead, with its secret "f\.token" in clear\. Flatten/,
    'one secret, named once',
  );
  t.match(
    say({ type: 'array', items: obj({ user: str, password: secret, key: secret }) }),
    /instead, with its secrets "f\[\]\.password", "f\[\]\.key" in clear\. Flatten/,
    'two secrets',
  );
  t.match(
    say({ type: 'array', items: obj({ flag: { 'x-secret': 'yes', type: 'string' } }) }),
    /box instead\. Flatten/,
    'only x-secret: true is a secret',
  );
  t.match(say({ anyOf: [secret, { type: 'integer' }] }), /with its secret "f" in clear/, 'the field itself');
});

t.test('maps and lists of secrets: a warning that the form shows them in clear', async (t) => {
  t.strictSame(validatePlugin(provider({ keys: { type: 'object', additionalProperties: secret } })).warnings, [
    {
      code: 'form_secret_in_clear',
      path: 'config.keys',
      message:
        'The config field "keys" is a map of secrets: the web form shows its values in clear text boxes, and the ' +
        'service neither masks nor seals secrets inside a Type.Record. Use separate Secret() fields.',
    },
  ]);
  t.strictSame(validatePlugin(provider({ keys: { type: 'array', items: secret } })).warnings, [
    {
      code: 'form_secret_in_clear',
      path: 'config.keys',
      message:
        'The config field "keys" is a list of secrets: the web form shows its values in clear text boxes. Use ' +
        'separate Secret() fields.',
    },
  ]);
  t.strictSame(
    warningsOf(provider({ keys: { type: 'array', items: str, 'x-secret': true } })),
    [],
    'a list that is itself secret',
  );
  t.strictSame(
    warningsOf(provider({ keys: { type: 'object', additionalProperties: str } })),
    [],
    'a map of plain strings',
  );
  t.strictSame(warningsOf(provider({ keys: { type: 'array', items: str } })), [], 'a list of plain strings');
  for (const s of [
    { type: 'boolean', properties: { a: secret } },
    { type: 'integer', items: secret },
    { enum: ['a'], items: secret },
    { type: 'string', maxLength: 5000, properties: { a: secret } },
  ])
    t.strictSame(
      warningsOf(provider({ keys: s })).filter((w) => w.startsWith('form_')),
      [],
      `a field the form shows as one control is no map or list of secrets: ${JSON.stringify(s)}`,
    );
});

t.test('form warnings: nested objects by their dotted path, the tracker schema of a provider only', async (t) => {
  const config = { outer: obj({ inner: obj({ deep: { type: 'array', items: obj({}) } }), ok: str }) };
  const v = validatePlugin(
    provider(config, {
      locales: {
        en: {
          displayName: 'P',
          description: 'P.',
          config: {
            outer: { label: 'O' },
            'outer.inner': { label: 'I' },
            'outer.inner.deep': { label: 'D' },
            'outer.ok': { label: 'K' },
          },
        },
        ru: {
          displayName: 'P',
          description: 'P.',
          config: {
            outer: { label: 'O' },
            'outer.inner': { label: 'I' },
            'outer.inner.deep': { label: 'D' },
            'outer.ok': { label: 'K' },
          },
        },
      },
    }),
  );
  t.strictSame(codes(v.warnings), ['form_raw_json config.outer.inner.deep']);
  t.match(v.warnings[0]?.message, /^The config field "outer\.inner\.deep" is an array of objects:/);

  const tracker = { albums: { type: 'array', items: obj({}) } };
  const withTracker = provider({}, { trackerSchema: obj(tracker), locales: locales({}, tracker) });
  t.strictSame(
    validatePlugin(withTracker).warnings.map((w) => [w.code, w.path, w.message.slice(0, 40)]),
    [['form_raw_json', 'tracker.albums', 'The tracker field "albums" is an array o']],
  );
  t.strictSame(
    warningsOf(target({}, { trackerSchema: obj(tracker) })).filter((w) => w.startsWith('form_')),
    [],
    "a target's tracker schema is not read",
  );
  t.strictSame(
    warningsOf(provider({}, { configSchema: { type: 'object', properties: [{ type: 'array' }] } })).filter((w) =>
      w.startsWith('form_'),
    ),
    [],
    'properties that are not a map are not read',
  );
});

t.test('locale files: both languages, every string', async (t) => {
  t.strictSame(validatePlugin(provider({}, { locales: undefined })).warnings, [
    {
      code: 'locale_missing',
      path: 'locales',
      message:
        "The plugin has no locale files: every language shows the manifest's English. Add locales/en.json and " +
        "locales/ru.json and attach them as manifest.locales (see the guide's Locales).",
    },
  ]);
  t.strictSame(warningsOf(provider({}, { locales: [] })), ['locale_missing locales'], 'a list is not a locale map');
  const { en, ru } = locales();
  t.strictSame(validatePlugin(provider({}, { locales: { ru } })).warnings, [
    {
      code: 'locale_missing',
      path: 'locales.en',
      message:
        "The plugin has no English locale file (locales/en.json): every language falls back to the manifest's own " +
        'words.',
    },
  ]);
  t.strictSame(validatePlugin(provider({}, { locales: { en, ru: 'x' } })).warnings, [
    {
      code: 'locale_missing',
      path: 'locales.ru',
      message: 'The plugin has no Russian locale file (locales/ru.json): Russian users see it in English.',
    },
  ]);
});

t.test('locale files: missing and unknown strings, one or many, at most 12 listed', async (t) => {
  const fields = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`f${i + 1}`, str]));
  const labels = (keys: string[]) => Object.fromEntries(keys.map((k) => [k, { label: k }]));
  const def = (config: Json, en: Json, ru: Json) =>
    provider(config, {
      locales: {
        en: { displayName: 'P', description: 'P.', config: en },
        ru: { displayName: 'П', description: 'П.', config: ru },
      },
    });
  t.strictSame(validatePlugin(def(fields(1), {}, labels(['f1']))).warnings, [
    {
      code: 'locale_missing',
      path: 'locales.en',
      message: 'locales/en.json lacks 1 string, shown from the manifest or as the field name instead: config.f1.label.',
    },
  ]);
  t.strictSame(validatePlugin(def(fields(2), labels(['f1', 'f2']), {})).warnings, [
    {
      code: 'locale_missing',
      path: 'locales.ru',
      message: 'locales/ru.json lacks 2 strings, shown in English instead: config.f1.label, config.f2.label.',
    },
  ]);
  const twelve = Object.keys(fields(12));
  t.match(
    validatePlugin(def(fields(12), labels(twelve), {})).warnings[0]?.message,
    /instead: config\.f1\.label, config\.f2\.label, .*, config\.f12\.label\.$/,
    '12: all listed',
  );
  const thirteen = Object.keys(fields(13));
  const m13 = validatePlugin(def(fields(13), labels(thirteen), {})).warnings[0]?.message ?? '';
  t.match(m13, /lacks 13 strings, .*config\.f11\.label, config\.f12\.label and 1 more\.$/, '13: one more');
  t.notMatch(m13, /f13/);

  t.strictSame(validatePlugin(def({}, {}, labels(['old']))).warnings, [
    {
      code: 'locale_unknown_key',
      path: 'locales.ru',
      message:
        'locales/ru.json has key matching no field, option or event type (a typo, or a renamed field?): config.old.',
    },
  ]);
  const keys = 'has keys matching no field, option or event type (a typo, or a renamed field?): config.a, config.b.';
  t.strictSame(
    validatePlugin(def({}, labels(['a', 'b']), labels(['a', 'b']))).warnings.map((w) => w.message),
    [`locales/en.json ${keys}`, `locales/ru.json ${keys}`],
  );
  t.strictSame(
    codes(validatePlugin(def(fields(1), labels(['x']), labels(['f1']))).warnings),
    ['locale_missing locales.en', 'locale_unknown_key locales.en'],
    'both in one file',
  );
});

t.test('locale files that cannot be checked: a warning, not a crash', async (t) => {
  const connection = (thrown: unknown) => () => {
    throw thrown;
  };
  t.strictSame(
    validatePlugin(provider({}, { webhook: { connection: connection(new Error('no address')) } })).warnings,
    [
      {
        code: 'locale_missing',
        path: 'locales.en',
        message: 'The English locale file could not be checked: no address.',
      },
      {
        code: 'locale_missing',
        path: 'locales.ru',
        message: 'The Russian locale file could not be checked: no address.',
      },
    ],
  );
  t.strictSame(
    validatePlugin(provider({}, { webhook: { connection: connection('down') } })).warnings.map((w) => w.message),
    ['The English locale file could not be checked: down.', 'The Russian locale file could not be checked: down.'],
    'a thrown text',
  );
  t.strictSame(
    validatePlugin(provider({}, { webhook: { connection: connection(null) } })).warnings.map((w) => w.message)[0],
    'The English locale file could not be checked: null.',
  );
});

t.test('a field without a schema is an error of its own, not a crash of the validator', async (t) => {
  for (const bad of [null, 'string', 7]) {
    t.same(errorsOf(provider({ a: bad as never })), ['field_schema config.a'], `config field ${JSON.stringify(bad)}`);
    t.match(only(t, provider({ a: bad as never })), /The config field "a" has no schema/);
  }
  const tracker = provider({}, { trackerSchema: obj({ b: null }) });
  t.ok(errorsOf(tracker).includes('field_schema tracker.b'), 'a tracker field too');
  t.same(errorsOf(provider({ a: str })), [], 'a field with a schema is fine');
});
