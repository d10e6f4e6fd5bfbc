import type { InboundWebhook } from '@herald/plugin-api';
import { missingLocaleStrings } from '@herald/plugin-api';
import { checkConfig, checkEvent, createTestHost } from '@herald/plugin-api/testing';
import t from 'tap';
import firing from '../test/fixtures/firing.json' with { type: 'json' };
import resolved from '../test/fixtures/resolved.json' with { type: 'json' };
import truncated from '../test/fixtures/truncated.json' with { type: 'json' };
import { correlationKey, MAX_ALERTS, severityOf } from './alerts.ts';
import plugin from './index.ts';

const SECRET = 'alertmanager-bearer-0123456789';

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
    headers: { 'content-type': 'application/json', ...headers },
    rawBody,
    body: parsed,
    query: {},
    ip: '127.0.0.1',
  };
}
const bearer = (s = SECRET) => ({ authorization: `Bearer ${s}` });
const basic = (user: string, pass: string) => ({
  authorization: `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`,
});
const rej = (status: number, message?: RegExp) => ({
  code: 'WEBHOOK_REJECTED',
  status,
  ...(message ? { message } : {}),
});

async function provider(config: Record<string, unknown> = { secret: SECRET }) {
  return (await createTestHost().provider(plugin, config)).instance;
}

t.test(
  'manifest: webhook ingest, correlated event types with valid examples, templates and locales in both languages',
  async (t) => {
    const m = plugin.manifest;
    t.equal(m.id, 'alertmanager');
    t.equal(m.ingest, 'webhook');
    t.same(m.webhook, { rateLimitPerMinute: 240, maxBodyBytes: 1024 * 1024 });
    t.same(Object.keys(m.events!), ['alert_firing', 'alert_resolved']);
    for (const [type, spec] of Object.entries(m.events!)) {
      t.same(spec.correlation, { key: ['correlation_key'], thread: 'alert' }, `${type} shares the alert thread`);
      t.doesNotThrow(() => checkEvent(plugin, { type, payload: spec.example! }), `${type} example matches its schema`);
      for (const l of ['en', 'ru'] as const) t.ok(m.templates![l]![type], `${type} has a ${l} template`);
    }
    t.match(m.templates!.en!.alert_firing!.title, /^🔥 Firing: /);
    t.match(m.templates!.en!.alert_resolved!.title, /^✅ Resolved: /);
    t.match(m.templates!.ru!.alert_firing!.title, /^🔥 Тревога: /);
    t.match(m.templates!.ru!.alert_resolved!.title, /^✅ Устранено: /);
    t.same(missingLocaleStrings(m, 'en'), []);
    t.same(missingLocaleStrings(m, 'ru'), []);
    t.notOk(
      'auth_mode' in m.configSchema.properties,
      'no auth_mode field: the web client reserves it for the generic webhook',
    );
  },
);

t.test('a firing notification becomes one event per alert, severity from the severity label', async (t) => {
  const am = await provider();
  const res = await am.handleWebhook!(req(firing, bearer()));
  t.equal(res.events.length, 2);
  const [a, b] = res.events;
  t.equal(a!.type, 'alert_firing');
  t.equal(a!.severity, 'critical');
  t.match(a!.payload, {
    status: 'firing',
    alertname: 'ProbeFailure',
    title: 'BlackBox Probe Failure: https://server.example.org',
    description: 'Instance https://server.example.org has been down for over 5m. Job: http_checks',
    severity_label: 'critical',
    labels_text: 'instance=https://server.example.org, job=http_checks, monitor=master, severity=critical',
    starts_at: '2026-02-06T13:08:45.828Z',
    started: '2026-02-06 13:08 UTC',
    ends_at: '',
    ended: '',
    url: 'http://prometheus.example.org:9090/graph?g0.expr=probe_success+%3D%3D+0&g0.tab=1',
    fingerprint: '1a30ba71cca2921f',
    correlation_key: '1a30ba71cca2921f',
    receiver: 'herald',
    group_key: '{}/{job="http_checks"}:{alertname="ProbeFailure"}',
    external_url: 'http://alertmanager.example.org:9093',
  });
  t.notOk('duration_minutes' in a!.payload, 'no duration while firing');
  t.notOk('truncated_alerts' in b!.payload, 'nothing was truncated');
  t.equal(b!.severity, 'warning');
  t.equal(b!.payload.description, '', 'no description annotation');
  t.equal(b!.payload.correlation_key, '6b1ad9c0f4e8d2a7');
});

t.test('severity: critical/error/page, warning/warn, anything else info; a resolved alert is info', async (t) => {
  const table: [string | undefined, string][] = [
    ['critical', 'critical'],
    ['CRITICAL', 'critical'],
    ['error', 'critical'],
    ['page', 'critical'],
    ['warning', 'warning'],
    ['warn', 'warning'],
    [' Warning ', 'warning'],
    ['info', 'info'],
    ['none', 'info'],
    ['ticket', 'info'],
    ['', 'info'],
    [undefined, 'info'],
  ];
  for (const [label, want] of table) t.equal(severityOf(label), want, `severity=${String(label)}`);

  const am = await provider();
  const one = (severity: string | undefined, status: 'firing' | 'resolved') => ({
    ...firing,
    alerts: [
      { ...firing.alerts[0]!, status, labels: { alertname: 'X', ...(severity === undefined ? {} : { severity }) } },
    ],
  });
  for (const [label, want] of table.filter(([l]) => l !== ' Warning ')) {
    t.equal(
      (await am.handleWebhook!(req(one(label, 'firing'), bearer()))).events[0]!.severity,
      want,
      `firing with severity=${String(label)}`,
    );
    const r = (await am.handleWebhook!(req(one(label, 'resolved'), bearer()))).events[0]!;
    t.equal(r.type, 'alert_resolved');
    t.equal(r.severity, 'info', `resolved with severity=${String(label)} is info`);
  }
});

t.test("the resolution carries the firing alert's key; different alerts have different keys", async (t) => {
  const am = await provider();
  const fired = (await am.handleWebhook!(req(firing, bearer()))).events;
  const [done] = (await am.handleWebhook!(req(resolved, bearer()))).events;
  t.equal(done!.type, 'alert_resolved');
  t.match(done!.payload, {
    status: 'resolved',
    ends_at: '2026-02-06T13:50:45.828Z',
    ended: '2026-02-06 13:50 UTC',
    duration_minutes: 42,
  });
  t.equal(done!.payload.correlation_key, fired[0]!.payload.correlation_key, 'same key as its firing event');
  t.not(fired[0]!.payload.correlation_key, fired[1]!.payload.correlation_key, 'two alerts of one group have two keys');

  // Without a fingerprint: a hash of the sorted labels, stable across label order.
  const k1 = correlationKey({ fingerprint: '', labels: { alertname: 'NodeDown', instance: 'node-01:9100' } });
  const k2 = correlationKey({ fingerprint: '', labels: { instance: 'node-01:9100', alertname: 'NodeDown' } });
  const k3 = correlationKey({ fingerprint: '', labels: { alertname: 'NodeDown', instance: 'node-02:9100' } });
  t.match(k1, /^labels:[0-9a-f]{32}$/);
  t.equal(k1, k2);
  t.not(k1, k3);
});

t.test('truncatedAlerts is reported on the last event of the notification', async (t) => {
  const am = await provider();
  const events = (await am.handleWebhook!(req(truncated, bearer()))).events;
  t.equal(events.length, 2);
  t.notOk('truncated_alerts' in events[0]!.payload);
  t.equal(events[1]!.payload.truncated_alerts, 7);
  t.equal(events[0]!.severity, 'critical', 'page is critical');
  t.equal(
    events[0]!.payload.title,
    'NodeDown (instance=node-01:9100, job=node, severity=page)',
    'no summary: the alert name and labels',
  );
  t.match(events[0]!.payload.correlation_key, /^labels:/, 'no fingerprint in this payload');
  t.not(events[0]!.payload.correlation_key, events[1]!.payload.correlation_key);
  t.match(
    plugin.manifest.templates!.en!.alert_firing!.body,
    /\{\{#if truncated_alerts\}\}\n\n…and \{\{truncated_alerts\}\} more alerts not sent by Alertmanager/,
  );
});

t.test(`at most ${MAX_ALERTS} alerts become events; the rest are counted`, async (t) => {
  const am = await provider();
  const alert = (i: number) => ({
    ...firing.alerts[0]!,
    fingerprint: `fp${i}`,
    labels: { alertname: 'Many', n: String(i) },
  });
  const exact = await am.handleWebhook!(
    req({ ...firing, alerts: Array.from({ length: MAX_ALERTS }, (_, i) => alert(i)) }, bearer()),
  );
  t.equal(exact.events.length, MAX_ALERTS);
  t.notOk('omitted_alerts' in exact.events.at(-1)!.payload);
  const over = await am.handleWebhook!(
    req(
      { ...firing, truncatedAlerts: 3, alerts: Array.from({ length: MAX_ALERTS + 2 }, (_, i) => alert(i)) },
      bearer(),
    ),
  );
  t.equal(over.events.length, MAX_ALERTS);
  t.match(over.events.at(-1)!.payload, { omitted_alerts: 2, truncated_alerts: 3 });
});

t.test('bearer: decided from the headers alone; a missing or wrong token is refused', async (t) => {
  const am = await provider();
  const headersOnly = (headers: Record<string, string>) => ({ method: 'POST', headers, query: {}, ip: '127.0.0.1' });
  t.equal(await am.verifyWebhook!(headersOnly(bearer())), 'ok', 'no body needed');
  t.equal(await am.verifyWebhook!(headersOnly({ authorization: `bearer  ${SECRET}` })), 'ok', 'scheme in any case');
  t.throws(() => am.verifyWebhook!(headersOnly({})), rej(401, /missing bearer token/));
  t.throws(() => am.verifyWebhook!(headersOnly(bearer(`${SECRET}x`))), rej(401, /does not match/));
  t.throws(() => am.verifyWebhook!(headersOnly(basic('herald', SECRET))), rej(401, /missing bearer token/));
  await t.rejects(am.handleWebhook!(req(firing, bearer('wrong-token-0123456789'))), rej(401));
});

t.test('basic: user name and password as basic_auth sends them', async (t) => {
  const am = await provider({ auth: 'basic', username: 'alertmanager', secret: SECRET });
  t.equal((await am.handleWebhook!(req(firing, basic('alertmanager', SECRET)))).events.length, 2);
  await t.rejects(
    am.handleWebhook!(req(firing, basic('alertmanager', `${SECRET}!`))),
    rej(401, /basic credentials do not match/),
  );
  await t.rejects(am.handleWebhook!(req(firing, basic('someone', SECRET))), rej(401, /basic credentials do not match/));
  await t.rejects(am.handleWebhook!(req(firing, bearer())), rej(401, /missing basic credentials/));
  await t.rejects(am.handleWebhook!(req(firing)), rej(401, /missing basic credentials/));
});

t.test('none: any request with the URL is accepted', async (t) => {
  const am = await provider({ auth: 'none' });
  t.equal((await am.handleWebhook!(req(firing))).events.length, 2);
});

t.test('config: bearer and basic need their credentials, when saved and at start', async (t) => {
  t.same(checkConfig(plugin, { secret: SECRET }), []);
  t.match(checkConfig(plugin, {}), [{ path: '/secret', code: 'required' }]);
  t.match(checkConfig(plugin, { auth: 'basic', secret: SECRET }), [{ path: '/username', code: 'required' }]);
  t.same(checkConfig(plugin, { auth: 'none' }), []);
  t.throws(() => checkConfig(plugin, { secret: 'short' }), /secret/, 'shorter than 16 characters');
  t.throws(() => checkConfig(plugin, { auth_mode: 'bearer', secret: SECRET }), /auth_mode is not a field/);
  await t.rejects(provider({}), { code: 'CONFIG', message: /needs a secret/ });
  await t.rejects(provider({ auth: 'basic', secret: SECRET }), { code: 'CONFIG', message: /user name/ });
});

t.test('a body that is not an Alertmanager notification is refused with 422 (400 when not JSON)', async (t) => {
  const am = await provider();
  await t.rejects(am.handleWebhook!(req(undefined, bearer(), '{not json')), rej(400));
  const bad: [unknown, RegExp][] = [
    [[], /JSON object/],
    [{ status: 'firing' }, /alerts must be a list/],
    [{ alerts: 'x' }, /alerts must be a list/],
    [{ alerts: [42] }, /alerts\[0\] must be an object/],
    [{ alerts: [{ ...firing.alerts[0], status: 'pending' }] }, /alerts\[0\]\.status/],
    [{ alerts: [{ ...firing.alerts[0], labels: null }] }, /alerts\[0\]\.labels must be an object/],
    [
      { alerts: [{ ...firing.alerts[0], labels: { alertname: 1 } }] },
      /alerts\[0\]\.labels\.alertname must be a string/,
    ],
    [{ alerts: [{ ...firing.alerts[0], annotations: [] }] }, /annotations must be an object/],
    [{ alerts: [{ ...firing.alerts[0], startsAt: 5 }] }, /startsAt must be a string/],
    [{ ...firing, truncatedAlerts: -1 }, /truncatedAlerts/],
    [{ ...firing, truncatedAlerts: '3' }, /truncatedAlerts/],
  ];
  for (const [body, message] of bad)
    await t.rejects(am.handleWebhook!(req(body, bearer())), rej(422, message), JSON.stringify(body).slice(0, 60));
  const empty = await am.handleWebhook!(req({ ...firing, alerts: [] }, bearer()));
  t.same(empty, { events: [], status: 200, body: { accepted: 0 } }, 'a notification without alerts is answered 200');
});
