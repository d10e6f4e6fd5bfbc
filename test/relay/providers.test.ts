import t from 'tap';
import { startService, TEST_PLUGINS, unsealed } from '../helpers/service.ts';

const PLUGINS = `${TEST_PLUGINS},@herald/provider-webhook,@herald/target-telegram`;

t.test('GET /api/plugins describes the enabled kinds', async (t) => {
  const s = await startService({ SERVICE_PLUGINS: PLUGINS });
  t.teardown(() => s.stop());
  t.equal((await s.request('GET', '/api/plugins')).status, 401, 'needs a user');
  const r = await s.request('GET', '/api/plugins', { token: s.admin.token });
  t.equal(r.status, 200);
  const byId = Object.fromEntries(r.body.plugins.map((p: any) => [p.id, p]));
  t.same(Object.keys(byId).sort(), ['bridge_self', 'example', 'recorder', 'telegram', 'webhook']);
  t.equal(byId.example.kind, 'provider');
  t.equal(byId.example.ingest, 'webhook');
  t.match(byId.example.events.thing_happened, { severity: 'info', quiet_hours: 'defer' });
  t.equal(byId.example.events.thing_happened.payload_schema.type, 'object');
  t.equal(byId.example.config_schema.type, 'object');
  t.equal(byId.example.tracker_schema.type, 'object');
  t.equal(byId.recorder.kind, 'target');
  t.equal(byId.recorder.limits.maxMessageLength, 4000);
  t.equal(byId.bridge_self.core_managed, true);
  t.equal(byId.telegram.has_bot_driver, true);
  const docs = await s.request('GET', '/api/docs/json');
  t.equal(docs.status, 200, 'the OpenAPI document builds with the relay routes');
  for (const path of [
    '/api/providers/{id}',
    '/api/trackers/{id}/targets/{target_id}',
    '/api/bots/{id}/webhook',
    '/api/actions/{id}/run',
    '/api/self-monitoring',
  ]) {
    t.ok(docs.body.paths[path], `documented: ${path}`);
  }
});

t.test('providers: create, list, read, update, delete, with secrets masked', async (t) => {
  const s = await startService({ SERVICE_PLUGINS: PLUGINS });
  t.teardown(() => s.stop());
  const token = s.admin.token;
  const db = s.service.core.db;

  const c = await s.request('POST', '/api/providers', {
    token,
    body: { kind: 'example', name: 'Ex', config: { shared_token: 'sharedtoken1' } },
  });
  t.equal(c.status, 201, 'created');
  t.equal(c.body.config.shared_token, '********', 'secret masked in the response');
  t.same(c.body.secrets_set, ['shared_token']);
  t.equal(c.body.config.label, 'example', 'schema defaults applied');
  t.match(c.body.webhook_url, /\/api\/hooks\/[A-Za-z0-9_-]{40,}$/);
  t.equal(c.body.status, 'running', 'the instance started');
  t.notMatch(c.text, /sharedtoken1/);
  t.notOk('webhook_token' in c.body && c.body.webhook_token, 'no bare webhook token field');
  t.notOk('user_id' in c.body);
  const stored = await db.get<{ config: string; user_id: string }>(
    'SELECT config, user_id FROM providers WHERE id = ?',
    [c.body.id],
  );
  t.equal(unsealed(s, JSON.parse(stored!.config).shared_token), 'sharedtoken1', 'real secret stored, sealed');
  t.equal(stored!.user_id, s.admin.id);
  t.ok(s.service.core.plugins.runningProvider(c.body.id), 'instance running');

  const second = await s.request('POST', '/api/providers', {
    token,
    body: { kind: 'example', name: 'Ex2', config: { shared_token: 'sharedtoken2' }, enabled: false },
  });
  t.equal(second.status, 201);
  t.equal(second.body.status, 'disabled');
  t.notOk(s.service.core.plugins.runningProvider(second.body.id), 'a disabled provider does not run');

  const list = await s.request('GET', '/api/providers', { token });
  t.equal(list.status, 200);
  t.same(
    list.body.providers.map((p: any) => p.name),
    ['Ex2', 'Ex', 'Self-monitoring'],
    'newest first, bridge_self included',
  );
  const page1 = await s.request('GET', '/api/providers?limit=1', { token });
  t.same(
    page1.body.providers.map((p: any) => p.name),
    ['Ex2'],
  );
  const page2 = await s.request('GET', `/api/providers?limit=1&before=${page1.body.providers[0].id}`, { token });
  t.same(
    page2.body.providers.map((p: any) => p.name),
    ['Ex'],
  );
  t.equal((await s.request('GET', '/api/providers?limit=500', { token })).status, 422, 'limit over 200 refused');

  const one = await s.request('GET', `/api/providers/${c.body.id}`, { token });
  t.equal(one.status, 200);
  t.equal(one.body.name, 'Ex');
  t.equal(one.body.config.shared_token, '********');

  const keep = await s.request('PATCH', `/api/providers/${c.body.id}`, {
    token,
    body: { name: 'Renamed', config: { ...one.body.config, label: 'L' } },
  });
  t.equal(keep.status, 200, 'updated');
  t.equal(keep.body.name, 'Renamed');
  t.equal(keep.body.config.label, 'L');
  t.equal(
    unsealed(
      s,
      JSON.parse((await db.get<{ config: string }>('SELECT config FROM providers WHERE id = ?', [c.body.id]))!.config)
        .shared_token,
    ),
    'sharedtoken1',
    'masked value keeps the stored secret',
  );

  const changed = await s.request('PATCH', `/api/providers/${c.body.id}`, {
    token,
    body: { config: { shared_token: 'newsecret99' } },
  });
  t.equal(changed.status, 200);
  t.equal(
    unsealed(
      s,
      JSON.parse((await db.get<{ config: string }>('SELECT config FROM providers WHERE id = ?', [c.body.id]))!.config)
        .shared_token,
    ),
    'newsecret99',
    'a new secret replaces the old',
  );

  const short = await s.request('PATCH', `/api/providers/${c.body.id}`, {
    token,
    body: { config: { shared_token: 'short' } },
  });
  t.equal(short.status, 422, 'plugin schema enforced on update');
  t.match(short.body.errors[0].path, /^body\/config\/shared_token/);
  t.match(short.body.detail, /invalid/);

  const maskedNew = await s.request('POST', '/api/providers', {
    token,
    body: { kind: 'example', name: 'M', config: { shared_token: '********' } },
  });
  t.equal(maskedNew.status, 422, 'a mask with nothing stored behind it is refused');
  t.match(maskedNew.body.detail, /real value/);

  const off = await s.request('PATCH', `/api/providers/${c.body.id}`, { token, body: { enabled: false } });
  t.equal(off.body.enabled, false);
  t.equal(off.body.status, 'disabled');
  t.notOk(s.service.core.plugins.runningProvider(c.body.id), 'disabling stops the instance');
  const on = await s.request('PATCH', `/api/providers/${c.body.id}`, { token, body: { enabled: true } });
  t.equal(on.body.status, 'running');

  const del = await s.request('DELETE', `/api/providers/${c.body.id}`, { token });
  t.equal(del.status, 204);
  t.equal((await s.request('GET', `/api/providers/${c.body.id}`, { token })).status, 404);
  t.notOk(s.service.core.plugins.runningProvider(c.body.id), 'deleting stops the instance');
  t.equal((await s.request('DELETE', `/api/providers/${c.body.id}`, { token })).status, 404);
  t.equal((await s.request('GET', '/api/providers/not-a-uuid', { token })).status, 404);
});

t.test('providers: kinds, core-managed, protected fields', async (t) => {
  const s = await startService({ SERVICE_PLUGINS: PLUGINS });
  t.teardown(() => s.stop());
  const token = s.admin.token;

  const unknown = await s.request('POST', '/api/providers', { token, body: { kind: 'nope', name: 'N', config: {} } });
  t.equal(unknown.status, 422);
  t.match(unknown.body.detail, /Unknown provider kind "nope".*example.*webhook/);
  t.notMatch(unknown.body.detail, /bridge_self/, 'core-managed kinds are not offered');
  t.equal(
    (await s.request('POST', '/api/providers', { token, body: { kind: 'recorder', name: 'N', config: {} } })).status,
    422,
    'a target kind is not a provider kind',
  );

  const bad = await s.request('POST', '/api/providers', {
    token,
    body: { kind: 'example', name: 'B', config: { shared_token: 'sharedtoken1', surprise: 1 } },
  });
  t.equal(bad.status, 422, 'config outside the plugin schema');
  t.ok(bad.body.errors.length > 0);

  const self = await s.request('POST', '/api/providers', {
    token,
    body: { kind: 'bridge_self', name: 'Me', config: {} },
  });
  t.equal(self.status, 422, 'bridge_self cannot be created');
  t.match(self.body.detail, /self-monitoring/);
  const bridge = (await s.request('GET', '/api/providers', { token })).body.providers.find(
    (p: any) => p.kind === 'bridge_self',
  );
  const delSelf = await s.request('DELETE', `/api/providers/${bridge.id}`, { token });
  t.equal(delSelf.status, 409, 'bridge_self cannot be deleted');
  t.equal((await s.request('GET', `/api/providers/${bridge.id}`, { token })).status, 200, 'still there');

  for (const field of ['id', 'user_id', 'created_at', 'webhook_token', 'status', 'status_detail', 'backlog_latched']) {
    const r = await s.request('POST', '/api/providers', {
      token,
      body: { kind: 'example', name: 'P', config: { shared_token: 'sharedtoken1' }, [field]: 'x' },
    });
    t.equal(r.status, 422, `${field} refused on create`);
    t.match(r.body.errors.map((e: any) => e.path).join(' '), new RegExp(field));
  }
  const ok = await s.request('POST', '/api/providers', {
    token,
    body: { kind: 'example', name: 'P', config: { shared_token: 'sharedtoken1' } },
  });
  for (const field of ['kind', 'webhook_token', 'user_id', 'updated_at']) {
    const r = await s.request('PATCH', `/api/providers/${ok.body.id}`, { token, body: { [field]: 'x' } });
    t.equal(r.status, 422, `${field} refused on update`);
  }
  const authOnExample = await s.request('POST', '/api/providers', {
    token,
    body: { kind: 'example', name: 'P', config: { shared_token: 'sharedtoken1' }, auth_mode: 'bearer' },
  });
  t.equal(authOnExample.status, 422, 'auth_mode belongs to the generic webhook only');
  t.equal(
    (await s.request('POST', '/api/providers', { token, body: { kind: 'example', name: '', config: {} } })).status,
    422,
    'empty name',
  );
});

t.test('generic webhook providers: auth modes and the explicit opt-in for none', async (t) => {
  const s = await startService({ SERVICE_PLUGINS: PLUGINS });
  t.teardown(() => s.stop());
  const token = s.admin.token;
  const db = s.service.core.db;
  const mapping = { title: 'title' };

  const hmac = await s.request('POST', '/api/providers', {
    token,
    body: { kind: 'webhook', name: 'H', config: { mapping, secret: '0123456789abcdef' } },
  });
  t.equal(hmac.status, 201, 'created');
  t.equal(hmac.body.auth_mode, 'hmac_sha256', 'hmac_sha256 by default');
  t.equal(hmac.body.config.auth_mode, 'hmac_sha256', 'copied into the config the plugin reads');
  t.equal(hmac.body.config.secret, '********');
  t.equal(hmac.body.status, 'running');

  const none = await s.request('POST', '/api/providers', {
    token,
    body: { kind: 'webhook', name: 'N', config: { mapping }, auth_mode: 'none' },
  });
  t.equal(none.status, 422, 'none without the acknowledgement');
  t.match(none.body.detail, /acknowledge_unauthenticated/);
  t.equal(none.body.errors[0].path, 'body/acknowledge_unauthenticated');
  const noneFalse = await s.request('POST', '/api/providers', {
    token,
    body: { kind: 'webhook', name: 'N', config: { mapping }, auth_mode: 'none', acknowledge_unauthenticated: false },
  });
  t.equal(noneFalse.status, 422);
  const noneInConfig = await s.request('POST', '/api/providers', {
    token,
    body: { kind: 'webhook', name: 'N', config: { mapping, auth_mode: 'none' } },
  });
  t.equal(noneInConfig.status, 422, 'none set through the config needs the opt-in too');

  const acked = await s.request('POST', '/api/providers', {
    token,
    body: { kind: 'webhook', name: 'N', config: { mapping }, auth_mode: 'none', acknowledge_unauthenticated: true },
  });
  t.equal(acked.status, 201, 'created');
  t.equal(acked.body.auth_mode, 'none');
  t.equal(acked.body.acknowledge_unauthenticated, true);
  const row = await db.get<{ config: string }>('SELECT config FROM providers WHERE id = ?', [acked.body.id]);
  t.match(
    JSON.parse(row!.config),
    { auth_mode: 'none', acknowledge_unauthenticated: true },
    'stored in the plugin config only',
  );
  t.notOk('auth_mode' in row!, 'no auth column on providers');

  const toNone = await s.request('PATCH', `/api/providers/${hmac.body.id}`, { token, body: { auth_mode: 'none' } });
  t.equal(toNone.status, 422, 'switching to none needs the opt-in');
  const toBearer = await s.request('PATCH', `/api/providers/${hmac.body.id}`, { token, body: { auth_mode: 'bearer' } });
  t.equal(toBearer.status, 200);
  t.equal(toBearer.body.config.auth_mode, 'bearer');
  t.equal(
    unsealed(
      s,
      JSON.parse(
        (await db.get<{ config: string }>('SELECT config FROM providers WHERE id = ?', [hmac.body.id]))!.config,
      ).secret,
    ),
    '0123456789abcdef',
    'secret kept',
  );
  t.equal(
    (
      await s.request('POST', '/api/providers', {
        token,
        body: { kind: 'webhook', name: 'X', config: { mapping }, auth_mode: 'basic' },
      })
    ).status,
    422,
    'unknown auth mode',
  );
  const noSecret = await s.request('POST', '/api/providers', {
    token,
    body: { kind: 'webhook', name: 'X', config: { mapping }, auth_mode: 'bearer' },
  });
  t.equal(noSecret.status, 422, 'refused when saved: the plugin would refuse to start without a secret');
  t.match(noSecret.body.errors, [{ path: 'body/config/secret', code: 'required' }]);
});
