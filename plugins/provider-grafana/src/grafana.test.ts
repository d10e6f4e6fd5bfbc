import { createHmac } from 'node:crypto';
import type { InboundWebhook } from '@herald/plugin-api';
import { missingLocaleStrings } from '@herald/plugin-api';
import { checkConfig, checkEvent, createTestHost, FakeClock } from '@herald/plugin-api/testing';
import t from 'tap';
import firing from '../test/fixtures/firing.json' with { type: 'json' };
import resolved from '../test/fixtures/resolved.json' with { type: 'json' };
import testNotification from '../test/fixtures/test-notification.json' with { type: 'json' };
import { correlationKey, MAX_ALERTS, severityOf, valuesText } from './alerts.ts';
import plugin from './index.ts';

const SECRET = 'grafana-shared-secret-0123456789';
const NOW = '2026-01-12T08:00:00Z';
const NOW_S = Date.parse(NOW) / 1000;

function req(body: unknown, headers: Record<string, string> = {}, raw?: string): InboundWebhook {
  const rawBody = Buffer.from(raw ?? JSON.stringify(body));
  let parsed: unknown;
  try {
    parsed = JSON.parse(rawBody.toString('utf8'));
  } catch {
    parsed = undefined;
  }
  return {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'user-agent': 'Grafana', ...headers },
    rawBody,
    body: parsed,
    query: {},
    ip: '127.0.0.1',
  };
}
const hmac = (data: string, secret = SECRET) => createHmac('sha256', secret).update(data).digest('hex');
const bearer = (s = SECRET) => ({ authorization: `Bearer ${s}` });
const rej = (status: number, message?: RegExp) => ({
  code: 'WEBHOOK_REJECTED',
  status,
  ...(message ? { message } : {}),
});
const headersOnly = (headers: Record<string, string>) => ({ method: 'POST', headers, query: {}, ip: '127.0.0.1' });

async function provider(config: Record<string, unknown> = { secret: SECRET }) {
  return (await createTestHost({ clock: new FakeClock(NOW) }).provider(plugin, config)).instance;
}

t.test(
  'manifest: webhook ingest, correlated event types with valid examples, templates and locales in both languages',
  async (t) => {
    const m = plugin.manifest;
    t.equal(m.id, 'grafana');
    t.equal(m.ingest, 'webhook');
    t.same(m.webhook, { rateLimitPerMinute: 240, maxBodyBytes: 1024 * 1024 });
    t.same(Object.keys(m.events!), ['grafana_alert_firing', 'grafana_alert_resolved']);
    for (const [type, spec] of Object.entries(m.events!)) {
      t.same(spec.correlation, { key: ['correlation_key'], thread: 'alert' });
      t.doesNotThrow(() => checkEvent(plugin, { type, payload: spec.example! }), `${type} example matches its schema`);
      for (const l of ['en', 'ru'] as const) t.ok(m.templates![l]![type], `${type} has a ${l} template`);
    }
    t.match(m.templates!.en!.grafana_alert_firing!.title, /^🔥 Firing: /);
    t.match(m.templates!.en!.grafana_alert_resolved!.title, /^✅ Resolved: /);
    t.match(m.templates!.ru!.grafana_alert_firing!.title, /^🔥 Тревога: /);
    t.match(m.templates!.ru!.grafana_alert_resolved!.title, /^✅ Устранено: /);
    t.same(missingLocaleStrings(m, 'en'), []);
    t.same(missingLocaleStrings(m, 'ru'), []);
    t.notOk('auth_mode' in m.configSchema.properties);
  },
);

t.test("a firing notification becomes one event per alert with Grafana's links and values", async (t) => {
  const g = await provider();
  const [a, b] = (await g.handleWebhook!(req(firing, bearer()))).events;
  t.equal(a!.type, 'grafana_alert_firing');
  t.equal(a!.severity, 'critical');
  t.match(a!.payload, {
    status: 'firing',
    alertname: 'High memory usage',
    title: 'This alert was triggered for zone us-1',
    description: 'The system has high memory usage',
    severity_label: 'critical',
    folder: 'Infrastructure',
    labels_text: 'severity=critical, team=blue, zone=us-1',
    values: { B: 44.23943737541908, C: 1 },
    values_text: 'B=44.2394, C=1',
    starts_at: '2026-01-12T09:51:03.157076+02:00',
    started: '2026-01-12 07:51 UTC',
    ends_at: '',
    ended: '',
    url: 'https://grafana.example.net/alerting/grafana/1afz29v7z/view?orgId=1',
    dashboard_url: 'https://grafana.example.net/d/mem01?orgId=1',
    panel_url: 'https://grafana.example.net/d/mem01?orgId=1&viewPanel=2',
    runbook_url: 'https://myrunbook.com/runbook/1234',
    fingerprint: 'c6eadffa33fcdf37',
    correlation_key: 'c6eadffa33fcdf37',
    receiver: 'Herald',
    org_id: 1,
    external_url: 'https://grafana.example.net/',
  });
  t.match(a!.payload.silence_url, /^https:\/\/grafana\.example\.net\/alerting\/silence\/new\?/);
  t.equal(b!.severity, 'info', 'no severity label');
  t.notOk('dashboard_url' in b!.payload, 'empty links are left out');
  t.equal(b!.payload.correlation_key, 'bc97ff14869b13e3');

  const [test] = (await g.handleWebhook!(req(testNotification, bearer()))).events;
  t.match(
    test!.payload,
    {
      title: 'Notification test',
      alertname: 'TestAlert',
      labels_text: 'instance=Grafana',
      values: {},
      values_text: "[ metric='foo' labels={instance=bar} value=10 ]",
    },
    "the contact point's test arrives as an alert",
  );
  t.notOk('url' in test!.payload);
  t.equal(valuesText({ C: 1, A: 0.000123456789, B: -2.5 }), 'A=0.000123457, B=-2.5, C=1');
});

t.test('severity from the severity label; a resolved alert is info', async (t) => {
  t.equal(severityOf('page'), 'critical');
  t.equal(severityOf('Error'), 'critical');
  t.equal(severityOf('warn'), 'warning');
  t.equal(severityOf('info'), 'info');
  t.equal(severityOf('low'), 'info');
  const g = await provider();
  const one = (severity: string, status: string) => ({
    ...firing,
    alerts: [{ ...firing.alerts[0]!, status, labels: { alertname: 'X', severity } }],
  });
  for (const [label, want] of [
    ['critical', 'critical'],
    ['warning', 'warning'],
    ['none', 'info'],
  ]) {
    t.equal((await g.handleWebhook!(req(one(label!, 'firing'), bearer()))).events[0]!.severity, want);
    t.equal((await g.handleWebhook!(req(one(label!, 'resolved'), bearer()))).events[0]!.severity, 'info');
  }
});

t.test("the resolution carries the firing alert's key; different alerts have different keys", async (t) => {
  const g = await provider();
  const fired = (await g.handleWebhook!(req(firing, bearer()))).events;
  const [done] = (await g.handleWebhook!(req(resolved, bearer()))).events;
  t.equal(done!.type, 'grafana_alert_resolved');
  t.match(done!.payload, {
    status: 'resolved',
    ended: '2026-01-12 08:33 UTC',
    duration_minutes: 42,
    values_text: 'B=31.5, C=0',
  });
  t.equal(done!.payload.correlation_key, fired[0]!.payload.correlation_key);
  t.not(fired[0]!.payload.correlation_key, fired[1]!.payload.correlation_key);
  const k = (labels: Record<string, string>) => correlationKey({ fingerprint: '', labels });
  t.equal(k({ a: '1', b: '2' }), k({ b: '2', a: '1' }), 'without a fingerprint: a hash of the sorted labels');
  t.not(k({ a: '1', b: '2' }), k({ a: '1', b: '3' }));
});

t.test('truncatedAlerts on the last event; at most 100 alerts per notification', async (t) => {
  const g = await provider();
  const events = (await g.handleWebhook!(req({ ...firing, truncatedAlerts: 5 }, bearer()))).events;
  t.notOk('truncated_alerts' in events[0]!.payload);
  t.equal(events[1]!.payload.truncated_alerts, 5);
  t.match(
    plugin.manifest.templates!.en!.grafana_alert_firing!.body,
    /…and \{\{truncated_alerts\}\} more alerts not sent by Grafana/,
  );
  const many = Array.from({ length: MAX_ALERTS + 1 }, (_, i) => ({ ...firing.alerts[1]!, fingerprint: `fp${i}` }));
  const capped = (await g.handleWebhook!(req({ ...firing, alerts: many }, bearer()))).events;
  t.equal(capped.length, MAX_ALERTS);
  t.equal(capped.at(-1)!.payload.omitted_alerts, 1);
});

t.test(
  "hmac: the signature of the body in X-Grafana-Alerting-Signature (or Grafana's built-in X-Grafana-Alert-Signature)",
  async (t) => {
    const g = await provider({ auth: 'hmac', secret: SECRET });
    const raw = JSON.stringify(firing);
    t.equal(
      await g.verifyWebhook!(headersOnly({ 'x-grafana-alerting-signature': hmac(raw) })),
      'needs_body',
      'the body is read only once a well-formed signature is there',
    );
    t.equal((await g.handleWebhook!(req(firing, { 'x-grafana-alerting-signature': hmac(raw) }, raw))).events.length, 2);
    t.equal(
      (await g.handleWebhook!(req(firing, { 'x-grafana-alert-signature': hmac(raw).toUpperCase() }, raw))).events
        .length,
      2,
      "the sender's default header, hex in any case",
    );
    await t.rejects(
      g.handleWebhook!(req(firing, { 'x-grafana-alerting-signature': hmac(raw, 'another-secret-0123456789') }, raw)),
      rej(401, /does not match/),
    );
    await t.rejects(
      g.handleWebhook!(req(firing, { 'x-grafana-alerting-signature': hmac(raw) }, `${raw} `)),
      rej(401, /does not match/),
      'one byte more',
    );
    t.throws(() => g.verifyWebhook!(headersOnly({})), rej(401, /missing or malformed X-Grafana-Alerting-Signature/));
    t.throws(
      () => g.verifyWebhook!(headersOnly({ 'x-grafana-alerting-signature': hmac(raw).slice(1) })),
      rej(401, /malformed/),
    );
    t.throws(() => g.verifyWebhook!(headersOnly(bearer())), rej(401), 'a bearer token is not a signature');
  },
);

t.test('hmac with a named header and a timestamp: HMAC(timestamp ":" body), fresh and used once', async (t) => {
  const g = await provider({
    auth: 'hmac',
    secret: SECRET,
    signature_header: 'X-Herald-Sig',
    timestamp_header: 'X-Grafana-Alerting-Signature-Timestamp',
  });
  const raw = JSON.stringify(firing);
  const signed = (ts: number, body = raw) => ({
    'x-herald-sig': hmac(`${ts}:${body}`),
    'x-grafana-alerting-signature-timestamp': String(ts),
  });
  t.equal((await g.handleWebhook!(req(firing, signed(NOW_S), raw))).events.length, 2);
  await t.rejects(
    g.handleWebhook!(req(firing, signed(NOW_S), raw)),
    rej(409, /already received/),
    'the same signed request again is a replay',
  );
  t.equal((await g.handleWebhook!(req(firing, signed(NOW_S - 300), raw))).events.length, 2, '300 s old is accepted');
  t.equal((await g.handleWebhook!(req(firing, signed(NOW_S + 300), raw))).events.length, 2, '300 s ahead is accepted');
  await t.rejects(g.handleWebhook!(req(firing, signed(NOW_S - 301), raw)), rej(401, /301 s away/));
  await t.rejects(g.handleWebhook!(req(firing, signed(NOW_S + 301), raw)), rej(401, /301 s away/));
  const noTs = { 'x-herald-sig': hmac(raw) };
  await t.rejects(
    g.handleWebhook!(req(firing, noTs, raw)),
    rej(401, /missing or malformed X-Grafana-Alerting-Signature-Timestamp/),
  );
  const wrongTs = { ...signed(NOW_S), 'x-grafana-alerting-signature-timestamp': String(NOW_S + 1) };
  await t.rejects(g.handleWebhook!(req(firing, wrongTs, raw)), rej(401, /does not match/), 'the timestamp is signed');
  const defaultHeader = {
    'x-grafana-alerting-signature': hmac(`${NOW_S}:${raw}`),
    'x-grafana-alerting-signature-timestamp': String(NOW_S),
  };
  await t.rejects(
    g.handleWebhook!(req(firing, defaultHeader, raw)),
    rej(401, /X-Herald-Sig/),
    'only the named header counts',
  );
});

t.test('bearer and basic are decided from the headers', async (t) => {
  const g = await provider();
  t.equal(await g.verifyWebhook!(headersOnly(bearer())), 'ok');
  t.throws(() => g.verifyWebhook!(headersOnly({})), rej(401, /missing bearer token/));
  t.throws(() => g.verifyWebhook!(headersOnly(bearer(`${SECRET}0`))), rej(401, /does not match/));
  const b = await provider({ auth: 'basic', username: 'grafana', secret: SECRET });
  const basic = (u: string, p: string) => ({ authorization: `Basic ${Buffer.from(`${u}:${p}`).toString('base64')}` });
  t.equal(await b.verifyWebhook!(headersOnly(basic('grafana', SECRET))), 'ok');
  t.throws(
    () => b.verifyWebhook!(headersOnly(basic('grafana', 'wrong-password-0123456789'))),
    rej(401, /do not match/),
  );
  t.throws(() => b.verifyWebhook!(headersOnly(bearer())), rej(401, /missing basic credentials/));
  const open = await provider({ auth: 'none' });
  t.equal((await open.handleWebhook!(req(firing))).events.length, 2);
});

t.test('config: every mode but none needs the secret; basic a user name', async (t) => {
  t.same(checkConfig(plugin, { auth: 'hmac', secret: SECRET, timestamp_header: 'X-Ts' }), []);
  t.match(checkConfig(plugin, { auth: 'hmac' }), [{ path: '/secret', code: 'required' }]);
  t.match(checkConfig(plugin, { auth: 'basic', secret: SECRET }), [{ path: '/username' }]);
  t.throws(
    () => checkConfig(plugin, { auth: 'hmac', secret: SECRET, signature_header: 'Bad Header:' }),
    /signature_header/,
  );
  await t.rejects(provider({ auth: 'bearer' }), { code: 'CONFIG' });
});

t.test('a body that is not a Grafana webhook payload is refused with 422', async (t) => {
  const g = await provider();
  await t.rejects(
    g.handleWebhook!(req(undefined, bearer(), 'Firing: High memory usage')),
    rej(400),
    'a custom text payload is not JSON',
  );
  const bad: [unknown, RegExp][] = [
    ['text', /JSON object/],
    [{ title: 'x', state: 'alerting' }, /alerts must be a list/],
    [{ alerts: [{ ...firing.alerts[0], status: 'alerting' }] }, /status/],
    [{ alerts: [{ ...firing.alerts[0], labels: 'a=b' }] }, /labels must be an object/],
    [{ alerts: [{ ...firing.alerts[0], values: { B: '44' } }] }, /values\.B must be a number/],
    [{ alerts: [{ ...firing.alerts[0], dashboardURL: 1 }] }, /dashboardURL/],
    [{ ...firing, orgId: '1' }, /orgId/],
    [{ ...firing, truncatedAlerts: 1.5 }, /truncatedAlerts/],
  ];
  for (const [body, message] of bad) await t.rejects(g.handleWebhook!(req(body, bearer())), rej(422, message));
  t.same(await g.handleWebhook!(req({ ...firing, alerts: [] }, bearer())), {
    events: [],
    status: 200,
    body: { accepted: 0 },
  });
});
