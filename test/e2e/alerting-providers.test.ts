/**
 * The alerting providers end to end through a real service: Debian's real `prometheus-alertmanager`
 * delivers a firing alert and then its resolution to the `alertmanager` provider with a bearer
 * token; Grafana's and Uptime Kuma's documented payloads are posted as those services send them
 * (Grafana signed with its HMAC and timestamp, Uptime Kuma as JSON and as multipart/form-data). In
 * each case the Discord-format chat webhook posts one message for the first state and **edits**
 * it (PATCH) for the second, while a recorder target shows the exact rendered text.
 */

import crypto from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import t, { type Test } from 'tap';
import amTruncated from '../../plugins/provider-alertmanager/test/fixtures/truncated.json' with { type: 'json' };
import grafanaFiring from '../../plugins/provider-grafana/test/fixtures/firing.json' with { type: 'json' };
import grafanaResolved from '../../plugins/provider-grafana/test/fixtures/resolved.json' with { type: 'json' };
import kumaDown from '../../plugins/provider-uptime-kuma/test/fixtures/down.json' with { type: 'json' };
import kumaTest from '../../plugins/provider-uptime-kuma/test/fixtures/test.json' with { type: 'json' };
import kumaUp from '../../plugins/provider-uptime-kuma/test/fixtures/up.json' with { type: 'json' };
import { ChatWebhookSink } from '../../plugins/target-chat-webhook/test/fakes/chat-webhook-sink.ts';
import { ensureBinary, freePort, scratch, startPeer, waitFor } from '../helpers/peers.ts';
import { startService, startSink, type TestService } from '../helpers/service.ts';
import { create, event, eventRows, link, payloadLog, plugins, recorder, relayOf } from './support.ts';

const ENV = {
  SERVICE_PLUGINS: plugins(
    '@herald/provider-alertmanager',
    '@herald/provider-grafana',
    '@herald/provider-uptime-kuma',
    '@herald/target-chat-webhook',
  ),
};
const JSON_TYPE = { 'content-type': 'application/json' };

interface Setup {
  s: TestService;
  sink: ChatWebhookSink;
  rec: Awaited<ReturnType<typeof startSink>>;
  provider: any;
  hook: string;
  url: string;
}

/**
 * A service with one provider of `kind` whose tracker feeds a Discord webhook and an English and a Russian recorder.
 */
async function setup(t: Test, kind: string, config: Record<string, unknown>): Promise<Setup> {
  const s = await startService(ENV);
  const sink = await new ChatWebhookSink().start();
  const rec = await startSink();
  t.teardown(async () => {
    await s.stop();
    await sink.close();
    await rec.close();
  });
  const discord = await create(s, '/api/targets', {
    kind: 'chat_webhook',
    name: 'Discord',
    locale: 'en',
    config: { format: 'discord', url: sink.url('discord') },
  });
  const en = await recorder(s, `${rec.url}en`, 'Rec');
  const ru = await recorder(s, `${rec.url}ru`, 'RecRu', 'ru');
  const provider = await create(s, '/api/providers', { kind, name: kind, config });
  t.equal(provider.status, 'running', `${kind} runs: ${provider.status_detail ?? ''}`);
  const tracker = await create(s, '/api/trackers', { provider_id: provider.id, name: `${kind} tracker` });
  for (const target of [discord, en, ru]) await link(s, tracker.id, target.id);
  const url = provider.webhook_url as string;
  return { s, sink, rec, provider, hook: new URL(url).pathname, url: new URL(new URL(url).pathname, s.url).toString() };
}

/** The Discord requests received since `from`. */
const discordSince = (sink: ChatWebhookSink, from: number) =>
  sink.received.slice(from).filter((r) => r.format === 'discord');
/** The recorder's messages in one language, as the pipeline rendered them. */
const recorded = (rec: Setup['rec'], lang: 'en' | 'ru') =>
  rec.received.filter((r) => r.headers['idempotency-key'] && r.body.locale === lang).map((r) => r.body);
const modes = (ev: any) => Object.fromEntries(ev.deliveries.map((d: any) => [d.target_name, d.send_mode]));

/**
 * "Send a test event" of each of the provider's types: the plugin's example payload rendered by its
 * default templates in both languages, every placeholder filled.
 */
async function testEvents(t: Test, x: Setup, types: Record<string, string>): Promise<void> {
  for (const [type, title] of Object.entries(types)) {
    const r = await x.s.request('POST', `/api/providers/${x.provider.id}/test-event`, {
      token: x.s.admin.token,
      body: { event_type: type },
    });
    t.ok(r.status < 300, `test event ${type}: ${r.text}`);
    await relayOf(x.s).tick();
    const en = recorded(x.rec, 'en').at(-1);
    const ru = recorded(x.rec, 'ru').at(-1);
    t.equal(en.eventType, type);
    t.ok(en.plainTitle.includes(title), `${type}: "${en.plainTitle}" shows "${title}"`);
    for (const m of [en, ru])
      t.notMatch(
        `${m.plainTitle}\n${m.plainBody}`,
        /\{\{|\}\}|undefined/,
        `${type} (${m.locale}) has no unfilled placeholder`,
      );
    t.match(ru.plainTitle + ru.plainBody, /[а-яё]/i, `${type} in Russian`);
  }
}

t.test('alertmanager: a real Alertmanager fires then resolves one alert; the Discord message is edited', async (t) => {
  const SECRET = 'alertmanager-e2e-bearer-0123456789';
  const bin = ensureBinary('/usr/bin/prometheus-alertmanager');
  const x = await setup(t, 'alertmanager', { auth: 'bearer', secret: SECRET });
  const tmp = scratch('alertmanager-provider');
  let am: ReturnType<typeof startPeer> | undefined;
  t.teardown(async () => {
    await am?.stop();
    tmp.cleanup();
  });

  const file = path.join(tmp.dir, 'alertmanager.yml');
  writeFileSync(
    file,
    [
      'route:',
      '  receiver: herald',
      "  group_by: ['alertname']",
      '  group_wait: 100ms',
      '  group_interval: 1s',
      '  repeat_interval: 1h',
      'receivers:',
      '  - name: herald',
      '    webhook_configs:',
      `      - url: '${x.url}'`,
      '        send_resolved: true',
      '        http_config:',
      '          authorization:',
      `            credentials: '${SECRET}'`,
      '',
    ].join('\n'),
  );
  const port = await freePort();
  const api = `http://127.0.0.1:${port}`;
  am = startPeer(bin, [
    `--config.file=${file}`,
    `--storage.path=${path.join(tmp.dir, 'data')}`,
    `--web.listen-address=127.0.0.1:${port}`,
    '--cluster.listen-address=',
    '--log.level=debug',
  ]);
  await waitFor(
    'alertmanager to be ready',
    async () => (await fetch(`${api}/-/ready`, { signal: AbortSignal.timeout(1000) })).ok,
    15_000,
    am,
  );

  const startsAt = new Date(Date.now() - 60_000);
  const alert = (endsAt: Date) => [
    {
      labels: { alertname: 'DiskFull', severity: 'critical', instance: 'nas:9100', mountpoint: '/data' },
      annotations: { summary: 'Disk /data almost full on nas', description: 'Filesystem /data has 3% space left.' },
      startsAt: startsAt.toISOString(),
      endsAt: endsAt.toISOString(),
      generatorURL: 'http://127.0.0.1:9090/graph?g0.expr=disk',
    },
  ];
  const post = async (body: unknown) => {
    const r = await fetch(`${api}/api/v2/alerts`, { method: 'POST', headers: JSON_TYPE, body: JSON.stringify(body) });
    t.equal(r.status, 200, `alertmanager took the alert: ${await r.text()}`);
  };

  await post(alert(new Date(Date.now() + 3_600_000)));
  const [firing] = await waitFor(
    'the firing notification',
    async () => {
      const r = await eventRows(x.s, x.provider.id);
      return r.length ? r : undefined;
    },
    15_000,
    am,
  );
  t.equal(firing!.event_type, 'alert_firing');
  t.match(firing!.payload, {
    status: 'firing',
    alertname: 'DiskFull',
    title: 'Disk /data almost full on nas',
    severity_label: 'critical',
    url: 'http://127.0.0.1:9090/graph?g0.expr=disk',
    receiver: 'herald',
  });
  t.match(firing!.payload.fingerprint, /^[0-9a-f]{16}$/, "Alertmanager's own fingerprint");
  t.equal(firing!.payload.correlation_key, firing!.payload.fingerprint);
  t.equal((await event(x.s, firing!.id)).severity, 'critical', 'severity from the label');
  await relayOf(x.s).tick();
  const posted = discordSince(x.sink, 0);
  t.equal(posted.length, 1);
  t.equal(posted[0]!.method, 'POST');
  const messageId = [...x.sink.discordMessages.keys()][0]!;
  t.equal(x.sink.discordMessages.get(messageId)!.embeds[0].title, '🔥 Firing: Disk /data almost full on nas');
  const [enFiring] = recorded(x.rec, 'en');
  t.equal(enFiring.plainTitle, '🔥 Firing: Disk /data almost full on nas');
  t.equal(
    enFiring.plainBody,
    `Filesystem /data has 3% space left.\n\nFiring since ${startsAt.toISOString().slice(0, 16).replace('T', ' ')} ` +
      `UTC, severity critical.\nLabels: instance=nas:9100, mountpoint=/data, severity=critical`,
  );
  t.equal(enFiring.url, 'http://127.0.0.1:9090/graph?g0.expr=disk');
  t.equal(recorded(x.rec, 'ru')[0].plainTitle, '🔥 Тревога: Disk /data almost full on nas');

  await post(alert(new Date(Date.now() - 1000)));
  const rows = await waitFor(
    'the resolved notification',
    async () => {
      const r = await eventRows(x.s, x.provider.id);
      return r.length >= 2 ? r : undefined;
    },
    15_000,
    am,
  );
  t.equal(rows.length, 2, 'one event for the firing, one for the resolution');
  t.equal(rows[1]!.event_type, 'alert_resolved');
  t.equal(rows[1]!.payload.correlation_key, firing!.payload.correlation_key, 'the same key');
  await relayOf(x.s).tick();
  const after = discordSince(x.sink, posted.length);
  t.equal(after.length, 1, 'one more Discord request');
  t.equal(after[0]!.method, 'PATCH', 'the resolution edits the message');
  t.equal(after[0]!.path.split('/').at(-1), messageId, "the firing alert's message");
  t.equal(x.sink.discordMessages.size, 1, 'still one message');
  t.equal(x.sink.discordMessages.get(messageId)!.embeds[0].title, '✅ Resolved: Disk /data almost full on nas');
  t.same(
    modes(await event(x.s, rows[1]!.id)),
    { Discord: 'edit', Rec: 'send', RecRu: 'send' },
    'edited where the target can',
  );
  t.match(
    recorded(x.rec, 'en')[1].plainBody,
    /^Filesystem \/data has 3% space left\.\n\nResolved at \d{4}-\d\d-\d\d \d\d:\d\d UTC after \d+ min\.\nLabels: /,
  );
  t.equal(recorded(x.rec, 'ru')[1].plainTitle, '✅ Устранено: Disk /data almost full on nas');
  t.same(
    (await payloadLog(x.s, x.provider.id)).map((e) => e.status_code),
    [202, 202],
    'Alertmanager was answered 202 both times',
  );
  t.notMatch(
    am.output(),
    /status code [45]\d\d|Notify for alerts failed/,
    'alertmanager logged no failed notification',
  );

  // What Alertmanager's max_alerts leaves out is said in the last message; a wrong token gets 401.
  const trunc = await x.s.request('POST', x.hook, {
    raw: JSON.stringify(amTruncated),
    headers: { ...JSON_TYPE, authorization: `Bearer ${SECRET}` },
  });
  t.equal(trunc.status, 202, trunc.text);
  t.equal(trunc.body.event_ids.length, 2);
  await relayOf(x.s).tick();
  t.match(recorded(x.rec, 'en').at(-1).plainBody, /\n\n…and 7 more alerts not sent by Alertmanager \(max_alerts\)\.$/);
  t.match(
    recorded(x.rec, 'ru').at(-1).plainBody,
    /\n\n…и ещё оповещений, которые Alertmanager не отправил \(max_alerts\): 7\.$/,
  );
  t.equal(
    (
      await x.s.request('POST', x.hook, {
        raw: JSON.stringify(amTruncated),
        headers: { ...JSON_TYPE, authorization: 'Bearer not-the-right-token-0123' },
      })
    ).status,
    401,
  );
  t.equal(
    (
      await x.s.request('POST', x.hook, {
        raw: '{"alerts": "none"}',
        headers: { ...JSON_TYPE, authorization: `Bearer ${SECRET}` },
      })
    ).status,
    422,
  );
  await testEvents(t, x, {
    alert_firing: '🔥 Firing: Disk /data almost full on nas',
    alert_resolved: '✅ Resolved: Disk /data almost full on nas',
  });
});

t.test('grafana: a signed firing notification, then its signed resolution edits the message', async (t) => {
  const SECRET = 'grafana-e2e-hmac-secret-0123456789';
  const TS = 'X-Grafana-Alerting-Signature-Timestamp';
  const x = await setup(t, 'grafana', { auth: 'hmac', secret: SECRET, timestamp_header: TS });
  const signed = (body: unknown, secret = SECRET, ageSeconds = 0) => {
    const raw = JSON.stringify(body);
    const ts = String(Math.floor(Date.now() / 1000) - ageSeconds);
    const signature = crypto.createHmac('sha256', secret).update(`${ts}:${raw}`).digest('hex');
    return {
      raw,
      headers: {
        ...JSON_TYPE,
        'user-agent': 'Grafana',
        'x-grafana-alerting-signature': signature,
        [TS.toLowerCase()]: ts,
      },
    };
  };

  const fired = await x.s.request('POST', x.hook, signed(grafanaFiring));
  t.equal(fired.status, 202, fired.text);
  t.equal(fired.body.event_ids.length, 2, 'one event per alert');
  await relayOf(x.s).tick();
  // The two alerts' posts go out together, so they may arrive in either order.
  t.same([...x.sink.discordMessages.values()].map((m) => m.embeds[0].title).sort(), [
    '🔥 Firing: This alert was triggered for zone eu-1',
    '🔥 Firing: This alert was triggered for zone us-1',
  ]);
  const memoryMessage = [...x.sink.discordMessages].find(([, m]) => m.embeds[0].title.endsWith('zone us-1'))![0];
  const first = recorded(x.rec, 'en').find((m: { plainTitle: string }) => m.plainTitle.endsWith('zone us-1'));
  t.equal(first.severity, 'critical');
  t.equal(first.url, 'https://grafana.example.net/alerting/grafana/1afz29v7z/view?orgId=1');
  t.match(
    first.plainBody,
    new RegExp(
      /^The system has high memory usage\n\nFiring since 2026-01-12 07:51 UTC, severity critical\.\nValues: /.source +
        /B=44\.2394, C=1\nLabels: severity=critical, team=blue, zone=us-1\nFolder: Infrastructure\nDashboard: /.source +
        /https:\/\/grafana\.example\.net\/d\/mem01\?orgId=1\n/.source,
    ),
  );

  const before = x.sink.received.length;
  const done = await x.s.request('POST', x.hook, signed(grafanaResolved));
  t.equal(done.status, 202, done.text);
  await relayOf(x.s).tick();
  const after = discordSince(x.sink, before);
  t.equal(after.length, 1);
  t.equal(after[0]!.method, 'PATCH');
  t.equal(after[0]!.path.split('/').at(-1), memoryMessage, "the memory alert's message, not the CPU one");
  t.equal(
    x.sink.discordMessages.get(memoryMessage)!.embeds[0].title,
    '✅ Resolved: This alert was triggered for zone us-1',
  );
  t.equal(x.sink.discordMessages.size, 2);
  t.same(modes(await event(x.s, done.body.event_ids[0])), { Discord: 'edit', Rec: 'send', RecRu: 'send' });
  t.equal(recorded(x.rec, 'ru').at(-1).plainTitle, '✅ Устранено: This alert was triggered for zone us-1');

  const bad = signed(grafanaResolved, 'another-secret-0123456789abcdef');
  t.equal((await x.s.request('POST', x.hook, bad)).status, 401, 'a wrong signature');
  // two minutes old: within the window, and not the request sent above
  const replay = signed(grafanaFiring, SECRET, 120);
  t.equal((await x.s.request('POST', x.hook, replay)).status, 202);
  t.equal((await x.s.request('POST', x.hook, replay)).status, 409, 'the same signed request again');
  await testEvents(t, x, { grafana_alert_firing: '🔥 Firing: ', grafana_alert_resolved: '✅ Resolved: ' });
});

t.test('uptime kuma: down as JSON, then up as multipart/form-data edits the message; the test arrives', async (t) => {
  const SECRET = 'uptime-kuma-e2e-token-0123456789';
  const x = await setup(t, 'uptime_kuma', { auth: 'bearer', secret: SECRET });
  const auth = { authorization: `Bearer ${SECRET}` };

  const down = await x.s.request('POST', x.hook, { raw: JSON.stringify(kumaDown), headers: { ...JSON_TYPE, ...auth } });
  t.equal(down.status, 202, down.text);
  await relayOf(x.s).tick();
  const [messageId] = [...x.sink.discordMessages.keys()];
  t.equal(x.sink.discordMessages.get(messageId!)!.embeds[0].title, '🔴 Down: Website');
  t.equal(
    recorded(x.rec, 'en')[0].plainBody,
    'timeout of 48000ms exceeded\nChecked: https://www.example.net/\nDown since 2026-01-02 10:04:05 (Europe/Berlin).',
  );
  t.equal(recorded(x.rec, 'en')[0].severity, 'critical');

  const boundary = '--------------------------918273645546372819283746';
  const form =
    `--${boundary}\r\nContent-Disposition: form-data; ` +
    `name="data"\r\n\r\n${JSON.stringify(kumaUp)}\r\n--${boundary}--\r\n`;
  const before = x.sink.received.length;
  const up = await x.s.request('POST', x.hook, {
    raw: form,
    headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, ...auth },
  });
  t.equal(up.status, 202, up.text);
  await relayOf(x.s).tick();
  const after = discordSince(x.sink, before);
  t.equal(after.length, 1);
  t.equal(after[0]!.method, 'PATCH', 'up edits the down message');
  t.equal(after[0]!.path.split('/').at(-1), messageId);
  t.equal(x.sink.discordMessages.get(messageId!)!.embeds[0].title, '✅ Up: Website');
  t.same(modes(await event(x.s, up.body.event_ids[0])), { Discord: 'edit', Rec: 'send', RecRu: 'send' });
  t.equal(
    recorded(x.rec, 'en')[1].plainBody,
    '200 - OK\nChecked: https://www.example.net/\nUp since 2026-01-02 10:16:05 (Europe/Berlin), after 12 min ' +
      'down.\nResponse time: 182 ms',
  );
  t.equal(recorded(x.rec, 'ru')[1].plainTitle, '✅ Снова доступен: Website');

  const test = await x.s.request('POST', x.hook, { raw: JSON.stringify(kumaTest), headers: { ...JSON_TYPE, ...auth } });
  t.equal(test.status, 202);
  await relayOf(x.s).tick();
  t.equal(x.sink.discordMessages.size, 2, 'the test is a message of its own');
  t.equal(recorded(x.rec, 'en').at(-1).plainTitle, '🧪 Uptime Kuma: test notification');
  t.equal(
    (await x.s.request('POST', x.hook, { raw: JSON.stringify(kumaDown), headers: JSON_TYPE })).status,
    401,
    'no token',
  );
  t.equal(
    (
      await x.s.request('POST', x.hook, {
        raw: JSON.stringify({ heartbeat: { status: 9 }, monitor: { id: 1 } }),
        headers: { ...JSON_TYPE, ...auth },
      })
    ).status,
    422,
  );
  await testEvents(t, x, {
    monitor_down: '🔴 Down: Website',
    monitor_up: '✅ Up: Website',
    monitor_pending: '🟡 Pending: Website',
    monitor_maintenance: '🔧 Maintenance: Website',
    monitor_test: '🧪 Uptime Kuma: test notification',
    monitor_notice: '⚠️ Uptime Kuma: notice',
  });
});
