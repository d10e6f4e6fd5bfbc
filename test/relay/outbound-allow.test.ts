/**
 * Per-instance outbound allow lists: without any service-wide allowance (loopback counts as
 * private and is refused by default), a target or provider an administrator gave an allow list
 * reaches a loopback "private" host through the pinned client, and another instance asking for
 * the same host is refused with the SSRF error. Host-name entries, validation, the
 * administrator-only rule and the backup round trip.
 */
import http from 'node:http';
import { OUTBOUND_REFUSED } from '@herald/plugin-api';
import t from 'tap';
import { applyRestore } from '../../core/src/backup/restore.ts';
import { createOutboundHttp, OutboundError } from '../../core/src/net/outbound.ts';
import { startService, startSink } from '../helpers/service.ts';

/** A loopback server answering every request with `body` (JSON), counting requests. */
async function jsonServer(body: unknown): Promise<{ url: string; hits: () => number; close(): Promise<void> }> {
  let hits = 0;
  const server = http.createServer((_req, res) => {
    hits++;
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}/`,
    hits: () => hits,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

t.test("the pinned client: an instance's own list, by address or host name, for that view only", async (t) => {
  const srv = await jsonServer({ ok: true });
  const port = new URL(srv.url).port;
  // "nas.lan" resolves to the loopback "private" address, as a NAS's name would to the LAN.
  const client = createOutboundHttp({
    allowCidrs: [],
    resolver: async (h) => (h === 'nas.lan' || h === 'other.lan' ? [{ address: '127.0.0.1', family: 4 }] : []),
  });
  t.teardown(async () => {
    await client.close();
    await srv.close();
  });
  const refused = async (p: Promise<unknown>, what: string) => {
    const err = await p.then(
      () => null,
      (e) => e,
    );
    t.ok(err instanceof OutboundError && err.code === OUTBOUND_REFUSED, `${what} is refused (${err?.message})`);
  };
  const byAddress = client.bind({}, ['127.0.0.1']);
  const byName = client.bind({}, ['NAS.lan.']);
  const plain = client.bind({});
  t.equal((await byAddress.request(srv.url)).status, 200, 'an address on the list is reached');
  await refused(plain.request(srv.url), 'the same address from an instance without the list');
  await refused(client.request(srv.url), 'and from the unbound client (the pooled connection is not shared)');
  t.equal(
    (await byName.request(`http://nas.lan:${port}/`)).status,
    200,
    'a host name on the list is reached whatever it resolves to',
  );
  await refused(byName.request(`http://other.lan:${port}/`), 'another name resolving to the same private address');
  await refused(byName.request(srv.url), 'the address itself, not on that list');
  t.same(
    await byName.resolveAllowed('nas.lan'),
    { address: '127.0.0.1', family: 4 },
    'resolveAllowed (SMTP, NUT) follows the list too',
  );
  await refused(plain.resolveAllowed('nas.lan'), 'resolveAllowed without it');
  t.equal(srv.hits(), 2, 'refused requests never connected');
});

t.test('providers and targets with outbound_allow, without any service-wide allowance', async (t) => {
  const s = await startService({ SERVICE_OUTBOUND_ALLOW_CIDRS: '' });
  const sink = await startSink();
  const feed = await jsonServer([{ type: 'thing_happened', payload: { name: 'from the nas' } }]);
  t.teardown(async () => {
    await s.stop();
    await sink.close();
    await feed.close();
  });
  const token = s.admin.token;

  await t.test('targets: the allowed one reaches the loopback sink, another is refused', async (t) => {
    const allowed = await s.request('POST', '/api/targets', {
      token,
      body: {
        kind: 'recorder',
        name: 'NAS sink',
        config: { url: sink.url },
        locale: 'en',
        outbound_allow: ['127.0.0.1/32'],
      },
    });
    t.equal(allowed.status, 201, allowed.text);
    t.same(allowed.body.outbound_allow, ['127.0.0.1/32'], 'the list is shown with the target');
    const other = await s.request('POST', '/api/targets', {
      token,
      body: { kind: 'recorder', name: 'Other sink', config: { url: sink.url }, locale: 'en' },
    });
    t.same(other.body.outbound_allow, []);
    const ok = await s.request('POST', `/api/targets/${allowed.body.id}/test`, { token, body: {} });
    t.equal(ok.body.ok, true, `the allowed target sent (${ok.body.detail})`);
    await sink.waitFor(1);
    t.equal(sink.received.length, 1);
    const no = await s.request('POST', `/api/targets/${other.body.id}/test`, { token, body: {} });
    t.equal(no.body.ok, false, 'the other target could not');
    t.match(
      no.body.detail,
      /refused to connect to 127\.0\.0\.1: 127\.0\.0\.1 is a loopback address/,
      'with the SSRF refusal',
    );
    t.equal(sink.received.length, 1, 'nothing reached the sink from it');
    // Editing the list takes effect on the next send (the cached instance is rebuilt).
    const cleared = await s.request('PATCH', `/api/targets/${allowed.body.id}`, {
      token,
      body: { outbound_allow: null },
    });
    t.same(cleared.body.outbound_allow, []);
    t.equal(
      (await s.request('POST', `/api/targets/${allowed.body.id}/test`, { token, body: {} })).body.ok,
      false,
      'cleared: refused again',
    );
    const given = await s.request('PATCH', `/api/targets/${other.body.id}`, {
      token,
      body: { outbound_allow: ['127.0.0.0/8', 'NAS.Lan.', 'nas.lan'] },
    });
    t.equal(given.status, 200, given.text);
    t.same(given.body.outbound_allow, ['127.0.0.0/8', 'nas.lan'], 'host names in lower case, duplicates dropped');
    t.equal(
      (await s.request('POST', `/api/targets/${other.body.id}/test`, { token, body: {} })).body.ok,
      true,
      'given the list: it sends',
    );
    const kept = await s.request('PATCH', `/api/targets/${other.body.id}`, { token, body: { name: 'Renamed' } });
    t.same(kept.body.outbound_allow, ['127.0.0.0/8', 'nas.lan'], 'a change without the field keeps the list');
  });

  await t.test('providers: the allowed one polls the loopback feed, another is refused', async (t) => {
    const make = async (name: string, allow?: string[]) => {
      const p = await s.request('POST', '/api/providers', {
        token,
        body: {
          kind: 'example',
          name,
          config: { shared_token: 'sharedtoken1', poll_url: feed.url },
          ...(allow ? { outbound_allow: allow } : {}),
        },
      });
      if (p.status !== 201) throw new Error(`provider: ${p.status} ${p.text}`);
      const tr = await s.request('POST', '/api/trackers', {
        token,
        body: { provider_id: p.body.id, name: `${name} tracker` },
      });
      return { p: p.body, tr: tr.body };
    };
    const nas = await make('NAS', ['127.0.0.1']);
    const plain = await make('Plain');
    t.same(nas.p.outbound_allow, ['127.0.0.1']);
    const host = s.service.core.plugins;
    await host.pollOnce(nas.p.id);
    await host.pollOnce(plain.p.id);
    const events = async (id: string) =>
      (await s.request('GET', `/api/events?provider_id=${id}`, { token })).body.events;
    t.match(
      await events(nas.p.id),
      [{ event_type: 'thing_happened', payload: { name: 'from the nas' } }],
      'the allowed provider read the feed',
    );
    t.same(await events(plain.p.id), [], 'the other provider read nothing');
    const tracker = await s.service.core.db.get('SELECT last_poll_error FROM trackers WHERE id = ?', [plain.tr.id]);
    t.match(
      tracker!.last_poll_error,
      /refused to connect to 127\.0\.0\.1: 127\.0\.0\.1 is a loopback address/,
      'refused with the SSRF error',
    );
    t.equal(feed.hits(), 1, 'only the allowed provider connected');
  });

  await t.test('only an administrator sets the list; entries are checked', async (t) => {
    const user = await s.user();
    const create = await s.request('POST', '/api/targets', {
      token: user.token,
      body: {
        kind: 'recorder',
        name: 'Mine',
        config: { url: sink.url },
        locale: 'en',
        outbound_allow: ['192.168.1.10'],
      },
    });
    t.equal(create.status, 403);
    t.equal(create.body.code, 'outbound_allow_admin_only');
    const mine = await s.request('POST', '/api/targets', {
      token: user.token,
      body: { kind: 'recorder', name: 'Mine', config: { url: sink.url }, locale: 'en' },
    });
    t.equal(mine.status, 201);
    const patch = await s.request('PATCH', `/api/targets/${mine.body.id}`, {
      token: user.token,
      body: { outbound_allow: ['10.0.0.0/8'] },
    });
    t.equal(patch.status, 403);
    t.equal(patch.body.code, 'outbound_allow_admin_only');
    t.equal(
      (await s.request('PATCH', `/api/targets/${mine.body.id}`, { token: user.token, body: { outbound_allow: [] } }))
        .status,
      200,
      'sending it unchanged is fine',
    );
    const prov = await s.request('POST', '/api/providers', {
      token: user.token,
      body: { kind: 'example', name: 'P', config: { shared_token: 'sharedtoken1' }, outbound_allow: ['nas.lan'] },
    });
    t.equal(prov.status, 403);
    t.equal(prov.body.code, 'outbound_allow_admin_only');
    t.same(
      (await s.request('GET', `/api/targets/${mine.body.id}`, { token: user.token })).body.outbound_allow,
      [],
      'nothing was stored',
    );
    const bad = await s.request('POST', '/api/targets', {
      token,
      body: {
        kind: 'recorder',
        name: 'Bad',
        config: { url: sink.url },
        locale: 'en',
        outbound_allow: ['192.168.1.0/33'],
      },
    });
    t.equal(bad.status, 422);
    t.equal(bad.body.code, 'invalid_outbound_allow');
    t.same(bad.body.params, { entry: '192.168.1.0/33' });
    t.match(bad.body.errors, [{ path: 'body/outbound_allow/0' }]);
    for (const entry of ['not a host', 'http://nas.lan', '999.1.1.1', '-nas.lan']) {
      const r = await s.request('PATCH', `/api/targets/${mine.body.id}`, { token, body: { outbound_allow: [entry] } });
      t.equal(r.status, 404, "the administrator cannot reach another user's target either");
      const own = await s.request('POST', '/api/providers', {
        token,
        body: {
          kind: 'example',
          name: 'Bad',
          config: { shared_token: 'sharedtoken1' },
          outbound_allow: ['nas.lan', entry],
        },
      });
      t.equal(own.body.code, 'invalid_outbound_allow', `"${entry}" is refused`);
      t.same(own.body.params, { entry });
    }
  });

  await t.test('backups carry the lists and restore them', async (t) => {
    const targets = (await s.request('GET', '/api/targets', { token })).body.targets;
    const providers = (await s.request('GET', '/api/providers', { token })).body.providers;
    const withList = targets.find((x: any) => x.outbound_allow.length);
    const nas = providers.find((x: any) => x.name === 'NAS');
    const exported = await s.request('GET', '/api/backup/export?secrets_mode=exclude', { token });
    t.equal(exported.status, 200);
    const c = exported.body.configuration;
    t.same(
      c.targets.find((x: any) => x.id === withList.id).outbound_allow,
      ['127.0.0.0/8', 'nas.lan'],
      "the target's list is in the backup",
    );
    t.same(c.providers.find((x: any) => x.id === nas.id).outbound_allow, ['127.0.0.1'], "and the provider's");
    t.notOk('outbound_allow' in c.providers.find((x: any) => x.name === 'Plain'), 'none: the field is left out');
    t.equal(
      (await s.request('PATCH', `/api/targets/${withList.id}`, { token, body: { outbound_allow: ['10.1.2.3'] } }))
        .status,
      200,
    );
    t.equal(
      (await s.request('PATCH', `/api/providers/${nas.id}`, { token, body: { outbound_allow: [] } })).status,
      200,
    );
    const summary = await applyRestore(s.service.core, exported.body, 'overwrite');
    t.ok(summary.counts.targets?.replaced >= 1, 'the changed target was replaced');
    t.same(
      (await s.request('GET', `/api/targets/${withList.id}`, { token })).body.outbound_allow,
      ['127.0.0.0/8', 'nas.lan'],
      'restored',
    );
    t.same(
      (await s.request('GET', `/api/providers/${nas.id}`, { token })).body.outbound_allow,
      ['127.0.0.1'],
      'restored',
    );
  });
});
