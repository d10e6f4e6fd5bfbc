/**
 * Administrators set outbound allow lists on any user's providers and targets: without any
 * service-wide allowance, another user's target pointing at a loopback "private" sink is refused
 * until the administrator allows 127.0.0.1 for it through /api/admin/outbound-allow, and delivers
 * afterwards; the same for a provider polling a loopback feed. Non-administrators get 403, unknown
 * ids 404, bad entries 422; the listing shows every user's rows, with server addresses but no secret.
 */
import http from 'node:http';
import t from 'tap';
import { configAddress } from '../../core/src/relay/routes/admin-outbound.ts';
import { startService, startSink } from '../helpers/service.ts';

t.test(
  'configAddress: scheme, host and port of a URL, or a host field; never a secret field, a path or user info',
  async (t) => {
    t.equal(
      configAddress({ base_url: 'https://user:pw@photos.example.net:2283/api?key=x' }, []),
      'https://photos.example.net:2283',
    );
    t.equal(configAddress({ url: 'http://192.168.1.10/hooks/abc' }, []), 'http://192.168.1.10');
    t.equal(
      configAddress({ url: 'https://hooks.example.net/T/B/secret' }, ['url']),
      null,
      'a secret URL field is never read',
    );
    t.equal(configAddress({ host: 'nas.lan', port: 3493 }, []), 'nas.lan:3493');
    t.equal(configAddress({ host: 'smtp.example.net' }, ['password']), 'smtp.example.net');
    t.equal(configAddress({ host: 'not a host' }, []), null);
    t.equal(configAddress({ label: 'x' }, []), null, 'no address field: null');
  },
);

t.test("an administrator allows a private host for another user's provider and target", async (t) => {
  const s = await startService({ SERVICE_OUTBOUND_ALLOW_CIDRS: '' });
  const sink = await startSink();
  let feedHits = 0;
  const feed = http.createServer((_req, res) => {
    feedHits++;
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify([{ type: 'thing_happened', payload: { name: 'from the nas' } }]));
  });
  await new Promise<void>((r) => feed.listen(0, '127.0.0.1', r));
  const feedUrl = `http://127.0.0.1:${(feed.address() as { port: number }).port}/feed`;
  t.teardown(async () => {
    await s.stop();
    await sink.close();
    feed.closeAllConnections();
    await new Promise((r) => feed.close(r));
  });
  const admin = s.admin.token;
  const alice = await s.user('alice@example.com');
  const bob = await s.user('bob@example.com');
  const SECRETS = ['alice-target-token-7f3a9', 'alice-provider-shared-4c2e8', 'bob-provider-shared-9d1b6'];

  const target = await s.request('POST', '/api/targets', {
    token: alice.token,
    body: {
      kind: 'recorder',
      name: 'NAS sink',
      config: { url: `${sink.url}hooks/path-part`, api_token: SECRETS[0] },
      locale: 'en',
    },
  });
  t.equal(target.status, 201, target.text);
  const provider = await s.request('POST', '/api/providers', {
    token: alice.token,
    body: { kind: 'example', name: 'NAS feed', config: { shared_token: SECRETS[1], poll_url: feedUrl } },
  });
  t.equal(provider.status, 201, provider.text);
  await s.request('POST', '/api/trackers', {
    token: alice.token,
    body: { provider_id: provider.body.id, name: 'NAS tracker' },
  });
  const bobs = await s.request('POST', '/api/providers', {
    token: bob.token,
    body: { kind: 'example', name: 'Bob feed', config: { shared_token: SECRETS[2] } },
  });
  t.equal(bobs.status, 201, bobs.text);

  await t.test("the list shows every user's rows with owner and address, and no secret", async (t) => {
    const list = await s.request('GET', '/api/admin/outbound-allow', { token: admin });
    t.equal(list.status, 200, list.text);
    for (const secret of SECRETS) t.notOk(list.text.includes(secret), 'no secret value in the answer');
    t.notOk(list.text.includes('path-part'), 'no URL path either');
    const items = list.body.items as any[];
    t.match(
      items.find((i) => i.id === target.body.id),
      {
        kind: 'target',
        plugin: 'recorder',
        name: 'NAS sink',
        enabled: true,
        plugin_enabled: true,
        owner: { id: alice.id, email: 'alice@example.com' },
        outbound_allow: [],
        address: sink.url.replace(/\/$/, ''),
      },
    );
    t.match(
      items.find((i) => i.id === provider.body.id),
      {
        kind: 'provider',
        plugin: 'example',
        owner: { email: 'alice@example.com' },
        address: feedUrl.replace('/feed', ''),
      },
    );
    t.match(
      items.find((i) => i.id === bobs.body.id),
      { kind: 'provider', owner: { id: bob.id, email: 'bob@example.com' }, address: null },
    );
    t.ok(
      await s.service.core.db.get('SELECT id FROM providers WHERE kind = ?', ['bridge_self']),
      'each user has a self-monitoring provider',
    );
    t.notOk(
      items.some((i) => i.plugin === 'bridge_self'),
      "the service's own self-monitoring providers are left out",
    );
    t.equal(list.body.next_offset, null);
    const page = await s.request('GET', '/api/admin/outbound-allow?limit=1', { token: admin });
    t.equal(page.body.items.length, 1);
    t.equal(page.body.next_offset, 1, 'a limited page says where the next starts');
    const next = await s.request('GET', '/api/admin/outbound-allow?limit=1&offset=1', { token: admin });
    t.not(next.body.items[0].id, page.body.items[0].id);
  });

  await t.test('non-administrators get 403, unknown ids 404, bad entries 422', async (t) => {
    const list = await s.request('GET', '/api/admin/outbound-allow', { token: alice.token });
    t.equal(list.status, 403);
    t.equal(list.body.code, 'forbidden');
    const put = await s.request('PUT', `/api/admin/outbound-allow/target/${target.body.id}`, {
      token: alice.token,
      body: { outbound_allow: ['127.0.0.1'] },
    });
    t.equal(put.status, 403, 'not even on their own target');
    t.equal((await s.request('GET', '/api/admin/outbound-allow', { token: null })).status, 401);
    const unknown = await s.request('PUT', '/api/admin/outbound-allow/target/0195a1b2-0000-7000-8000-000000000000', {
      token: admin,
      body: { outbound_allow: ['127.0.0.1'] },
    });
    t.equal(unknown.status, 404);
    t.equal(unknown.body.code, 'not_found');
    const wrongKind = await s.request('PUT', `/api/admin/outbound-allow/provider/${target.body.id}`, {
      token: admin,
      body: { outbound_allow: ['127.0.0.1'] },
    });
    t.equal(wrongKind.status, 404, 'a target id is no provider');
    const bad = await s.request('PUT', `/api/admin/outbound-allow/target/${target.body.id}`, {
      token: admin,
      body: { outbound_allow: ['127.0.0.1', '192.168.1.0/33'] },
    });
    t.equal(bad.status, 422);
    t.equal(bad.body.code, 'invalid_outbound_allow');
    t.same(bad.body.params, { entry: '192.168.1.0/33' });
    t.match(bad.body.errors, [{ path: 'body/outbound_allow/1' }]);
    t.same(
      (await s.request('GET', `/api/targets/${target.body.id}`, { token: alice.token })).body.outbound_allow,
      [],
      'nothing was stored',
    );
  });

  await t.test('the target: refused before, delivered after, refused again once cleared', async (t) => {
    const before = await s.request('POST', `/api/targets/${target.body.id}/test`, { token: alice.token, body: {} });
    t.equal(before.body.ok, false, 'refused without a list');
    t.match(before.body.detail, /refused to connect to 127\.0\.0\.1: 127\.0\.0\.1 is a loopback address/);
    t.equal(sink.received.length, 0);
    const put = await s.request('PUT', `/api/admin/outbound-allow/target/${target.body.id}`, {
      token: admin,
      body: { outbound_allow: ['127.0.0.1'] },
    });
    t.equal(put.status, 200, put.text);
    t.match(put.body, { kind: 'target', id: target.body.id, owner: { id: alice.id }, outbound_allow: ['127.0.0.1'] });
    t.same(
      (await s.request('GET', `/api/targets/${target.body.id}`, { token: alice.token })).body.outbound_allow,
      ['127.0.0.1'],
      'the owner sees the list',
    );
    const after = await s.request('POST', `/api/targets/${target.body.id}/test`, { token: alice.token, body: {} });
    t.equal(after.body.ok, true, `delivered (${after.body.detail})`);
    await sink.waitFor(1);
    t.equal(sink.received.length, 1, 'the sink got it');
    const line = s
      .logs()
      .find((l) => l.msg === 'an administrator set the outbound allow list' && l.target_id === target.body.id);
    t.match(
      line,
      { level: 'info', admin_id: s.admin.id, owner_id: alice.id, outbound_allow: ['127.0.0.1'] },
      'logged with the administrator and the list',
    );
    for (const secret of SECRETS) t.notOk(s.logText().includes(secret), 'no secret in the log');
    const cleared = await s.request('PUT', `/api/admin/outbound-allow/target/${target.body.id}`, {
      token: admin,
      body: { outbound_allow: null },
    });
    t.same(cleared.body.outbound_allow, []);
    t.equal(
      (await s.request('POST', `/api/targets/${target.body.id}/test`, { token: alice.token, body: {} })).body.ok,
      false,
      'cleared: refused again',
    );
    t.equal(sink.received.length, 1);
  });

  await t.test('the provider: the restarted instance polls with the new list', async (t) => {
    const host = s.service.core.plugins;
    const events = async () =>
      (await s.request('GET', `/api/events?provider_id=${provider.body.id}`, { token: alice.token })).body.events;
    await host.pollOnce(provider.body.id);
    t.same(await events(), [], 'nothing read without a list');
    t.equal(feedHits, 0, 'and nothing connected');
    const put = await s.request('PUT', `/api/admin/outbound-allow/provider/${provider.body.id}`, {
      token: admin,
      body: { outbound_allow: ['127.0.0.0/8', 'NAS.lan'] },
    });
    t.equal(put.status, 200, put.text);
    t.same(put.body.outbound_allow, ['127.0.0.0/8', 'nas.lan'], "normalised as an owner's PATCH would");
    await host.pollOnce(provider.body.id);
    t.match(
      await events(),
      [{ event_type: 'thing_happened', payload: { name: 'from the nas' } }],
      'the provider read the feed',
    );
    t.equal(feedHits, 1);
    const listed = (await s.request('GET', '/api/admin/outbound-allow', { token: admin })).body.items.find(
      (i: any) => i.id === provider.body.id,
    );
    t.same(listed.outbound_allow, ['127.0.0.0/8', 'nas.lan'], 'the listing shows it');
    const mine = await s.request('PATCH', `/api/providers/${provider.body.id}`, {
      token: alice.token,
      body: { outbound_allow: ['10.0.0.0/8'] },
    });
    t.equal(mine.body.code, 'outbound_allow_admin_only', 'the owner still cannot change it');
  });
});
