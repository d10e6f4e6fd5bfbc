/** The MQTT provider's parts that need no broker: config checks, topic filters, the mapping, errors, locales. */

import { execFile } from 'node:child_process';
import path from 'node:path';
import { missingLocaleStrings } from '@herald/plugin-api';
import { checkConfig, checkEvent, createTestHost, createTestHttp } from '@herald/plugin-api/testing';
import t from 'tap';
import en from '../locales/en.json' with { type: 'json' };
import ru from '../locales/ru.json' with { type: 'json' };
import { classifyConnectError, explain } from './errors.ts';
import plugin, { defaultClientId } from './index.ts';
import { compileMapping, decodePayload, MAX_BODY, MAX_JSON_BYTES, mapMessage } from './mapping.ts';
import { backoffDelay } from './supervisor.ts';
import { topicFilterProblem, topicMatches } from './topics.ts';

const base = { url: 'mqtt://broker.lan:1883', topics: ['home/#'] };

t.test('topic filters: wildcards only as whole levels, # only last', async (t) => {
  for (const ok of [
    'a',
    'home/+/temperature',
    'home/#',
    '#',
    '+',
    '+/+',
    '/leading/slash',
    'trailing/',
    '$SYS/broker/load/#',
    '$share/herald/alerts/#',
    'a b/ü',
  ]) {
    t.equal(topicFilterProblem(ok), null, `${ok} is valid`);
  }
  t.match(topicFilterProblem('home/#/x'), /"#" must be a whole level and the last one/);
  t.match(topicFilterProblem('home#'), /"#" must be a whole level/);
  t.match(topicFilterProblem('home/te#'), /"#" must be a whole level/);
  t.match(topicFilterProblem('home/+x/t'), /"\+" must be a whole level/);
  t.match(topicFilterProblem('a+'), /"\+" must be a whole level/);
  t.equal(topicFilterProblem(''), 'is empty');
  t.equal(topicFilterProblem('a\u0000b'), 'contains a NUL character');
  t.equal(topicFilterProblem('x'.repeat(65_535)), null, '65,535 bytes is the limit');
  t.match(topicFilterProblem('é'.repeat(32_768)), /longer than 65535 bytes/, 'counted in UTF-8 bytes');
});

t.test('topic matching follows the broker', async (t) => {
  t.ok(topicMatches('home/+/door', 'home/front/door'));
  t.notOk(topicMatches('home/+/door', 'home/front/back/door'));
  t.ok(topicMatches('alerts/#', 'alerts'), '# also matches the parent level');
  t.ok(topicMatches('alerts/#', 'alerts/a/b/c'));
  t.notOk(topicMatches('alerts/#', 'alert'));
  t.ok(topicMatches('#', 'anything/at/all'));
  t.notOk(topicMatches('#', '$SYS/broker/uptime'), 'a leading wildcard does not match $ topics');
  t.ok(topicMatches('$SYS/#', '$SYS/broker/uptime'));
  t.ok(topicMatches('a', 'a'));
  t.notOk(topicMatches('a', 'a/b'));
  t.notOk(topicMatches('a/b', 'a'));
});

t.test('config: the schema and the checks beyond it, as the core runs them on save', async (t) => {
  t.same(checkConfig(plugin, base), [], 'a minimal config is accepted');
  t.same(
    checkConfig(plugin, {
      ...base,
      url: 'mqtts://[::1]:8883',
      username: 'herald',
      password: 'p',
      qos: 0,
      clean_session: true,
    }),
    [],
  );
  const problems = checkConfig(plugin, { ...base, topics: ['ok/#', 'bad/#/x', 'bad+'], password: 'alone' });
  t.same(
    problems.map((p) => [p.path, p.code]),
    [
      ['/topics/1', 'invalid_topic_filter'],
      ['/topics/2', 'invalid_topic_filter'],
      ['/username', 'required'],
    ],
  );
  t.match(problems[0]!.detail, 'The topic filter "bad/#/x" "#" must be a whole level');
  t.same(
    checkConfig(plugin, { ...base, url: 'mqtt://broker:99999' }).map((p) => p.code),
    ['invalid_broker_url'],
  );
  t.same(
    checkConfig(plugin, { ...base, mapping: { title: 'a..b' } }).map((p) => [p.path, p.code]),
    [['/mapping/title', 'invalid_path_expression']],
  );
  t.same(
    checkConfig(plugin, { ...base, mapping: { event_key: 'a.__proto__' } }).map((p) => p.path),
    ['/mapping/event_key'],
  );
  for (const url of ['http://broker:1883', 'mqtt://broker/path', 'mqtt://user:pw@broker', 'mqtt://', 'ws://broker']) {
    t.throws(() => checkConfig(plugin, { ...base, url }), /invalid config: \/url/, `${url} is refused by the schema`);
  }
  t.throws(() => checkConfig(plugin, { ...base, topics: [] }), /\/topics/, 'at least one topic');
  t.throws(() => checkConfig(plugin, { ...base, qos: 2 }), /\/qos/, 'QoS 2 is not offered');
  t.throws(() => checkConfig(plugin, { ...base, client_id: 'has space' }), /\/client_id/);
  t.throws(() => checkConfig(plugin, { ...base, extra: 1 }), /extra is not a field/);
});

t.test('create() refuses what validateConfig refuses', async (t) => {
  const host = createTestHost();
  await t.rejects(host.provider(plugin, { ...base, topics: ['a/#/b'] }), { code: 'CONFIG', message: /\/topics\/0/ });
});

t.test('the default client id is stable per provider and 23 characters long', async (t) => {
  t.equal(defaultClientId('01J8ZK1'), defaultClientId('01J8ZK1'));
  t.not(defaultClientId('01J8ZK1'), defaultClientId('01J8ZK2'));
  t.match(defaultClientId('anything'), /^herald-[0-9a-f]{16}$/);
  t.equal(defaultClientId('anything').length, 23);
});

const mapping = (m: Record<string, unknown> = {}) => {
  const cfg = checkConfig(plugin, { ...base, mapping: m });
  t.same(cfg, []);
  return compileMapping({ title: 'title', body: 'body || message', severity: 'severity', ...m } as never);
};
const msg = (topic: string, payload: string | Buffer, retained?: boolean) => ({
  topic,
  payload: typeof payload === 'string' ? Buffer.from(payload) : payload,
  retained,
});

t.test('JSON messages through the default mapping', async (t) => {
  const m = mapping();
  t.same(
    mapMessage(m, msg('lab/ups', '{"title":"On battery","severity":"critical"}')),
    {
      topic: 'lab/ups',
      title: 'On battery',
      body: '{"title":"On battery","severity":"critical"}',
      severity: 'critical',
      fields: { title: 'On battery', body: null, severity: 'critical' },
    },
    'no body field: the message itself is the body',
  );
  t.same(
    mapMessage(m, msg('a', '{"title":"T","message":"M","severity":"WARNING"}')),
    {
      topic: 'a',
      title: 'T',
      body: 'M',
      severity: 'warning',
      fields: { title: 'T', body: 'M', severity: 'WARNING' },
    },
    'body falls back to message; severity names in any case',
  );
  t.match(
    mapMessage(m, msg('a', '{"severity":"bogus"}')),
    { title: 'a', severity: 'info' },
    'an unknown severity is info, a missing title the topic',
  );
  t.match(
    mapMessage(m, msg('a', '[{"title":"in an array"}]')),
    { title: 'a', body: '[{"title":"in an array"}]' },
    'an array is JSON too',
  );
  t.match(mapMessage(m, msg('a', '  {"title":"spaces before"}')), { title: 'spaces before' });
});

t.test('a custom mapping: templates, topic levels, severity map, event key', async (t) => {
  const m = mapping({
    title: "{{$levels[1]}} {{device.name || 'device'}}",
    body: 'state.value',
    severity: 'state.level',
    severity_map: { alarm: 'critical', low: 'warning' },
    event_key: 'device.id',
  });
  t.same(
    mapMessage(
      m,
      msg('frigate/garage/events', '{"device":{"id":42,"name":"Cam"},"state":{"value":"person","level":"ALARM"}}'),
    ),
    {
      topic: 'frigate/garage/events',
      title: 'garage Cam',
      body: 'person',
      severity: 'critical',
      event_key: '42',
      fields: { title: 'garage Cam', body: 'person', severity: 'ALARM', event_key: '42' },
    },
  );
  const k = mapMessage(mapping({ event_key: '$topic', title: '$levels[-1]' }), msg('zigbee2mqtt/kitchen', 'on'));
  t.match(
    k,
    { title: 'kitchen', event_key: 'zigbee2mqtt/kitchen', body: 'on' },
    'topic variables work for plain messages too',
  );
  t.match(mapMessage(mapping({ title: '{{$levels[1]}} is {{$text}}' }), msg('tele/plug1/LWT', 'Offline')), {
    title: 'plug1 is Offline',
    body: 'Offline',
  });
  const literal = mapMessage(mapping({ severity: "'warning'" }), msg('a', 'text'));
  t.equal(literal.severity, 'warning', 'a literal severity applies to every message');
  const unset = mapMessage(mapping({ title: '', body: '', severity: '' }), msg('a/b', '{"title":"ignored"}'));
  t.same(
    unset,
    { topic: 'a/b', title: 'a/b', body: '{"title":"ignored"}', severity: 'info', fields: {} },
    'empty mapping fields are unset',
  );
});

t.test('plain, empty, binary, oversized and deeply nested payloads', async (t) => {
  const m = mapping();
  t.same(mapMessage(m, msg('alerts/smoke', 'Smoke in the kitchen')), {
    topic: 'alerts/smoke',
    title: 'alerts/smoke',
    body: 'Smoke in the kitchen',
    severity: 'info',
    fields: { title: null, body: null, severity: null },
  });
  t.match(mapMessage(m, msg('a', 'not {json')), { body: 'not {json' });
  t.match(
    mapMessage(m, msg('a', '{broken json')),
    { title: 'a', body: '{broken json' },
    'JSON that does not parse is text',
  );
  t.match(mapMessage(m, msg('a', '42')), { title: 'a', body: '42' }, 'a bare JSON value is text');
  t.match(mapMessage(m, msg('a', '')), { title: 'a', body: '' });
  t.match(mapMessage(m, msg('a', Buffer.from([0xff, 0xfe, 0x00, 0x81]))), { body: '(binary payload, 4 bytes)' });
  const long = 'x'.repeat(MAX_BODY + 10);
  const cut = mapMessage(m, msg('a', long));
  t.equal(cut.body.length, MAX_BODY, 'the body is bounded');
  t.ok(cut.body.endsWith('…'));
  t.equal(mapMessage(m, msg('a', 'y'.repeat(MAX_BODY))).body.length, MAX_BODY, 'exactly at the bound: kept whole');
  t.notOk(mapMessage(m, msg('a', 'y'.repeat(MAX_BODY))).body.endsWith('…'));
  const big = `{"title":"big","pad":"${'p'.repeat(MAX_JSON_BYTES)}"}`;
  t.match(mapMessage(m, msg('a', big)), { title: 'a' }, 'JSON over the parse limit is read as text');
  t.equal(
    decodePayload(Buffer.from(`{"title":"x","pad":"${'p'.repeat(MAX_JSON_BYTES - 100)}"}`)).json !== undefined,
    true,
    'under the limit: parsed',
  );
  t.match(
    mapMessage(m, msg('a', `${'['.repeat(100)}${']'.repeat(100)}`)),
    { title: 'a' },
    'JSON nested deeper than 64 levels is text',
  );
  t.match(mapMessage(m, msg('t'.repeat(2000), 'x')).topic.length, 1024);
  t.match(mapMessage(m, msg('r', 'x', true)), { retained: true });
  t.notOk('retained' in mapMessage(m, msg('r', 'x', false)));
});

t.test('every mapped payload is a valid mqtt_message event', async (t) => {
  const m = mapping({ event_key: 'id' });
  for (const p of ['{"title":"a","id":1}', 'plain', '[1,2]', '']) {
    const payload = mapMessage(m, msg('x/y', p, true));
    t.doesNotThrow(() => checkEvent(plugin, { type: 'mqtt_message', payload, severity: payload.severity }));
  }
  for (const [type, spec] of Object.entries(plugin.manifest.events!))
    t.doesNotThrow(() => checkEvent(plugin, { type, payload: spec.example! }), `${type}: example`);
});

t.test('connection failures: CONNACK codes and network errors, explained in both languages', async (t) => {
  const o = { broker: 'b:1883', clientId: 'herald-x', timeoutMs: 10_000 };
  const connack = (code: number, message: string) =>
    Object.assign(new Error(`Connection refused: ${message}`), { code });
  t.match(classifyConnectError(connack(4, 'Bad username or password'), o), {
    kind: 'auth',
    reason: 'credentials_refused',
    texts: { en: /CONNACK 4: Bad username or password/, ru: /отклонил имя пользователя или пароль \(CONNACK 4\)/ },
  });
  t.match(classifyConnectError(connack(5, 'Not authorized'), o), { kind: 'auth', reason: 'not_authorized' });
  t.match(classifyConnectError(connack(134, 'Bad User Name or Password'), o), {
    kind: 'auth',
    reason: 'credentials_refused',
  });
  t.match(classifyConnectError(connack(135, 'Not authorized'), o), { kind: 'auth', reason: 'not_authorized' });
  t.match(classifyConnectError(connack(2, 'Identifier rejected'), o), {
    kind: 'config',
    reason: 'client_id_rejected',
    texts: { en: /client id herald-x/ },
  });
  t.match(classifyConnectError(connack(1, 'Unacceptable protocol version'), o), {
    kind: 'config',
    reason: 'protocol_refused',
  });
  t.match(classifyConnectError(connack(3, 'Server unavailable'), o), { kind: 'retry', reason: 'broker_unavailable' });
  t.match(
    classifyConnectError(Object.assign(new Error('connect ECONNREFUSED 10.0.0.1:1883'), { code: 'ECONNREFUSED' }), o),
    { kind: 'retry', texts: { en: 'Cannot reach the MQTT broker b:1883: connect ECONNREFUSED 10.0.0.1:1883.' } },
  );
  t.match(classifyConnectError(Object.assign(new Error('late'), { timedOut: true }), o), {
    kind: 'retry',
    reason: 'timeout',
    texts: { en: 'The MQTT broker b:1883 did not answer within 10 s.', ru: 'MQTT-брокер b:1883 не ответил за 10 с.' },
  });
  t.match(
    classifyConnectError(
      Object.assign(new Error('refused 10.0.0.1: set SERVICE_OUTBOUND_ALLOW_CIDRS'), { code: 'OUTBOUND_REFUSED' }),
      o,
    ),
    { kind: 'config', reason: 'address_refused' },
  );
});

t.test('an address the policy refuses stops the provider with a config error', async (t) => {
  const host = createTestHost({ http: createTestHttp({ refuse: (h) => h === '10.0.0.1' }) });
  const h = await host.provider(plugin, { ...base, url: 'mqtt://10.0.0.1:1883' });
  await t.rejects(async () => h.instance.start?.(), {
    code: 'CONFIG',
    message: new RegExp(
      /Herald may not connect to the MQTT broker 10\.0\.0\.1:1883: refused to connect to 10\.0\.0\.1/.source +
        /.*Herald не разрешено подключаться/.source,
    ),
  });
});

t.test('reconnect backoff doubles from the minimum up to the cap, with jitter', async (t) => {
  t.equal(
    backoffDelay(0, 1000, 60_000, () => 0),
    500,
  );
  t.equal(
    backoffDelay(0, 1000, 60_000, () => 1),
    1000,
  );
  t.equal(
    backoffDelay(3, 1000, 60_000, () => 1),
    8000,
  );
  t.equal(
    backoffDelay(10, 1000, 60_000, () => 1),
    60_000,
  );
  t.equal(
    backoffDelay(1000, 1000, 60_000, () => 0),
    30_000,
  );
});

t.test('locales: every field, option and event in English and Russian; the same error texts in both', async (t) => {
  t.same(missingLocaleStrings(plugin.manifest, 'en'), []);
  t.same(missingLocaleStrings(plugin.manifest, 'ru'), []);
  t.same(Object.keys(ru.errors).sort(), Object.keys(en.errors).sort());
  const placeholders = (s: string) =>
    [...s.matchAll(/\{(\w+)\}/g)]
      .map((m) => m[1])
      .filter((p) => p !== 'reason')
      .sort();
  for (const [k, v] of Object.entries(en.errors))
    t.same(placeholders(ru.errors[k as keyof typeof ru.errors]), placeholders(v), `errors.${k}: same placeholders`);
  t.match(explain('timeout', { broker: 'b', seconds: 3 }), {
    en: 'The MQTT broker b did not answer within 3 s.',
    ru: 'MQTT-брокер b не ответил за 3 с.',
  });
});

t.test('the manifest loads without MQTT.js; it is imported with the first connection', async (t) => {
  const entry = path.join(import.meta.dirname, 'index.ts');
  const script =
    `
    import { registerHooks } from 'node:module';
    registerHooks({ resolve(spec, ctx, next) { if (spec === 'mqtt') throw new Error('mqtt was imported'); ` +
    `return next(spec, ctx); } });
    const m = await import(${JSON.stringify(entry)});
    console.log(m.default.manifest.id, typeof m.default.create);
  `;
  const out = await new Promise<string>((resolve, reject) => {
    execFile(
      process.execPath,
      ['--conditions=herald-source', '--input-type=module', '-e', script],
      { timeout: 20_000 },
      (err, stdout, stderr) => (err ? reject(new Error(stderr || err.message)) : resolve(stdout)),
    );
  });
  t.equal(out.trim(), 'mqtt function');
});
