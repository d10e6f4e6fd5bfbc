/**
 * A provider, tracker or target config holds only the fields its plugin's schema declares,
 * whatever the schema says about additionalProperties: the API refuses any other (422 naming it)
 * on create and on update, nested objects included where the schema lists their fields, and fields
 * stored before that rule are dropped at boot, so they are neither shown nor backed up. The generic
 * webhook's top-level aliases keep working.
 */

import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { Database as Db } from '../../core/src/db/database.ts';
import { newId, randomToken } from '../../core/src/http/ids.ts';
import { exportNow } from '../backup/support.ts';
import { startService, TEST_PLUGINS } from '../helpers/service.ts';

const PLUGINS = `${TEST_PLUGINS},@herald/provider-webhook`;
const LEAK = 'leaked-credential-value-0042';
const mapping = { title: 'title' };
const refusal = (fields: string[]) => ({
  status: 422,
  body: {
    code: 'unknown_config_fields',
    detail: new RegExp(`has fields it does not know: ${fields.join(', ').replaceAll('.', '\\.')}\\.`),
    errors: fields.map((f) => ({
      path: `body/config/${f.replaceAll('.', '/')}`,
      message: 'is not a field of this configuration',
    })),
  },
});

t.test('providers: undeclared config fields are refused on create and update; aliases keep working', async (t) => {
  const s = await startService({ SERVICE_PLUGINS: PLUGINS });
  t.teardown(() => s.stop());
  const token = s.admin.token;
  const post = (body: unknown) => s.request('POST', '/api/providers', { token, body });
  const count = async () => Number((await s.service.core.db.get('SELECT COUNT(*) AS n FROM providers'))!.n);
  const before = await count();

  // The example plugin's schema says additionalProperties: false, the webhook plugin's nothing: both refuse.
  t.match(
    await post({ kind: 'example', name: 'E', config: { shared_token: 'sharedtoken1', webhook_token: LEAK } }),
    refusal(['webhook_token']),
  );
  t.match(
    await post({
      kind: 'webhook',
      name: 'W',
      config: { mapping, secret: '0123456789abcdef', webhook_token: LEAK, note: 'x' },
    }),
    refusal(['webhook_token', 'note']),
  );
  t.match(
    await post({
      kind: 'webhook',
      name: 'W',
      config: { mapping: { ...mapping, extra: LEAK }, secret: '0123456789abcdef' },
    }),
    refusal(['mapping.extra']),
    'nested objects with declared fields too',
  );
  t.equal(await count(), before, 'nothing stored');

  // A map (severity_map is a record) takes any key; declared fields pass.
  const w = await post({
    kind: 'webhook',
    name: 'W',
    config: {
      mapping: { ...mapping, severity: 'level', severity_map: { P1: 'critical', 'any key': 'info' } },
      secret: '0123456789abcdef',
    },
  });
  t.equal(w.status, 201, w.text);
  t.same(w.body.config.mapping.severity_map, { P1: 'critical', 'any key': 'info' });

  const patch = (id: string, body: unknown) => s.request('PATCH', `/api/providers/${id}`, { token, body });
  t.match(
    await patch(w.body.id, { config: { ...w.body.config, secret: '********', webhook_token: LEAK } }),
    refusal(['webhook_token']),
    'on update',
  );
  t.match(
    await patch(w.body.id, { config: { ...w.body.config, secret: '********', mapping: { ...mapping, extra: 1 } } }),
    refusal(['mapping.extra']),
  );
  const unchanged = (await s.request('GET', `/api/providers/${w.body.id}`, { token })).body;
  t.same(unchanged.config, w.body.config, 'refused updates change nothing');

  // The generic webhook's top-level aliases: on create, on update, beside a config that is checked as usual.
  const open = await post({
    kind: 'webhook',
    name: 'Open',
    config: { mapping },
    auth_mode: 'none',
    acknowledge_unauthenticated: true,
  });
  t.equal(open.status, 201, open.text);
  t.match(open.body, {
    auth_mode: 'none',
    acknowledge_unauthenticated: true,
    config: { auth_mode: 'none', acknowledge_unauthenticated: true },
  });
  t.match(
    await post({
      kind: 'webhook',
      name: 'Open',
      config: { mapping, extra: 1 },
      auth_mode: 'none',
      acknowledge_unauthenticated: true,
    }),
    refusal(['extra']),
    'aliases do not excuse other fields',
  );
  const bearer = await patch(open.body.id, { auth_mode: 'bearer', config: { mapping, secret: '0123456789abcdef' } });
  t.equal(bearer.status, 200, bearer.text);
  t.match(
    bearer.body,
    { auth_mode: 'bearer', acknowledge_unauthenticated: true },
    'an alias left out keeps its stored value',
  );
  const renamed = await patch(open.body.id, { name: 'Renamed', acknowledge_unauthenticated: false });
  t.equal(renamed.status, 200, renamed.text);
  t.match(renamed.body, { name: 'Renamed', auth_mode: 'bearer', acknowledge_unauthenticated: false });
  const inConfig = await patch(open.body.id, {
    config: { mapping, secret: '********', auth_mode: 'none', acknowledge_unauthenticated: true },
  });
  t.equal(inConfig.status, 200, 'the aliases are config fields too');
  t.equal(inConfig.body.auth_mode, 'none');
  t.equal(
    (await post({ kind: 'example', name: 'E', config: { shared_token: 'sharedtoken1' }, auth_mode: 'none' })).status,
    422,
    'an alias of another kind is refused as before',
  );
});

t.test('trackers and targets: undeclared config fields are refused on create and update', async (t) => {
  const s = await startService({ SERVICE_PLUGINS: PLUGINS });
  t.teardown(() => s.stop());
  const token = s.admin.token;
  const example = (
    await s.request('POST', '/api/providers', {
      token,
      body: { kind: 'example', name: 'E', config: { shared_token: 'sharedtoken1' } },
    })
  ).body;
  const hook = (
    await s.request('POST', '/api/providers', {
      token,
      body: { kind: 'webhook', name: 'W', config: { mapping, secret: '0123456789abcdef' } },
    })
  ).body;

  // The example's tracker schema declares `tag` (and says nothing about other fields).
  t.match(
    await s.request('POST', '/api/trackers', {
      token,
      body: { provider_id: example.id, name: 'T', config: { tag: 'x', api_token: LEAK } },
    }),
    refusal(['api_token']),
  );
  // The webhook plugin has no tracker schema: a tracker config has no fields at all.
  t.match(
    await s.request('POST', '/api/trackers', {
      token,
      body: { provider_id: hook.id, name: 'T', config: { anything: 1 } },
    }),
    refusal(['anything']),
  );
  t.equal(
    (await s.request('POST', '/api/trackers', { token, body: { provider_id: hook.id, name: 'T', config: {} } })).status,
    201,
  );
  const tracker = await s.request('POST', '/api/trackers', {
    token,
    body: { provider_id: example.id, name: 'T', config: { tag: 'garden' } },
  });
  t.equal(tracker.status, 201);
  t.match(
    await s.request('PATCH', `/api/trackers/${tracker.body.id}`, {
      token,
      body: { config: { tag: 'garden', extra: true } },
    }),
    refusal(['extra']),
    'on update',
  );
  t.match(
    await s.request('PATCH', `/api/trackers/${tracker.body.id}`, { token, body: { provider_id: hook.id } }),
    refusal(['tag']),
    'moved to a provider whose trackers have no such field',
  );
  t.equal(
    (await s.request('PATCH', `/api/trackers/${tracker.body.id}`, { token, body: { name: 'Renamed' } })).status,
    200,
    'other changes pass',
  );
  t.same((await s.request('GET', `/api/trackers/${tracker.body.id}`, { token })).body.config, { tag: 'garden' });

  t.match(
    await s.request('POST', '/api/targets', {
      token,
      body: { kind: 'recorder', name: 'R', locale: 'en', config: { url: 'http://127.0.0.1:9/', webhook_token: LEAK } },
    }),
    refusal(['webhook_token']),
  );
  const target = await s.request('POST', '/api/targets', {
    token,
    body: {
      kind: 'recorder',
      name: 'R',
      locale: 'en',
      config: { url: 'http://127.0.0.1:9/', api_token: 'recorder-token-1' },
    },
  });
  t.equal(target.status, 201);
  t.match(
    await s.request('PATCH', `/api/targets/${target.body.id}`, {
      token,
      body: { config: { url: 'http://127.0.0.1:9/', api_token: '********', headers: { authorization: LEAK } } },
    }),
    refusal(['headers']),
    'on update',
  );
  t.equal(
    (await s.request('PATCH', `/api/targets/${target.body.id}`, { token, body: { name: 'Renamed' } })).status,
    200,
  );
  t.notMatch(JSON.stringify((await exportNow(s, 'include')).configuration), LEAK, 'nothing refused was stored');
});

t.test('fields stored before the rule are dropped at boot: not shown, not backed up, the instance runs', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-config-fields-'));
  const env = { SERVICE_PLUGINS: PLUGINS, SERVICE_SECRET_KEY: crypto.randomBytes(32).toString('hex') };
  let s = await startService(env, { dataDir: dir });
  t.teardown(async () => {
    await s.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  const db = s.service.core.db;
  const now = new Date().toISOString();
  const provider = newId();
  const hook = newId();
  const tracker = newId();
  const target = newId();
  await db.run(
    'INSERT INTO providers (id, user_id, kind, name, config, enabled, webhook_token, status, created_at, ' +
      `updated_at) VALUES (?, ?, 'example', 'Old', ?, ?, ?, 'pending', ?, ?)`,
    [provider, s.admin.id, { shared_token: 'sharedtoken1', webhook_token: LEAK }, true, randomToken(), now, now],
  );
  await db.run(
    'INSERT INTO providers (id, user_id, kind, name, config, enabled, webhook_token, status, created_at, ' +
      `updated_at) VALUES (?, ?, 'webhook', 'Old hook', ?, ?, ?, 'pending', ?, ?)`,
    [
      hook,
      s.admin.id,
      {
        mapping: { title: 'title', note: LEAK },
        secret: '0123456789abcdef',
        auth_mode: 'bearer',
        acknowledge_unauthenticated: false,
      },
      true,
      randomToken(),
      now,
      now,
    ],
  );
  await db.run(
    'INSERT INTO trackers (id, user_id, provider_id, name, enabled, event_types, quiet_hours, quiet_policies, ' +
      `config, created_at, updated_at) VALUES (?, ?, ?, 'Old', ?, '{}', NULL, '{}', ?, ?, ?)`,
    [tracker, s.admin.id, provider, true, { tag: 'kept', token: LEAK }, now, now],
  );
  await db.run(
    'INSERT INTO targets (id, user_id, kind, name, config, locale, enabled, created_at, updated_at) VALUES (?, ?, ' +
      `'recorder', 'Old', ?, 'en', ?, ?, ?)`,
    [target, s.admin.id, { url: 'http://127.0.0.1:9/', password: LEAK }, true, now, now],
  );
  const admin = s.admin;
  await s.stop();

  s = await startService(env, { dataDir: dir, setup: false });
  s.admin = admin;
  // Secret fields are stored sealed (secrets at rest); compare their clear values.
  const atRest = s.service.core.atRest;
  const opened = (v: unknown): unknown =>
    typeof v === 'string'
      ? atRest.open(v)
      : v && typeof v === 'object' && !Array.isArray(v)
        ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, opened(x)]))
        : v;
  const config = async (table: string, id: string) =>
    opened(Db.json((await s.service.core.db.get(`SELECT config FROM ${table} WHERE id = ?`, [id]))!.config, {}));
  t.same(await config('providers', provider), { shared_token: 'sharedtoken1' }, 'provider config cleaned');
  t.same(
    await config('providers', hook),
    {
      mapping: { title: 'title' },
      secret: '0123456789abcdef',
      auth_mode: 'bearer',
      acknowledge_unauthenticated: false,
    },
    'nested fields too; aliases stay',
  );
  t.same(await config('trackers', tracker), { tag: 'kept' }, 'tracker config cleaned');
  t.same(await config('targets', target), { url: 'http://127.0.0.1:9/' }, 'target config cleaned');
  const dropped = s.logs().filter((l) => l.msg === 'dropped configuration fields its plugin does not declare');
  t.same(
    dropped.map((l) => [l.table, l.id, l.fields]).sort(),
    [
      ['providers', provider, ['/webhook_token']],
      ['providers', hook, ['/mapping/note']],
      ['targets', target, ['/password']],
      ['trackers', tracker, ['/token']],
    ].sort(),
    'each record is reported with the fields it lost',
  );
  t.notMatch(s.logText(), LEAK, 'never their values');

  const token = s.admin.token;
  const shown = JSON.stringify([
    (await s.request('GET', '/api/providers', { token })).body,
    (await s.request('GET', '/api/trackers', { token })).body,
    (await s.request('GET', '/api/targets', { token })).body,
  ]);
  t.notMatch(shown, LEAK, 'not shown');
  t.notMatch(JSON.stringify(await exportNow(s, 'exclude')), LEAK, 'not in an exclude backup');
  t.notMatch(JSON.stringify(await exportNow(s, 'include')), LEAK, 'nor in an include backup');
  const p = (await s.request('GET', `/api/providers/${provider}`, { token })).body;
  t.equal(p.status, 'running', 'the instance runs');
  t.equal(
    (await s.request('PATCH', `/api/providers/${provider}`, { token, body: { config: { ...p.config } } })).status,
    200,
    'and its config can be saved back as shown',
  );
});
