import { createHmac } from 'node:crypto';
import type { InboundWebhook } from '@herald/plugin-api';
import { checkConfig, createTestHost } from '@herald/plugin-api/testing';
import t from 'tap';
import plugin from './index.ts';

const SECRET = 'a-long-shared-secret-value';
const mapping = {
  title: 'alert.title || alert.name',
  body: '{{alert.summary}} on {{host.name}}',
  severity: 'alert.labels.severity',
  severity_map: { P1: 'critical', p2: 'warning' },
  event_key: 'alert.fingerprint',
};
const alert = {
  alert: { title: 'Disk almost full', summary: 'Disk at 97%', labels: { severity: 'p1' }, fingerprint: 'fp-123' },
  host: { name: 'nas' },
};

function req(body: unknown, headers: Record<string, string> = {}, raw?: string): InboundWebhook {
  const rawBody = Buffer.from(raw ?? JSON.stringify(body));
  let parsed: unknown;
  try {
    parsed = JSON.parse(rawBody.toString('utf8'));
  } catch {
    parsed = undefined;
  }
  return { method: 'POST', headers, rawBody, body: parsed, query: {}, ip: '203.0.113.7' };
}
const sign = (raw: string, secret = SECRET) => `sha256=${createHmac('sha256', secret).update(raw).digest('hex')}`;

async function instance(config: Record<string, unknown>) {
  const host = createTestHost();
  const h = await host.provider(plugin, config);
  return h.instance;
}

/** The shape of a WebhookRejectedError with this status (and message). */
const rej = (status: number, message?: RegExp) => ({
  code: 'WEBHOOK_REJECTED',
  status,
  ...(message ? { message } : {}),
});

t.test('manifest declares the event in both locales', async (t) => {
  t.equal(plugin.manifest.id, 'webhook');
  t.equal(plugin.manifest.ingest, 'webhook');
  t.same(plugin.manifest.webhook, { rateLimitPerMinute: 60, maxBodyBytes: 1024 * 1024 });
  t.equal(plugin.manifest.events!.webhook_received!.quietHours, 'defer');
  t.ok(plugin.manifest.templates!.en!.webhook_received);
  t.match(plugin.manifest.templates!.ru!.webhook_received!.body, /Источник/);
});

t.test('hmac_sha256 is the default mode and verifies the raw body', async (t) => {
  const wh = await instance({ secret: SECRET, mapping });
  const raw = JSON.stringify(alert);
  const res = await wh.handleWebhook!(req(alert, { 'x-signature-256': sign(raw) }, raw));
  t.equal(res.events.length, 1);
  t.same(res.events[0], {
    type: 'webhook_received',
    payload: {
      title: 'Disk almost full',
      body: 'Disk at 97% on nas',
      severity: 'critical',
      source_ip: '203.0.113.7',
      event_key: 'fp-123',
      fields: { title: 'Disk almost full', body: 'Disk at 97% on nas', severity: 'p1', event_key: 'fp-123' },
    },
    severity: 'critical',
  });
  const upper = sign(raw)
    .replace(/^sha256=/, 'sha256=')
    .toUpperCase()
    .replace('SHA256=', 'sha256=');
  t.equal(
    (await wh.handleWebhook!(req(alert, { 'x-signature-256': upper }, raw))).events.length,
    1,
    'hex case does not matter',
  );

  await t.rejects(wh.handleWebhook!(req(alert, {}, raw)), rej(401, /missing or malformed/));
  await t.rejects(
    wh.handleWebhook!(req(alert, { 'x-signature-256': sign(raw, 'another-secret-of-16+') }, raw)),
    rej(401, /does not match/),
  );
  await t.rejects(
    wh.handleWebhook!(req(alert, { 'x-signature-256': sign(raw) }, raw + ' ')),
    rej(401, /does not match/),
  );
  await t.rejects(wh.handleWebhook!(req(alert, { 'x-signature-256': sign(raw).slice(7) }, raw)), rej(401, /malformed/));
});

t.test('bearer mode compares the token', async (t) => {
  const wh = await instance({ auth_mode: 'bearer', secret: SECRET, mapping });
  t.equal((await wh.handleWebhook!(req(alert, { authorization: `Bearer ${SECRET}` }))).events.length, 1);
  t.equal(
    (await wh.handleWebhook!(req(alert, { authorization: `bearer ${SECRET}` }))).events.length,
    1,
    'scheme is case-insensitive',
  );
  await t.rejects(wh.handleWebhook!(req(alert, {})), rej(401, /missing bearer/));
  await t.rejects(wh.handleWebhook!(req(alert, { authorization: `Basic ${SECRET}` })), rej(401, /missing bearer/));
  await t.rejects(wh.handleWebhook!(req(alert, { authorization: `Bearer ${SECRET}x` })), rej(401, /does not match/));
  await t.rejects(wh.handleWebhook!(req(alert, { authorization: 'Bearer short' })), rej(401, /does not match/));
  await t.rejects(wh.handleWebhook!(req(alert, { 'x-signature-256': sign(JSON.stringify(alert)) })), rej(401));
});

t.test('none mode needs the explicit acknowledgement', async (t) => {
  const refused = await instance({ auth_mode: 'none', mapping });
  await t.rejects(refused.handleWebhook!(req(alert)), rej(401, /acknowledge_unauthenticated: true/));
  const open = await instance({ auth_mode: 'none', acknowledge_unauthenticated: true, mapping });
  const res = await open.handleWebhook!(req(alert));
  t.equal(res.events[0]!.payload.title, 'Disk almost full');
});

t.test('secrets are checked at create()', async (t) => {
  await t.rejects(instance({ auth_mode: 'bearer', mapping }), { code: 'CONFIG', message: /needs a secret/ });
  await t.rejects(instance({ auth_mode: 'hmac_sha256', mapping }), { code: 'CONFIG', message: /needs a secret/ });
  // The schema says 16 characters or more (minLength), so a shorter secret never reaches create().
  await t.rejects(instance({ auth_mode: 'hmac_sha256', secret: 'fifteen-chars!!', mapping }), {
    message: /\/secret must not have fewer than 16 characters/,
  });
  await t.rejects(
    instance({ auth_mode: 'none', acknowledge_unauthenticated: true, mapping: { title: 'a.__proto__' } }),
    { code: 'CONFIG', message: /mapping\.title.*__proto__/ },
  );
  await t.rejects(
    instance({ auth_mode: 'none', acknowledge_unauthenticated: true, mapping: { title: 'x', body: '{{a..b}}' } }),
    { code: 'CONFIG', message: /mapping\.body/ },
  );
});

t.test('bodies that are not JSON get 400 after authentication', async (t) => {
  const wh = await instance({ auth_mode: 'bearer', secret: SECRET, mapping });
  await t.rejects(
    wh.handleWebhook!(req(undefined, { authorization: `Bearer ${SECRET}` }, 'not json {')),
    rej(400, /must be JSON/),
  );
  await t.rejects(wh.handleWebhook!(req(undefined, {}, 'not json {')), rej(401));
});

t.test('urlencoded form bodies are read as a flat object of text fields', async (t) => {
  const form = { 'content-type': 'application/x-www-form-urlencoded; charset=utf-8' };
  const wh = await instance({
    auth_mode: 'hmac_sha256',
    secret: SECRET,
    mapping: {
      title: 'title',
      body: '{{message}} ({{type}})',
      severity: 'type',
      severity_map: { failure: 'critical' },
    },
  });
  const raw = 'version=1.0&title=Backup+done&message=3%20GB+in+%D0%BC%D0%B8%D0%BD&type=failure&title=second';
  const res = await wh.handleWebhook!(req(undefined, { ...form, 'x-signature-256': sign(raw) }, raw));
  t.same(
    res.events[0]!.payload,
    {
      title: 'Backup done',
      body: '3 GB in мин (failure)',
      severity: 'critical',
      source_ip: '203.0.113.7',
      fields: { title: 'Backup done', body: '3 GB in мин (failure)', severity: 'failure' },
    },
    'escapes decoded; a repeated field keeps its first value',
  );
  await t.rejects(
    wh.handleWebhook!(req(undefined, { ...form, 'x-signature-256': sign(`${raw}&x=1`) }, raw)),
    rej(401),
    'the signature covers the raw form',
  );

  const open = await instance({
    auth_mode: 'none',
    acknowledge_unauthenticated: true,
    mapping: { title: 'title', body: 'nested.x || "none"' },
  });
  const upper = await open.handleWebhook!(
    req(undefined, { 'content-type': 'Application/X-WWW-Form-Urlencoded' }, 'title=Upper'),
  );
  t.equal(upper.events[0]!.payload.title, 'Upper', 'the media type is matched case-insensitively');
  t.equal(upper.events[0]!.payload.body, 'none', 'fields are flat: no nesting');
  const empty = await open.handleWebhook!(req(undefined, { 'content-type': 'application/x-www-form-urlencoded' }, ''));
  t.equal(empty.events[0]!.payload.title, '', 'an empty form maps to nothing');
  const proto = await open.handleWebhook!(
    req(undefined, { 'content-type': 'application/x-www-form-urlencoded' }, '__proto__=x&title=t'),
  );
  t.equal(proto.events[0]!.payload.title, 't', 'a __proto__ field is an ordinary field');
  t.equal(({} as Record<string, unknown>).title, undefined, 'nothing leaked onto Object.prototype');
  await t.rejects(
    open.handleWebhook!(req(undefined, { 'content-type': 'text/plain' }, 'title=x')),
    rej(400, /must be JSON/),
    'other content types must be JSON',
  );
  await t.rejects(
    open.handleWebhook!(req(undefined, { 'content-type': 'multipart/form-data; boundary=x' }, 'title=x')),
    rej(400, /must be JSON/),
    'multipart is not a urlencoded form',
  );
});

t.test('mapping handles arrays, fallbacks, severities and missing values', async (t) => {
  const open = { auth_mode: 'none', acknowledge_unauthenticated: true };
  const wh = await instance({
    ...open,
    mapping: {
      title: 'items[0].name || title',
      body: 'items[-1].detail',
      severity: 'level',
      severity_map: { ERROR: 'critical' },
    },
  });
  const a = (
    await wh.handleWebhook!(
      req({ items: [{ name: '' }, { detail: { code: 7 } }], title: 'From fallback', level: 'error' }),
    )
  ).events[0]!.payload;
  t.equal(a.title, 'From fallback');
  t.equal(a.body, '{"code":7}');
  t.equal(a.severity, 'critical', 'severity_map keys match case-insensitively');

  const b = (await wh.handleWebhook!(req({ level: 'Warning' }))).events[0]!.payload;
  t.equal(b.title, '', 'no title maps to empty; the template supplies a default');
  t.equal(b.body, '');
  t.equal(b.severity, 'warning', 'the three severity names pass through');
  t.same(b.fields, { title: null, body: null, severity: 'Warning' });
  t.notOk('event_key' in b);

  const c = (await wh.handleWebhook!(req({ level: 'debug', title: 'x'.repeat(1000) }))).events[0]!.payload;
  t.equal(c.severity, 'info', 'unknown severities fall back to info');
  t.equal((c.title as string).length, 300, 'titles are clipped');

  const d = (await wh.handleWebhook!(req(undefined, {}, '{"__proto__":{"title":"polluted"}}'))).events[0]!.payload;
  t.equal(d.title, '', 'a "__proto__" key in the body does not make its fields look inherited');
  t.equal(({} as Record<string, unknown>).title, undefined, 'nothing leaked onto Object.prototype');
});

t.test('a saved config with auth_mode none needs the acknowledgement (the validateConfig hook)', async (t) => {
  const refused = checkConfig(plugin, { auth_mode: 'none', mapping });
  t.same(
    refused.map((p) => [p.path, p.code]),
    [['/acknowledge_unauthenticated', 'unauthenticated_not_acknowledged']],
  );
  t.match(refused[0]!.message, 'must be true when auth_mode is none');
  t.match(refused[0]!.detail, /anyone who knows the URL.*acknowledge_unauthenticated to true/);
  t.same(checkConfig(plugin, { auth_mode: 'none', acknowledge_unauthenticated: false, mapping }).length, 1);
  t.same(checkConfig(plugin, { auth_mode: 'none', acknowledge_unauthenticated: true, mapping }), [], 'acknowledged');
  t.same(checkConfig(plugin, { mapping, secret: SECRET }), [], 'hmac_sha256 by default needs no acknowledgement');
  t.same(checkConfig(plugin, { auth_mode: 'bearer', mapping, secret: SECRET }), []);
  t.same(
    plugin.manifest.configAliases,
    ['auth_mode', 'acknowledge_unauthenticated'],
    'the providers API shows both at the top level',
  );
});

t.test('what create() refuses is refused when the config is saved (the validateConfig hook)', async (t) => {
  t.match(
    checkConfig(plugin, { auth_mode: 'bearer', mapping }),
    [{ path: '/secret', code: 'required' }],
    'an authenticated mode without a secret',
  );
  t.match(
    checkConfig(plugin, { auth_mode: 'none', acknowledge_unauthenticated: true, mapping: { title: 'a.__proto__' } }),
    [{ path: '/mapping/title', code: 'invalid_path_expression' }],
    'a mapping that does not compile',
  );
  t.same(checkConfig(plugin, { auth_mode: 'none', acknowledge_unauthenticated: true, mapping }), []);
});
