/**
 * Debian's `prometheus-alertmanager`, a real process on loopback, notifies the generic webhook
 * provider of a real service: its webhook receiver points at the provider's hook URL with the
 * bearer secret, an alert posted to Alertmanager's API v2 fires, and posting it again with an
 * `endsAt` in the past resolves it. Short group_wait and group_interval keep this to seconds.
 */

import { writeFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { ensureBinary, freePort, getJson, scratch, startPeer, waitFor } from '../helpers/peers.ts';
import { startService, startSink } from '../helpers/service.ts';
import { chain, eventRows, payloadLog, plugins, recorder, relayOf } from './support.ts';

const SECRET = 'alertmanager-bearer-secret-012345';
// The mapping the provider's README suggests for Alertmanager.
const MAPPING = {
  title: '{{commonLabels.alertname}} ({{status}})',
  body: 'commonAnnotations.summary || commonAnnotations.description',
  severity: 'commonLabels.severity',
  severity_map: { page: 'critical', ticket: 'warning' },
  event_key: 'groupKey',
};

function config(hookUrl: string): string {
  return [
    'route:',
    '  receiver: herald',
    "  group_by: ['alertname']",
    '  group_wait: 100ms',
    '  group_interval: 1s',
    '  repeat_interval: 1h',
    'receivers:',
    '  - name: herald',
    '    webhook_configs:',
    `      - url: '${hookUrl}'`,
    '        send_resolved: true',
    '        http_config:',
    '          authorization:',
    '            type: Bearer',
    `            credentials: '${SECRET}'`,
    '',
  ].join('\n');
}

t.test('alertmanager: a firing alert and its resolution reach the target through the generic webhook', async (t) => {
  const bin = ensureBinary('/usr/bin/prometheus-alertmanager');
  const s = await startService({ SERVICE_PLUGINS: plugins('@herald/provider-webhook') });
  const sink = await startSink();
  const tmp = scratch('alertmanager');
  let am: ReturnType<typeof startPeer> | undefined;
  t.teardown(async () => {
    await am?.stop();
    tmp.cleanup();
    await s.stop();
    await sink.close();
  });
  const target = await recorder(s, sink.url);
  const { provider, hook } = await chain(s, {
    provider: {
      kind: 'webhook',
      name: 'Alertmanager',
      auth_mode: 'bearer',
      config: { secret: SECRET, mapping: MAPPING },
    },
    target,
  });

  const file = path.join(tmp.dir, 'alertmanager.yml');
  writeFileSync(file, config(new URL(hook, s.url).toString()));
  const port = await freePort();
  const api = `http://127.0.0.1:${port}`;
  am = startPeer(bin, [
    `--config.file=${file}`,
    `--storage.path=${path.join(tmp.dir, 'data')}`,
    `--web.listen-address=127.0.0.1:${port}`,
    // No cluster gossip: nothing listens beyond the one loopback port.
    '--cluster.listen-address=',
    '--log.level=debug',
  ]);
  await waitFor(
    'alertmanager to be ready',
    async () => (await fetch(`${api}/-/ready`, { signal: AbortSignal.timeout(1000) })).ok,
    15_000,
    am,
  );

  const alert = (endsAt: Date) => [
    {
      labels: { alertname: 'DiskFull', severity: 'page', instance: 'nas:9100' },
      annotations: { summary: 'sda1 at 97% on nas' },
      startsAt: new Date(Date.now() - 60_000).toISOString(),
      endsAt: endsAt.toISOString(),
      generatorURL: 'http://127.0.0.1:9090/graph',
    },
  ];
  const post = async (body: unknown) => {
    const r = await fetch(`${api}/api/v2/alerts`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    t.equal(r.status, 200, `alertmanager took the alert: ${await r.text()}`);
  };

  await post(alert(new Date(Date.now() + 3_600_000)));
  const firing = await waitFor('the firing notification', async () => (await eventRows(s, provider.id))[0], 15_000, am);
  t.match(
    firing.payload,
    { title: 'DiskFull (firing)', body: 'sda1 at 97% on nas', severity: 'critical', fields: { severity: 'page' } },
    'mapped from the firing notification',
  );
  const groups = await getJson(`${api}/api/v2/alerts/groups`);
  t.equal(groups?.[0]?.alerts?.[0]?.status?.state, 'active', 'alertmanager holds the alert as active');

  await post(alert(new Date(Date.now() - 1000)));
  const rows = await waitFor(
    'the resolved notification',
    async () => {
      const r = await eventRows(s, provider.id);
      return r.length >= 2 ? r : undefined;
    },
    15_000,
    am,
  );
  t.equal(rows.length, 2, 'one notification each for firing and resolved');
  t.match(
    rows[1]!.payload,
    { title: 'DiskFull (resolved)', severity: 'critical' },
    'mapped from the resolved notification',
  );
  t.equal(rows[1]!.payload.event_key, firing.payload.event_key, 'both carry the same group key');
  t.match(firing.payload.event_key, /alertname="DiskFull"/);

  t.same(
    (await payloadLog(s, provider.id)).map((e) => e.status_code),
    [202, 202],
    'Alertmanager was answered 202 both times',
  );
  await relayOf(s).tick();
  t.same(
    sink.received.map((r) => r.body.title),
    ['DiskFull (firing)', 'DiskFull (resolved)'],
    'both reach the target',
  );
  t.equal(sink.received[0].body.severity, 'critical');
  t.match(sink.received[1].body.plainBody, /^sda1 at 97% on nas\n\nSource: 127\.0\.0\.1/);
  t.notMatch(
    am.output(),
    /status code [45]\d\d|Notify for alerts failed/,
    'alertmanager logged no failed notification',
  );
});
