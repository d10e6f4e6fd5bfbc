/**
 * End to end through the real service: `POST /api/targets/{id}/test` for two target kinds, the
 * send-failure metric's status codes, and which failures feed the bridge_self target counter
 * (5xx and network failures do; a rejected credential does not).
 */

import http from 'node:http';
import t from 'tap';
import { ChatWebhookSink } from '../../plugins/target-chat-webhook/test/fakes/chat-webhook-sink.ts';
import { FakeHomeserver } from '../../plugins/target-matrix/test/fakes/matrix.ts';
import { startService, startSink } from '../helpers/service.ts';
import { create, metric, plugins, selfTarget } from './support.ts';
import { pipeline } from './targets-support.ts';

const ROOM = '!ops:example.org';

/** A loopback port nothing listens on (connections are refused). */
async function closedPort(): Promise<number> {
  const srv = http.createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address() as { port: number };
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

const failures = (s: Parameters<typeof metric>[0], kind: string, code: string) =>
  metric(s, 'service_target_send_failures_total', `{target_type="${kind}",status_code="${code}"}`);

t.test('POST /api/targets/{id}/test: ok for a working target, ok false with the reason otherwise', async (t) => {
  const chat = await new ChatWebhookSink().start();
  const hs = await new FakeHomeserver().start();
  hs.addUser('@herald:example.org', 'syt_good_token', [ROOM]);
  const s = await startService({ SERVICE_PLUGINS: plugins('@herald/target-chat-webhook', '@herald/target-matrix') });
  t.teardown(async () => {
    await s.stop();
    await chat.close();
    await hs.close();
  });
  const test = async (id: string) => s.request('POST', `/api/targets/${id}/test`, { token: s.admin.token });

  const slack = await create(s, '/api/targets', {
    kind: 'chat_webhook',
    name: 'Slack',
    locale: 'en',
    config: { format: 'slack', url: chat.url('slack') },
  });
  const ok = await test(slack.id);
  t.equal(ok.status, 200);
  t.equal(ok.body.ok, true);
  t.equal(chat.received.length, 1, 'a test message was posted');
  t.match(chat.received[0].body.text, /Herald|test/i);

  const room = await create(s, '/api/targets', {
    kind: 'matrix',
    name: 'Room',
    locale: 'ru',
    config: { homeserver_url: hs.url, access_token: 'syt_good_token', room_id: ROOM },
  });
  const mx = await test(room.id);
  t.equal(mx.body.ok, true);
  t.equal(hs.events.length, 1);
  t.equal(hs.events[0].content.msgtype, 'm.notice');

  const revoked = await create(s, '/api/targets', {
    kind: 'matrix',
    name: 'Revoked',
    locale: 'en',
    config: { homeserver_url: hs.url, access_token: 'syt_revoked', room_id: ROOM },
  });
  const bad = await test(revoked.id);
  t.equal(bad.status, 200, 'a failed test is still a successful request');
  t.equal(bad.body.ok, false);
  t.match(bad.body.detail, /^The credential was rejected: .*M_UNKNOWN_TOKEN/);
  t.equal(bad.body.status_code, 401);
  t.notMatch(bad.text, /syt_revoked/, 'no token in the answer');

  const gone = await create(s, '/api/targets', {
    kind: 'chat_webhook',
    name: 'Gone',
    locale: 'en',
    config: { format: 'slack', url: chat.url('slack', 'unknown') },
  });
  const g = await test(gone.id);
  t.same({ ok: g.body.ok, status_code: g.body.status_code }, { ok: false, status_code: 404 });
  t.match(g.body.detail, /no_service/);
  t.equal(hs.events.length, 1, 'nothing posted by the failing tests');
});

t.test(
  'send failures: the metric carries the HTTP status (0 when refused); 5xx and network failures raise ' +
    'bridge_self, a rejected credential does not',
  async (t) => {
    const chat = await new ChatWebhookSink().start();
    const ops = await startSink();
    const s = await startService({ SERVICE_PLUGINS: plugins('herald-plugin-example', '@herald/target-chat-webhook') });
    t.teardown(async () => {
      await s.stop();
      await chat.close();
      await ops.close();
    });
    await selfTarget(s, ops.url);
    const lowered = await s.request('PATCH', '/api/self-monitoring', {
      token: s.admin.token,
      body: { target_failure_threshold: 2 },
    });
    t.equal(lowered.body.target_failure_threshold, 2);
    const counter = async (id: string) =>
      Number((await s.request('GET', `/api/targets/${id}`, { token: s.admin.token })).body.consecutive_failures);
    const raised = () =>
      ops.received.filter((r) => r.body.eventType === 'bridge_self_target_failures').map((r) => r.body.title as string);

    // A credential the service rejects: permanent, counted in the metric under its status, never in the self counter.
    const rejected = await pipeline(s, {
      kind: 'chat_webhook',
      name: 'Rejected',
      config: { format: 'discord', url: chat.url('discord', 'bad-token') },
    });
    for (const n of ['a', 'b', 'c']) await rejected.fire(n);
    await rejected.tick();
    t.equal(await failures(s, 'chat_webhook', '401'), 3, 'three sends answered 401');
    t.equal(await counter(rejected.target.id), 0, 'rejected credentials are not counted');
    t.same(raised(), [], 'and raise nothing');

    // 5xx: retryable, counted.
    const flaky = await pipeline(s, {
      kind: 'chat_webhook',
      name: 'Flaky',
      config: { format: 'mattermost', url: chat.url('mattermost') },
    });
    chat.failNext = 503;
    await flaky.fire('x');
    await flaky.tick();
    t.equal(await failures(s, 'chat_webhook', '503'), 1);
    t.equal(await counter(flaky.target.id), 1, 'a 5xx is counted');
    t.same(raised(), [], 'below the threshold');

    // Connection refused: status 0, counted; the second consecutive failure reaches the threshold.
    const port = await closedPort();
    const down = await pipeline(s, {
      kind: 'chat_webhook',
      name: 'Down',
      config: { format: 'mattermost', url: `http://127.0.0.1:${port}/hooks/abcdefghijklmnopqrstuvwxyz` },
    });
    await down.fire('one');
    await down.fire('two');
    await down.tick();
    t.equal(await failures(s, 'chat_webhook', '0'), 2, 'no HTTP answer: status_code 0');
    t.same(raised(), ['Target unreachable: Down'], 'bridge_self_target_failures at the lowered threshold');
    const alert = ops.received.find((r) => r.body.eventType === 'bridge_self_target_failures')!.body;
    t.match(alert.plainBody, /unreachable|refused|ECONNREFUSED/i, 'the alert says why');
    t.equal(await counter(down.target.id), 0, 'the counter resets after the alert');
    t.equal(await counter(flaky.target.id), 1, 'other targets keep their own count');

    // A success resets a target's count.
    await flaky.fire('y');
    await flaky.tick();
    t.equal(await counter(flaky.target.id), 0);
  },
);
