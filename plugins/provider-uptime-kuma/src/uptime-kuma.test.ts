import type { InboundWebhook } from '@herald/plugin-api';
import { missingLocaleStrings } from '@herald/plugin-api';
import { checkConfig, checkEvent, createTestHost } from '@herald/plugin-api/testing';
import t from 'tap';
import certificate from '../test/fixtures/certificate.json' with { type: 'json' };
import down from '../test/fixtures/down.json' with { type: 'json' };
import pending from '../test/fixtures/pending.json' with { type: 'json' };
import testMsg from '../test/fixtures/test.json' with { type: 'json' };
import up from '../test/fixtures/up.json' with { type: 'json' };
import { multipartField } from './body.ts';
import plugin from './index.ts';
import { kumaTime, publicUrl } from './notification.ts';

const SECRET = 'uptime-kuma-token-0123456789';

function json(body: unknown, headers: Record<string, string> = {}, raw?: string): InboundWebhook {
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

/** A body the way Uptime Kuma's form-data option builds it (the form-data package: one `data` field). */
const BOUNDARY = '--------------------------493028731234567890123456';
function form(
  body: unknown,
  o: { boundary?: string; contentType?: string; field?: string; before?: string } = {},
): InboundWebhook {
  const boundary = o.boundary ?? BOUNDARY;
  const raw =
    `${o.before ?? ''}--${boundary}\r\nContent-Disposition: form-data; ` +
    `name="${o.field ?? 'data'}"\r\n\r\n${JSON.stringify(body)}\r\n--${boundary}--\r\n`;
  return {
    method: 'POST',
    headers: { 'content-type': o.contentType ?? `multipart/form-data; boundary=${boundary}` },
    rawBody: Buffer.from(raw),
    body: undefined,
    query: {},
    ip: '127.0.0.1',
  };
}
const rej = (status: number, message?: RegExp) => ({
  code: 'WEBHOOK_REJECTED',
  status,
  ...(message ? { message } : {}),
});

async function provider(config: Record<string, unknown> = {}) {
  return (await createTestHost().provider(plugin, config)).instance;
}

t.test(
  'manifest: webhook ingest, event types with valid examples, templates and locales in both languages',
  async (t) => {
    const m = plugin.manifest;
    t.equal(m.id, 'uptime_kuma');
    t.equal(m.ingest, 'webhook');
    t.same(m.webhook, { rateLimitPerMinute: 600, maxBodyBytes: 512 * 1024 });
    t.same(Object.keys(m.events!), [
      'monitor_down',
      'monitor_up',
      'monitor_pending',
      'monitor_maintenance',
      'monitor_test',
      'monitor_notice',
    ]);
    t.same(Object.fromEntries(Object.entries(m.events!).map(([k, e]) => [k, e.severity])), {
      monitor_down: 'critical',
      monitor_up: 'info',
      monitor_pending: 'warning',
      monitor_maintenance: 'info',
      monitor_test: 'info',
      monitor_notice: 'warning',
    });
    for (const [type, spec] of Object.entries(m.events!)) {
      t.doesNotThrow(() => checkEvent(plugin, { type, payload: spec.example! }), `${type} example matches its schema`);
      for (const l of ['en', 'ru'] as const) t.ok(m.templates![l]![type], `${type} has a ${l} template`);
      if (type.startsWith('monitor_') && !['monitor_test', 'monitor_notice'].includes(type))
        t.same(spec.correlation, { key: ['monitor_key'], thread: 'monitor' }, `${type} follows the monitor's message`);
      else t.notOk(spec.correlation, `${type} is a message of its own`);
    }
    t.match(m.templates!.en!.monitor_down!.title, /^🔴 Down: /);
    t.match(m.templates!.en!.monitor_up!.title, /^✅ Up: /);
    t.match(m.templates!.ru!.monitor_down!.title, /^🔴 Недоступен: /);
    t.match(m.templates!.ru!.monitor_up!.title, /^✅ Снова доступен: /);
    t.same(missingLocaleStrings(m, 'en'), []);
    t.same(missingLocaleStrings(m, 'ru'), []);
    t.notOk('auth_mode' in m.configSchema.properties);
  },
);

t.test('down then up: one monitor key, the up carries the downtime', async (t) => {
  const k = await provider();
  const [d] = (await k.handleWebhook!(json(down))).events;
  t.same(d, {
    type: 'monitor_down',
    payload: {
      status: 'down',
      monitor_id: 7,
      monitor_name: 'Website',
      monitor_key: '7',
      monitor_type: 'http',
      target: 'https://www.example.net/',
      url: 'https://www.example.net/',
      message: 'timeout of 48000ms exceeded',
      text: '[Website] [🔴 Down] timeout of 48000ms exceeded',
      time: '2026-01-02 09:04:05.678',
      local_time: '2026-01-02 10:04:05',
      timezone: 'Europe/Berlin',
      retries: 1,
    },
  });
  const [u] = (await k.handleWebhook!(json(up))).events;
  t.equal(u!.type, 'monitor_up');
  t.match(u!.payload, {
    status: 'up',
    monitor_key: '7',
    message: '200 - OK',
    ping_ms: 182,
    retries: 0,
    downtime_seconds: 720,
    downtime_minutes: 12,
  });
  t.equal(u!.payload.monitor_key, d!.payload.monitor_key, 'up edits the down message');
  const other = (await k.handleWebhook!(json({ ...down, monitor: { ...down.monitor, id: 8 } }))).events[0]!;
  t.not(other.payload.monitor_key, d!.payload.monitor_key, 'another monitor, another message');
  const byName = (await k.handleWebhook!(json({ ...down, monitor: { name: 'Website' } }))).events[0]!;
  t.equal(byName.payload.monitor_key, 'name:Website', 'without an id: by name');
  t.equal(byName.payload.target, '', 'type unknown: no target');
});

t.test('pending, maintenance and a port monitor', async (t) => {
  const k = await provider();
  const [p] = (await k.handleWebhook!(json(pending))).events;
  t.equal(p!.type, 'monitor_pending');
  t.match(p!.payload, {
    monitor_name: 'Mail server',
    monitor_key: '12',
    monitor_type: 'port',
    target: 'mail.example.net:587',
    hostname: 'mail.example.net',
    port: 587,
    path_name: 'Infra / Mail server',
    description: 'SMTP submission',
    timezone: 'UTC',
  });
  t.notOk('url' in p!.payload, "a port monitor's placeholder URL is not a link");
  const [m] = (await k.handleWebhook!(json({ ...up, heartbeat: { ...up.heartbeat, status: 3, msg: '' } }))).events;
  t.equal(m!.type, 'monitor_maintenance');
  t.notOk('downtime_seconds' in m!.payload, 'downtime only on up');
  const old = (
    await k.handleWebhook!(json({ ...down, heartbeat: { status: 0, time: '2026-01-02 09:04:05', msg: 'down' } }))
  ).events[0]!;
  t.match(
    old.payload,
    { local_time: '2026-01-02 09:04:05', timezone: 'UTC' },
    'an Uptime Kuma without localDateTime: UTC',
  );
});

t.test('the test notification and monitor-less messages arrive as events of their own', async (t) => {
  const k = await provider();
  t.same((await k.handleWebhook!(json(testMsg))).events, [
    { type: 'monitor_test', payload: { text: 'Herald Testing' } },
  ]);
  t.same((await k.handleWebhook!(json(certificate))).events, [
    { type: 'monitor_notice', payload: { text: certificate.msg } },
  ]);
});

t.test('multipart/form-data: the notification is the JSON of the data field', async (t) => {
  const k = await provider();
  t.equal((await k.handleWebhook!(form(down))).events[0]!.type, 'monitor_down');
  t.equal(
    (await k.handleWebhook!(form(up, { boundary: 'q-1', contentType: 'multipart/form-data; boundary="q-1"' })))
      .events[0]!.type,
    'monitor_up',
    'a quoted boundary',
  );
  const withOther = form(testMsg, {
    before: `--${BOUNDARY}\r\nContent-Disposition: form-data; name="other"\r\n\r\nx\r\n`,
  });
  t.equal((await k.handleWebhook!(withOther)).events[0]!.type, 'monitor_test', 'the data field among others');
  await t.rejects(k.handleWebhook!(form(down, { field: 'payload' })), rej(422, /no "data" field/));
  await t.rejects(k.handleWebhook!(form(down, { contentType: 'multipart/form-data' })), rej(400, /boundary/));
  const notJson = form(down);
  notJson.rawBody = Buffer.from(notJson.rawBody.toString().replace('{"heartbeat"', '{heartbeat'));
  await t.rejects(k.handleWebhook!(notJson), rej(400, /the data field must be JSON/));
  t.equal(
    multipartField(
      Buffer.from(`--b\r\nContent-Disposition: form-data; name="data"\r\n\r\nline1\r\nline2\r\n--b--\r\n`),
      'b',
    ),
    'line1\r\nline2',
    'content keeps its inner line breaks',
  );
});

t.test('bearer: the Authorization header Uptime Kuma adds, checked from the headers', async (t) => {
  const k = await provider({ auth: 'bearer', secret: SECRET });
  const headersOnly = (headers: Record<string, string>) => ({ method: 'POST', headers, query: {}, ip: '127.0.0.1' });
  t.equal(await k.verifyWebhook!(headersOnly({ authorization: `Bearer ${SECRET}` })), 'ok');
  t.equal((await k.handleWebhook!(json(down, { authorization: `Bearer ${SECRET}` }))).events.length, 1);
  t.throws(() => k.verifyWebhook!(headersOnly({})), rej(401, /Additional Headers/));
  t.throws(() => k.verifyWebhook!(headersOnly({ authorization: `Bearer ${SECRET}!` })), rej(401, /does not match/));
  t.throws(() => k.verifyWebhook!(headersOnly({ authorization: SECRET })), rej(401, /missing bearer/));
  t.equal(
    (await (await provider()).handleWebhook!(json(down))).events.length,
    1,
    'auth none (the default) takes any request',
  );
  t.match(checkConfig(plugin, { auth: 'bearer' }), [{ path: '/secret', code: 'required' }]);
  t.same(checkConfig(plugin, {}), []);
  await t.rejects(provider({ auth: 'bearer' }), { code: 'CONFIG' });
});

t.test('a body that is not an Uptime Kuma notification is refused with 422', async (t) => {
  const k = await provider();
  await t.rejects(k.handleWebhook!(json(undefined, {}, 'monitor down')), rej(400));
  const bad: [unknown, RegExp][] = [
    [['x'], /JSON object/],
    [{ heartbeat: null, monitor: null }, /msg must be a text/],
    [{ heartbeat: null, monitor: null, msg: '  ' }, /msg must be a text/],
    [{ ...down, heartbeat: 'x' }, /heartbeat must be an object/],
    [{ ...down, monitor: null }, /monitor must be an object/],
    [{ ...down, heartbeat: { ...down.heartbeat, status: 4 } }, /heartbeat\.status/],
    [{ ...down, heartbeat: { ...down.heartbeat, status: '0' } }, /heartbeat\.status/],
    [{ ...down, monitor: { type: 'http' } }, /id or a name/],
  ];
  for (const [body, message] of bad)
    await t.rejects(k.handleWebhook!(json(body)), rej(422, message), JSON.stringify(body).slice(0, 50));
});

t.test('helpers: URLs lose their credentials; Uptime Kuma times are UTC', async (t) => {
  t.equal(publicUrl('https://user:pw@status.example.net/health?x=1'), 'https://status.example.net/health?x=1');
  t.equal(publicUrl('https://'), undefined);
  t.equal(publicUrl('ftp://x'), undefined);
  t.equal(kumaTime('2026-01-02 09:04:05.678')?.toISOString(), '2026-01-02T09:04:05.678Z');
  t.equal(kumaTime('2026-01-02T09:04:05+01:00')?.toISOString(), '2026-01-02T08:04:05.000Z');
  t.equal(kumaTime('soon'), undefined);
});
