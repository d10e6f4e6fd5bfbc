/**
 * The contract's `validateConfig` hook and `configAliases`: a plugin refines config validation
 * with coded, readable problems, answered by the providers and targets API and applied to backup
 * restores, without the core knowing the plugin's fields.
 */
import t from 'tap';
import { sanitizeConfiguration } from '../../core/src/backup/sanitize.ts';
import { defineProvider, defineTarget, Type } from '../../core/src/plugin-api/index.ts';
import { PluginLoadError, wrapDefinition } from '../../core/src/plugins/loader.ts';
import { exportNow } from '../backup/support.ts';
import { startService, TEST_PLUGINS } from '../helpers/service.ts';

const Pair = Type.Object({ low: Type.Integer(), high: Type.Integer({ default: 10 }) });
const orderedPair = (c: { low: number; high: number }) =>
  c.low < c.high
    ? []
    : [
        {
          path: '/high',
          message: 'must be greater than low',
          code: 'pair_not_ordered',
          detail: 'high must be greater than low; raise high or lower low.',
        },
      ];

const picky = defineProvider({
  manifest: {
    id: 'picky',
    kind: 'provider',
    apiVersion: 1,
    displayName: 'Picky',
    ingest: 'webhook',
    configSchema: Pair,
    events: {},
  },
  validateConfig: orderedPair,
  create: () => ({}),
});
const pickyTarget = defineTarget({
  manifest: {
    id: 'picky_target',
    kind: 'target',
    apiVersion: 1,
    displayName: 'Picky target',
    configSchema: Pair,
    limits: { maxMessageLength: 100, formats: ['text'] },
  },
  validateConfig: orderedPair,
  create: () => ({ async send() {} }),
});
const throwing = defineProvider({
  manifest: {
    id: 'throwing',
    kind: 'provider',
    apiVersion: 1,
    displayName: 'Throwing',
    ingest: 'webhook',
    configSchema: Type.Object({}),
    events: {},
  },
  validateConfig: () => {
    throw new Error('checker is broken');
  },
  create: () => ({}),
});

t.test('the hook refuses with its code, detail and paths under body/config, on create and update', async (t) => {
  const s = await startService();
  t.teardown(() => s.stop());
  const core = s.service.core;
  for (const [id, def] of [
    ['picky', picky],
    ['picky_target', pickyTarget],
    ['throwing', throwing],
  ] as const)
    core.plugins.add(wrapDefinition(`${id}-plugin`, def));
  const token = s.admin.token;

  const bad = await s.request('POST', '/api/providers', {
    token,
    body: { kind: 'picky', name: 'P', config: { low: 12 } },
  });
  t.equal(bad.status, 422, 'refused after the schema passed (defaults applied: high is 10)');
  t.equal(bad.body.code, 'pair_not_ordered', "the plugin's code");
  t.equal(bad.body.detail, 'high must be greater than low; raise high or lower low.', "the plugin's sentence");
  t.same(bad.body.errors, [
    { path: 'body/config/high', message: 'must be greater than low', code: 'pair_not_ordered' },
  ]);
  t.match(bad.headers.get('content-type'), /problem\+json/);

  const schemaFirst = await s.request('POST', '/api/providers', {
    token,
    body: { kind: 'picky', name: 'P', config: { low: 'x' } },
  });
  t.equal(schemaFirst.status, 422);
  t.equal(schemaFirst.body.code, 'validation_failed', 'the schema is checked first; the hook sees only valid configs');

  const ok = await s.request('POST', '/api/providers', {
    token,
    body: { kind: 'picky', name: 'P', config: { low: 1 } },
  });
  t.equal(ok.status, 201);
  t.same(ok.body.config, { low: 1, high: 10 });
  t.notOk('low' in ok.body, 'no aliases unless declared');
  const patched = await s.request('PATCH', `/api/providers/${ok.body.id}`, {
    token,
    body: { config: { low: 20, high: 3 } },
  });
  t.equal(patched.status, 422, 'an update is checked too');
  t.equal(patched.body.code, 'pair_not_ordered');

  const target = await s.request('POST', '/api/targets', {
    token,
    body: { kind: 'picky_target', name: 'T', config: { low: 5, high: 5 }, locale: 'en' },
  });
  t.equal(target.status, 422, 'targets use the same hook');
  t.equal(target.body.code, 'pair_not_ordered');
  t.same(target.body.errors, [
    { path: 'body/config/high', message: 'must be greater than low', code: 'pair_not_ordered' },
  ]);
  t.equal(
    (
      await s.request('POST', '/api/targets', {
        token,
        body: { kind: 'picky_target', name: 'T', config: { low: 5, high: 6 }, locale: 'en' },
      })
    ).status,
    201,
  );

  const broken = await s.request('POST', '/api/providers', {
    token,
    body: { kind: 'throwing', name: 'X', config: {} },
  });
  t.equal(broken.status, 422, 'a hook that throws is a readable problem, not a 500');
  t.equal(broken.body.code, 'validation_failed');
  t.match(broken.body.errors[0], { path: 'body/config', message: /could not be checked .*checker is broken/ });
});

t.test('a config alias must be a top-level field of the config schema', async (t) => {
  const def = defineProvider({ ...picky, manifest: { ...picky.manifest, configAliases: ['nope'] } });
  let err: unknown;
  try {
    wrapDefinition('bad-alias', def);
  } catch (e) {
    err = e;
  }
  t.ok(err instanceof PluginLoadError, 'refused at load');
  t.throws(
    () => wrapDefinition('bad-alias', def),
    /declares the config alias "nope", which is not a top-level field of its configSchema/,
  );
  t.same(
    wrapDefinition('good-alias', defineProvider({ ...picky, manifest: { ...picky.manifest, configAliases: ['low'] } }))
      .configAliases,
    ['low'],
  );
});

t.test('backups: old top-level auth fields fold into the config; the hook applies to restores', async (t) => {
  const s = await startService({ SERVICE_PLUGINS: `${TEST_PLUGINS},@herald/provider-webhook` });
  t.teardown(() => s.stop());
  const token = s.admin.token;
  const hook = await s.request('POST', '/api/providers', {
    token,
    body: { kind: 'webhook', name: 'W', config: { mapping: { title: 'title' }, secret: '0123456789abcdef' } },
  });
  t.equal(hook.status, 201);
  const ex = await s.request('POST', '/api/providers', {
    token,
    body: { kind: 'example', name: 'E', config: { shared_token: 'sharedtoken1' } },
  });
  t.equal(ex.status, 201);
  const backup = (await exportNow(s, 'include')).configuration;
  const w = backup.providers.find((p: any) => p.id === hook.body.id);
  t.notOk('auth_mode' in w, 'new backups keep the auth settings inside config only');
  t.match(w.config, { auth_mode: 'hmac_sha256', acknowledge_unauthenticated: false });
  t.same(
    sanitizeConfiguration(s.service.core, backup).config.providers.find((p: any) => p.id === hook.body.id)!.config,
    w.config,
    'and restore as they are',
  );

  // A backup written before the move: the settings at the top level of every provider.
  const old = structuredClone(backup);
  for (const p of old.providers) {
    p.auth_mode = null;
    p.acknowledge_unauthenticated = false;
  }
  const ow = old.providers.find((p: any) => p.id === hook.body.id);
  delete ow.config.auth_mode;
  delete ow.config.acknowledge_unauthenticated;
  Object.assign(ow, { auth_mode: 'none', acknowledge_unauthenticated: true });
  const restored = sanitizeConfiguration(s.service.core, old).config.providers;
  const rw = restored.find((p: any) => p.id === hook.body.id)!;
  t.match(rw.config, { auth_mode: 'none', acknowledge_unauthenticated: true }, 'folded into the config');
  t.notOk('auth_mode' in rw, 'and gone from the record');
  t.notOk(
    'auth_mode' in restored.find((p: any) => p.id === ex.body.id)!,
    'empty legacy fields of other kinds are dropped',
  );

  const unacked = structuredClone(old);
  unacked.providers.find((p: any) => p.id === hook.body.id).acknowledge_unauthenticated = false;
  t.throws(
    () => sanitizeConfiguration(s.service.core, unacked),
    {
      code: 'invalid_backup',
      errors: [
        {
          path: /\/configuration\/providers\/\d+\/config\/acknowledge_unauthenticated/,
          message: 'must be true when auth_mode is none',
        },
      ],
    },
    'the plugin hook refuses an unacknowledged none',
  );

  const misplaced = structuredClone(old);
  misplaced.providers.find((p: any) => p.id === ex.body.id).auth_mode = 'bearer';
  t.throws(() => sanitizeConfiguration(s.service.core, misplaced), {
    code: 'invalid_backup',
    errors: [{ path: /\/providers\/\d+\/auth_mode/, message: 'does not apply to "example" providers' }],
  });
});
