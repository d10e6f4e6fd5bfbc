/**
 * The ingest write path: an accepted webhook request is one event row carrying its payload-log
 * entry and its replay key (no webhook_payload_log or plugin_store row), and the readers of both —
 * the webhook-log API and the plugin's duplicate check — see it exactly as before. The replay key is
 * unique per provider while it lives: a delivery of the same id that slips past the plugin's check
 * is refused by the write itself.
 */

import crypto from 'node:crypto';
import t from 'tap';
import { providerRowFrom } from '../../core/src/plugins/host.ts';
import { DbInstanceStore } from '../../core/src/plugins/store.ts';
import { applyRetention } from '../../core/src/relay/feature.ts';
import { githubHookHeaders, startService, startSink, TEST_PLUGINS, type TestService } from '../helpers/service.ts';

const SECRET = 'ingest-write-secret-0123456789';

function push(n: number, deliveryId: string = crypto.randomUUID()) {
  const sha = crypto.createHash('sha1').update(`push${n}`).digest('hex');
  const repo = 'octo-org/ingest';
  const raw = JSON.stringify({
    ref: 'refs/heads/main',
    before: '1a2b3c4d5e6f708192a3b4c5d6e7f80912345678',
    after: sha,
    created: false,
    deleted: false,
    forced: false,
    compare: `https://github.com/${repo}/compare/1a2b3c...${sha.slice(0, 6)}`,
    repository: {
      id: 1,
      name: 'ingest',
      full_name: repo,
      private: false,
      html_url: `https://github.com/${repo}`,
      owner: { login: 'octo-org', id: 2 },
      default_branch: 'main',
    },
    pusher: { name: 'monalisa', email: 'monalisa@users.noreply.github.com' },
    sender: { login: 'monalisa', id: 3, html_url: 'https://github.com/monalisa', type: 'User' },
    commits: [
      {
        id: sha,
        tree_id: sha,
        distinct: true,
        message: `commit ${n} token=hunter2secret`,
        timestamp: '2026-01-05T10:02:11+01:00',
        url: `https://github.com/${repo}/commit/${sha}`,
        author: { name: 'Mona', email: 'm@example.com', username: 'monalisa' },
        committer: { name: 'GitHub', email: 'noreply@github.com', username: 'web-flow' },
        added: [],
        removed: [],
        modified: ['a.ts'],
      },
    ],
  });
  return {
    raw,
    headers: githubHookHeaders(SECRET, raw, 'push', deliveryId),
  };
}

async function chain(s: TestService, sinkUrl: string, targets = 1) {
  const token = s.admin.token;
  const p = (
    await s.request('POST', '/api/providers', {
      token,
      body: { kind: 'codehost', name: 'Repo', config: { host: 'github', webhook_secret: SECRET } },
    })
  ).body;
  const tr = (await s.request('POST', '/api/trackers', { token, body: { provider_id: p.id, name: 'Pushes' } })).body;
  for (let i = 0; i < targets; i++) {
    const tg = (
      await s.request('POST', '/api/targets', {
        token,
        body: { kind: 'recorder', name: `Rec ${i}`, config: { url: sinkUrl }, locale: 'en' },
      })
    ).body;
    await s.request('PUT', `/api/trackers/${tr.id}/targets/${tg.id}`, { token });
  }
  return { provider: p, hook: new URL(p.webhook_url).pathname, log: `/api/providers/${p.id}/webhook-log` };
}

const count = async (s: TestService, sql: string, params: unknown[] = []) =>
  Number((await s.service.core.db.get(sql, params as never[]))?.n ?? 0);

t.test(
  'an accepted request is one event row with its log entry and replay key; the log API and the duplicate check read it',
  async (t) => {
    const s = await startService({ SERVICE_PLUGINS: `${TEST_PLUGINS},@herald/provider-codehost` });
    const sink = await startSink();
    t.teardown(async () => {
      await s.stop();
      await sink.close();
    });
    const c = await chain(s, sink.url, 2);

    const bad = await s.request('POST', c.hook, {
      raw: push(0).raw,
      headers: { ...push(0).headers, 'x-hub-signature-256': 'sha256=00' },
    });
    t.equal(bad.status, 401, 'a bad signature is refused');
    const first = push(1);
    const ok = await s.request('POST', c.hook, { raw: first.raw, headers: first.headers });
    t.equal(ok.status, 202, ok.text);
    const eventId = ok.body.event_ids[0];
    t.equal((await sink.waitFor(2)).length, 2, 'both targets got it');
    t.equal(
      await count(s, 'SELECT COUNT(*) AS n FROM deliveries WHERE event_id = ?', [eventId]),
      2,
      'one delivery per target (one multi-row insert)',
    );
    t.equal(
      await count(s, 'SELECT COUNT(*) AS n FROM webhook_payload_log WHERE provider_id = ?', [c.provider.id]),
      1,
      'only the refused request has a payload-log row of its own',
    );
    t.equal(
      await count(s, 'SELECT COUNT(*) AS n FROM plugin_store WHERE instance_id = ?', [c.provider.id]),
      0,
      'the replay key is not a plugin_store row',
    );
    const row = await s.service.core.db.get<{
      replay_key: string | null;
      replay_expires_at: string;
      hook_ip: string | null;
      hook_excerpt: string | null;
      hook_event_ids: string | null;
    }>('SELECT replay_key, replay_expires_at, hook_ip, hook_excerpt, hook_event_ids FROM event_log WHERE id = ?', [
      eventId,
    ]);
    t.equal(row?.replay_key, `delivery:${first.headers['x-github-delivery']}`, 'the event carries the replay key');
    t.ok(Date.parse(row?.replay_expires_at ?? '') > Date.now() + 6 * 86_400_000, 'for the plugin’s seven days');
    t.ok(row?.hook_ip, 'and the source address');
    t.notMatch(String(row?.hook_excerpt), /hunter2secret/, 'the excerpt is stored redacted');

    const again = await s.request('POST', c.hook, { raw: first.raw, headers: first.headers });
    t.equal(again.status, 409, 'the same delivery id again is refused by the plugin’s check');
    t.equal(again.body.code, 'replayed');
    const store = new DbInstanceStore(s.service.core.db, c.provider.id);
    t.equal(
      await store.get(`delivery:${first.headers['x-github-delivery']}`),
      1,
      'the instance store reads the key as the plugin set it',
    );
    t.equal(
      await store.setIfAbsent(`delivery:${first.headers['x-github-delivery']}`, 2),
      false,
      'setIfAbsent sees it too',
    );

    const log = await s.request('GET', c.log, { token: s.admin.token });
    t.equal(log.status, 200);
    t.same(
      log.body.entries.map((e: any) => e.status_code),
      [409, 202, 401],
      'every request, newest first, merged from both places',
    );
    const accepted = log.body.entries[1];
    t.same(accepted.event_ids, [eventId], 'the accepted entry names its event');
    t.equal(accepted.error_message, null);
    t.match(accepted.payload_excerpt, /refs\/heads\/main/, 'with the excerpt of the body');
    t.notMatch(JSON.stringify(log.body), /hunter2secret/, 'redacted');
    const page2 = await s.request('GET', `${c.log}?limit=1&before=${log.body.entries[0].id}`, { token: s.admin.token });
    t.same(
      page2.body.entries.map((e: any) => e.id),
      [accepted.id],
      'the cursor pages through both',
    );
    const page3 = await s.request('GET', `${c.log}?limit=5&before=${accepted.id}`, { token: s.admin.token });
    t.same(
      page3.body.entries.map((e: any) => e.status_code),
      [401],
    );

    await store.delete(`delivery:${first.headers['x-github-delivery']}`);
    const afterDelete = await s.request('POST', c.hook, { raw: first.raw, headers: first.headers });
    t.equal(afterDelete.status, 202, 'a key deleted through the store no longer refuses the delivery');
  },
);

t.test('the write refuses a replayed key itself; an expired key is let go; retention keeps a live key', async (t) => {
  const s = await startService({
    SERVICE_PLUGINS: `${TEST_PLUGINS},@herald/provider-codehost`,
    SERVICE_EVENT_LOG_RETENTION_DAYS: '1',
  });
  const sink = await startSink();
  t.teardown(async () => {
    await s.stop();
    await sink.close();
  });
  const c = await chain(s, sink.url);
  const core = s.service.core;
  const relay = core.services.get('relay') as any;
  const ex = (
    await s.request('POST', '/api/providers', {
      token: s.admin.token,
      body: { kind: 'example', name: 'Ex', config: { shared_token: 'sharedtoken1' } },
    })
  ).body;
  const provider = providerRowFrom((await core.db.get('SELECT * FROM providers WHERE id = ?', [ex.id]))!);
  const valid = { type: 'thing_happened', payload: { name: 'door' } };
  const webhook = { ip: '192.0.2.7', excerpt: '{}', replayKey: { key: 'delivery:same', ttlSeconds: 3600 } };

  // Two writes of the same key, as when two deliveries of one id pass the plugin's check together.
  const [a, b] = await Promise.allSettled([
    relay.ingestWith(provider, valid, { webhook }),
    relay.ingestWith(provider, valid, { webhook }),
  ]);
  t.equal([a, b].filter((r) => r.status === 'fulfilled').length, 1, 'one is written');
  const refused = [a, b].find((r) => r.status === 'rejected') as PromiseRejectedResult;
  t.equal(refused?.reason?.name, 'ReplayedError', 'the other is refused by the unique key');
  t.equal(
    await count(s, `SELECT COUNT(*) AS n FROM event_log WHERE provider_id = ? AND replay_key = 'delivery:same'`, [
      ex.id,
    ]),
    1,
  );
  t.equal(
    await count(s, 'SELECT COUNT(*) AS n FROM event_log WHERE provider_id = ?', [ex.id]),
    1,
    'no second event row',
  );

  // Expired: the key is let go and the new event takes it.
  await core.db.run(`UPDATE event_log SET replay_expires_at = ? WHERE replay_key = 'delivery:same'`, [
    new Date(Date.now() - 1000).toISOString(),
  ]);
  const again = await relay.ingestWith(provider, valid, { webhook });
  t.equal(again.eventIds.length, 1, 'an expired key does not refuse a new delivery');
  t.equal(
    await count(s, `SELECT COUNT(*) AS n FROM event_log WHERE replay_key = 'delivery:same'`),
    1,
    'the key moved to the new event',
  );

  // Retention shorter than the key's life: the event goes, the key stays readable.
  const d = push(2);
  const r = await s.request('POST', c.hook, { raw: d.raw, headers: d.headers });
  t.equal(r.status, 202);
  await sink.waitFor(1);
  await relay.tick();
  const old = new Date(Date.now() - 2 * 86_400_000).toISOString();
  await core.db.run(`UPDATE event_log SET created_at = ?, dispatch_status = 'dispatched' WHERE id = ?`, [
    old,
    r.body.event_ids[0],
  ]);
  await applyRetention(core);
  t.equal(
    await count(s, 'SELECT COUNT(*) AS n FROM event_log WHERE id = ?', [r.body.event_ids[0]]),
    0,
    'the old event is gone',
  );
  const replayed = await s.request('POST', c.hook, { raw: d.raw, headers: d.headers });
  t.equal(replayed.status, 409, 'its delivery id is still refused');
});
