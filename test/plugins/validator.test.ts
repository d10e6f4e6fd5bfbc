/**
 * The plugin validator (`validatePlugin` from the contract, run by the loader): schema types JSON
 * cannot hold and misused reserved field names refuse the load with a message naming the plugin
 * and the field; shapes the web form shows as a raw JSON box and missing locale strings are
 * warnings, logged at WARNING with the plugin's id; the manifest and package.json must agree on
 * apiVersion and kind. Every first-party plugin passes without a warning.
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  defineProvider,
  defineTarget,
  formFieldKind,
  type PluginDefinition,
  Secret,
  Type,
  validatePlugin,
} from '@herald/plugin-api';
import t from 'tap';
import { FIRST_PARTY_PLUGINS } from '../../core/src/config/config.ts';
import { loadPlugins, PluginLoadError, wrapDefinition } from '../../core/src/plugins/loader.ts';

const require = createRequire(import.meta.url);

const locales = (
  config: Record<string, { label: string }> = {},
  events: Record<string, { description: string }> = {},
) => ({
  en: { displayName: 'Probe', description: 'A probe.', config, events },
  ru: { displayName: 'Проба', description: 'Проба.', config, events },
});

/** A provider whose config schema is `configSchema`, complete otherwise. */
const provider = (configSchema: unknown, extra: Record<string, unknown> = {}) =>
  defineProvider({
    manifest: {
      id: 'probe',
      kind: 'provider',
      apiVersion: 1,
      displayName: 'Probe',
      description: 'A probe.',
      configSchema: configSchema as never,
      ingest: 'poll',
      events: {},
      templates: {},
      locales: locales(
        Object.fromEntries(
          Object.keys((configSchema as { properties?: object }).properties ?? {}).map((k) => [k, { label: k }]),
        ),
      ),
      ...extra,
    } as never,
    create: () => ({}),
  });

const codes = (list: { code: string; path: string }[]) => list.map((i) => `${i.code} ${i.path}`);

t.test('a complete plugin passes without errors or warnings', async (t) => {
  const v = validatePlugin(
    provider(Type.Object({ url: Type.String(), token: Secret(), every: Type.Integer({ default: 60 }) })),
    { packageJson: { herald: { apiVersion: 1, kind: 'provider' } } },
  );
  t.same(v, { ok: true, errors: [], warnings: [] });
});

t.test('schema types JSON cannot hold are errors, wherever they are', async (t) => {
  const v = validatePlugin(
    provider(
      Type.Object({
        size: Type.BigInt(),
        hook: Type.Function([], Type.Void()),
        gone: Type.Undefined(),
        sym: Type.Symbol(),
        nested: Type.Object({ n: Type.BigInt() }),
      }),
      {
        trackerSchema: Type.Object({ t: Type.Array(Type.BigInt()) }),
        events: { probe_seen: { payload: Type.Object({ id: Type.BigInt() }), quietHours: 'send', severity: 'info' } },
      },
    ),
  );
  t.equal(v.ok, false);
  const found = codes(v.errors).filter((c) => c.startsWith('non_json_type'));
  for (const p of [
    'config.size',
    'config.hook',
    'config.gone',
    'config.sym',
    'config.nested.n',
    'tracker.t[]',
    'events.probe_seen.payload.id',
  ])
    t.ok(found.includes(`non_json_type ${p}`), p);
  const size = v.errors.find((e) => e.path === 'config.size')!;
  t.match(size.message, /config field "size" is Type\.BigInt, which JSON cannot hold/);
  t.match(size.message, /Type\.Integer/);
  t.match(v.errors.find((e) => e.path === 'config.hook')!.message, /Type\.Function/);
});

t.test('reserved field names are errors unless declared the way the core uses them', async (t) => {
  const taken = validatePlugin(
    provider(
      Type.Object(
        { auth_mode: Type.String(), acknowledge_unauthenticated: Type.String(), poll_interval_seconds: Type.String() },
        {},
      ),
      { configAliases: ['name'] },
    ),
  );
  t.same(
    codes(taken.errors).sort(),
    [
      'reserved_field config.acknowledge_unauthenticated',
      'reserved_field config.auth_mode',
      'reserved_field config.poll_interval_seconds',
      'reserved_field configAliases.name',
    ].sort(),
  );
  t.match(
    taken.errors.find((e) => e.path === 'config.auth_mode')!.message,
    /"auth_mode" is reserved: the web form replaces it/,
  );

  const asTheFormUsesThem = provider(
    Type.Object({
      auth_mode: Type.Union([Type.Literal('none'), Type.Literal('bearer'), Type.Literal('hmac_sha256')]),
      acknowledge_unauthenticated: Type.Boolean({ default: false }),
      poll_interval_seconds: Type.Integer({ minimum: 10 }),
    }),
  );
  t.same(
    validatePlugin(asTheFormUsesThem).errors,
    [],
    'the webhook authentication choice and a poll interval are accepted',
  );
  t.same(
    codes(
      validatePlugin(provider(Type.Object({ auth_mode: Type.Union([Type.Literal('bearer'), Type.Literal('basic')]) })))
        .errors,
    ),
    ['reserved_field config.auth_mode'],
    'a different set of modes is not',
  );
  t.same(
    codes(validatePlugin(provider(Type.Object({ acknowledge_unauthenticated: Type.Boolean() }))).errors),
    ['reserved_field config.acknowledge_unauthenticated'],
    'the acknowledgement without auth_mode is not',
  );

  const target = (botDriver?: object, bot = Type.String()) =>
    defineTarget({
      manifest: {
        id: 'probe_target',
        kind: 'target',
        apiVersion: 1,
        displayName: 'Probe',
        configSchema: Type.Object({ bot_id: bot }),
        limits: { maxMessageLength: 100, formats: ['text'] },
        locales: locales({ bot_id: { label: 'Bot' } }),
      },
      create: () => ({ async send() {} }),
      ...(botDriver ? { botDriver: botDriver as never } : {}),
    });
  t.same(codes(validatePlugin(target()).errors), ['reserved_field config.bot_id'], 'bot_id without a bot driver');
  t.same(validatePlugin(target({})).errors, [], 'bot_id with one');
  t.same(
    codes(validatePlugin(target({}, Type.Integer() as never)).errors),
    ['reserved_field config.bot_id'],
    'bot_id that is not a string',
  );
  t.same(
    validatePlugin(provider(Type.Object({ bot_id: Type.Integer() }))).errors,
    [],
    'a provider may name a field bot_id',
  );
});

t.test('shapes the form cannot show are warnings naming the secrets it would show in clear', async (t) => {
  const v = validatePlugin(
    provider(
      Type.Object({
        auth: Type.Union([Type.Object({ user: Type.String(), password: Secret() }), Type.Object({ token: Secret() })]),
        pair: Type.Tuple([Type.String(), Type.Number()]),
        accounts: Type.Array(Type.Object({ name: Type.String(), password: Secret() })),
        ports: Type.Array(Type.Integer()),
        anything: Type.Unknown(),
        tokens: Type.Record(Type.String(), Secret()),
        fine: Type.Object({
          host: Type.String(),
          tags: Type.Array(Type.String()),
          mode: Type.Union([Type.Literal('a'), Type.Literal('b')]),
          headers: Type.Record(Type.String(), Type.String()),
        }),
      }),
    ),
  );
  t.equal(v.ok, true, 'warnings do not refuse the load');
  t.same(
    codes(v.warnings.filter((w) => w.code.startsWith('form_'))).sort(),
    [
      'form_raw_json config.accounts',
      'form_raw_json config.anything',
      'form_raw_json config.auth',
      'form_raw_json config.pair',
      'form_raw_json config.ports',
      'form_secret_in_clear config.tokens',
    ].sort(),
  );
  const say = (p: string) => v.warnings.find((w) => w.path === p)!.message;
  t.match(
    say('config.auth'),
    new RegExp(
      /is a union of objects: the web form cannot show it as a field and offers a raw JSON text box instead, /.source +
        /with its secrets "auth.password", "auth.token" in clear/.source,
    ),
  );
  t.match(say('config.pair'), /is a tuple/);
  t.match(say('config.accounts'), /an array of objects.*its secret "accounts\[\]\.password" in clear/);
  t.notMatch(say('config.ports'), /in clear/);
  t.same(
    [
      formFieldKind(Type.String()),
      formFieldKind(Type.Array(Type.String())),
      formFieldKind(Type.Record(Type.String(), Type.Boolean())),
      formFieldKind(Type.Union([Type.Literal('x'), Type.Literal('y')])),
    ],
    ['string', 'string-list', 'map', 'enum'],
    'the form kinds the guide lists',
  );
});

t.test('locale strings missing in either language are warnings', async (t) => {
  const schema = Type.Object({
    url: Type.String({ description: 'Where' }),
    mode: Type.Union([Type.Literal('fast'), Type.Literal('safe')]),
  });
  const base = provider(schema);
  const m = base.manifest as unknown as { locales: Record<string, any> };
  m.locales = {
    en: {
      displayName: 'Probe',
      description: 'A probe.',
      config: {
        url: { label: 'URL', hint: 'Where' },
        mode: { label: 'Mode', options: { fast: 'Fast', safe: 'Safe' } },
      },
    },
    ru: {
      displayName: 'Проба',
      description: 'Проба.',
      config: {
        url: { label: 'Адрес' },
        mode: { label: 'Режим', options: { fast: 'Быстро' } },
        old: { label: 'Старое' },
      },
    },
  };
  const v = validatePlugin(base);
  t.equal(v.ok, true);
  t.same(codes(v.warnings), ['locale_missing locales.ru', 'locale_unknown_key locales.ru']);
  t.match(
    v.warnings[0]!.message,
    /locales\/ru\.json lacks 2 strings, shown in English instead: config\.url\.hint, config\.mode\.options\.safe\./,
  );
  t.match(v.warnings[1]!.message, /config\.old/);
  delete m.locales.ru;
  t.match(
    validatePlugin(base).warnings[0]!.message,
    /no Russian locale file \(locales\/ru\.json\): Russian users see it in English/,
  );
  delete (m as { locales?: unknown }).locales;
  t.same(codes(validatePlugin(base).warnings), ['locale_missing locales']);
});

t.test('apiVersion and kind must agree between the manifest and package.json', async (t) => {
  const p = provider(Type.Object({}));
  t.same(codes(validatePlugin(p, { packageJson: { herald: { apiVersion: 2, kind: 'provider' } } }).errors), [
    'api_version_mismatch package.json',
  ]);
  t.match(
    validatePlugin(p, { packageJson: { herald: { apiVersion: 2, kind: 'provider' } } }).errors[0]!.message,
    /package\.json says "herald": \{ "apiVersion": 2 \} but the manifest says apiVersion 1/,
  );
  t.same(codes(validatePlugin(p, { packageJson: { herald: { apiVersion: 1, kind: 'target' } } }).errors), [
    'kind_mismatch package.json',
  ]);
  t.same(codes(validatePlugin(p, { packageJson: { name: 'x' } }).errors), ['package_json package.json']);
  const future = provider(Type.Object({}));
  (future.manifest as { apiVersion: number }).apiVersion = 2;
  t.same(codes(validatePlugin(future, { packageJson: { herald: { apiVersion: 2, kind: 'provider' } } }).errors), [
    'api_version manifest.apiVersion',
  ]);
  t.same(codes(validatePlugin({}).errors), ['not_a_plugin manifest']);
});

t.test('every first-party plugin passes the validator without a warning', async (t) => {
  for (const name of FIRST_PARTY_PLUGINS) {
    const mod = (await import(name)) as { default: PluginDefinition };
    const pkg = JSON.parse(fs.readFileSync(require.resolve(`${name}/package.json`), 'utf8'));
    const v = validatePlugin(mod.default, { packageJson: pkg });
    t.same(
      [...v.errors, ...v.warnings].map((i) => `${i.code} ${i.path}: ${i.message}`),
      [],
      name,
    );
  }
});

const scratch = fileURLToPath(new URL('../../test-output/', import.meta.url));

/** A plugin package in a directory under the repository (so it resolves the contract), loaded by its path. */
function packageDir(t: { teardown(fn: () => void): void }, name: string, source: string): string {
  fs.mkdirSync(scratch, { recursive: true });
  const root = fs.mkdtempSync(path.join(scratch, 'validator-'));
  t.teardown(() => fs.rmSync(root, { recursive: true, force: true }));
  fs.writeFileSync(
    path.join(root, 'package.json'),
    JSON.stringify({
      name,
      version: '1.0.0',
      type: 'module',
      exports: './index.js',
      herald: { apiVersion: 1, kind: 'provider' },
    }),
  );
  fs.writeFileSync(
    path.join(root, 'index.js'),
    `import { defineProvider, Secret, Type } from '@herald/plugin-api';\n${source}`,
  );
  return root;
}

t.test(
  'the loader refuses a plugin with errors, naming it and the problem, and logs its warnings with its id',
  async (t) => {
    const bad = packageDir(
      t,
      'herald-provider-bigint',
      `export default defineProvider({ manifest: { id: 'bigint_probe', kind: 'provider', apiVersion: 1, ` +
        `displayName: 'B', configSchema: Type.Object({ size: Type.BigInt() }), ingest: 'poll', events: {}, ` +
        'templates: {} }, create: () => ({}) });',
    );
    const err = (await loadPlugins([bad]).then(
      () => undefined,
      (e: unknown) => e,
    )) as Error;
    t.type(err, PluginLoadError);
    t.match(
      err.message,
      new RegExp(
        /^Plugin package "herald-provider-bigint" \(id "bigint_probe"\) cannot be loaded: The config field /.source +
          /"size" is Type\.BigInt, which JSON cannot hold/.source,
      ),
    );
    t.match(err.message, /or remove it from SERVICE_PLUGINS\.$/);

    const warned = packageDir(
      t,
      'herald-provider-union',
      `export default defineProvider({ manifest: { id: 'union_probe', kind: 'provider', apiVersion: 1, ` +
        `displayName: 'U', configSchema: Type.Object({ auth: Type.Union([Type.Object({ token: Secret() }), ` +
        `Type.Object({ user: Type.String() })]) }), ingest: 'poll', events: {}, templates: {}, locales: { en: { ` +
        `displayName: 'U', description: 'U.', config: { auth: { label: 'Auth' } } }, ru: { displayName: 'U', ` +
        `description: 'U.', config: { auth: { label: 'Вход' } } } } }, create: () => ({}) });`,
    );
    const lines: { obj: Record<string, unknown>; msg: string }[] = [];
    const log = {
      warn: (obj: Record<string, unknown>, msg: string) => {
        lines.push({ obj, msg });
      },
    };
    const [p] = await loadPlugins([warned], { log });
    t.equal(p!.id, 'union_probe', 'a plugin with warnings loads');
    t.same(
      lines.map((l) => [l.obj.plugin, l.obj.package, l.obj.code, l.obj.field]),
      [['union_probe', 'herald-provider-union', 'form_raw_json', 'config.auth']],
    );
    t.match(lines[0]!.msg, /raw JSON text box instead, with its secret "auth\.token" in clear/);

    // Wrapping a definition (what the loader does with each import) runs the same checks.
    t.throws(
      () => wrapDefinition('x', provider(Type.Object({ f: Type.Function([], Type.Void()) })) as never),
      /cannot be loaded: The config field "f" is Type\.Function/,
    );
  },
);
