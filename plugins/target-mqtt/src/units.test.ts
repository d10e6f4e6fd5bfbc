/** The MQTT target's parts that need no broker: config checks, the topic template, the document, errors, locales. */

import { execFile } from 'node:child_process';
import path from 'node:path';
import type { OutboundMessage } from '@herald/plugin-api';
import { missingLocaleStrings } from '@herald/plugin-api';
import { checkConfig, createTestHost } from '@herald/plugin-api/testing';
import t from 'tap';
import en from '../locales/en.json' with { type: 'json' };
import ru from '../locales/ru.json' with { type: 'json' };
import { connectFailure, explain } from './errors.ts';
import plugin, { buildDocument, renderTopic, topicTemplateProblems } from './index.ts';

const base = { url: 'mqtt://broker.lan:1883' };
const message = (m: Partial<OutboundMessage> = {}): OutboundMessage => ({
  deliveryId: 'd1',
  eventId: 'e1',
  eventType: 'mqtt_message',
  severity: 'warning',
  locale: 'en',
  format: 'text',
  title: 'T',
  body: 'B',
  plainTitle: 'T',
  plainBody: 'B',
  ...m,
});

t.test('config defaults and the schema', async (t) => {
  t.same(checkConfig(plugin, base), []);
  const h = await createTestHost().target(plugin, base);
  t.ok(h.instance, 'created with the defaults');
  for (const url of ['http://broker', 'mqtt://broker/path', 'mqtt://u:p@broker', 'tcp://broker']) {
    t.throws(() => checkConfig(plugin, { ...base, url }), /invalid config: \/url/, `${url} refused`);
  }
  t.throws(() => checkConfig(plugin, { ...base, qos: 2 }), /\/qos/);
  t.throws(() => checkConfig(plugin, { ...base, topic: '' }), /\/topic/, 'an empty topic is refused by the schema');
  t.same(
    checkConfig(plugin, { ...base, password: 'p' }).map((p) => [p.path, p.code]),
    [['/username', 'required']],
  );
  t.same(
    checkConfig(plugin, { ...base, url: 'mqtt://broker:70000' }).map((p) => p.code),
    ['invalid_broker_url'],
  );
});

t.test('the topic template: allowed placeholders only, no wildcards, not empty', async (t) => {
  for (const ok of [
    'herald',
    'herald/{{event_type}}',
    'alerts/{{ severity }}/{{event_type}}',
    'a b/ü/{{event_type}}x',
    '/leading',
    'trailing/',
  ]) {
    t.same(topicTemplateProblems(ok), [], `${ok} is accepted`);
  }
  const codes = (s: string) => topicTemplateProblems(s).map((p) => p.code);
  t.same(codes('herald/+/x'), ['invalid_topic']);
  t.same(codes('herald/#'), ['invalid_topic']);
  t.same(codes('herald/{{provider_kind}}/{{event_type}}'), [], 'the provider kind may name a level');
  t.same(codes('herald/{{title}}'), ['unknown_placeholder']);
  t.match(
    topicTemplateProblems('{{title}}')[0]!.detail,
    'A topic may use {{event_type}}, {{severity}}, {{provider_kind}}; {{title}} is not one of them.',
  );
  t.same(codes('herald/{{event_type'), ['invalid_topic']);
  t.same(codes('herald/}}'), ['invalid_topic']);
  t.same(codes('   '), ['minLength']);
  t.same(codes('$SYS/x'), ['invalid_topic']);
  t.same(codes('a\u0000b'), ['invalid_topic']);
  const saved = checkConfig(plugin, { ...base, topic: 'h/+/{{nope}}' });
  t.same(
    saved.map((p) => [p.path, p.code]),
    [
      ['/topic', 'unknown_placeholder'],
      ['/topic', 'invalid_topic'],
    ],
    'refused when saved, with the path',
  );
});

t.test('rendering the topic of a message', async (t) => {
  t.equal(renderTopic('herald/{{event_type}}', message()), 'herald/mqtt_message');
  t.equal(
    renderTopic('a/{{ severity }}/{{event_type}}/b', message({ severity: 'critical', eventType: 'ups_on_battery' })),
    'a/critical/ups_on_battery/b',
  );
  t.equal(
    renderTopic('x/{{event_type}}', message({ eventType: 'odd/+#type' })),
    'x/odd___type',
    'a value cannot add levels or wildcards',
  );
  t.equal(renderTopic('static', message()), 'static');
});

t.test('the JSON document: what OutboundMessage gives, nothing invented', async (t) => {
  const now = new Date('2026-02-03T04:05:06Z');
  t.same(
    buildDocument(
      message({ plainTitle: 'Plain', title: '<b>x</b>', plainBody: 'body', url: 'https://x.test/1', locale: 'ru' }),
      now,
    ),
    {
      title: 'Plain',
      text: 'body',
      severity: 'warning',
      event_type: 'mqtt_message',
      url: 'https://x.test/1',
      locale: 'ru',
      event_id: 'e1',
      delivery_id: 'd1',
      sent_at: '2026-02-03T04:05:06.000Z',
    },
  );
  const test = buildDocument(message({ test: true }), now);
  t.equal(test.test, true);
  t.notOk('url' in test);
  for (const missing of ['provider', 'occurred_at', 'payload'])
    t.notOk(missing in test, `${missing} only when the core hands it over (a digest has none)`);
  const full = buildDocument(
    message({
      provider: { kind: 'nut', name: 'Lab UPS' },
      occurredAt: '2026-02-03T04:00:00.000Z',
      payload: { ups: 'lab', charge: 97 },
    }),
    now,
  );
  t.match(
    full,
    {
      provider: { kind: 'nut', name: 'Lab UPS' },
      occurred_at: '2026-02-03T04:00:00.000Z',
      payload: { ups: 'lab', charge: 97 },
    },
    "the event's provider, time and payload",
  );
  t.equal(
    renderTopic('herald/{{provider_kind}}', message({ provider: { kind: 'nut', name: 'Lab UPS' } })),
    'herald/nut',
  );
  t.equal(renderTopic('herald/{{provider_kind}}', message()), 'herald/digest', 'a digest has no provider of its own');
});

t.test('create() refuses what validateConfig refuses', async (t) => {
  await t.rejects(createTestHost().target(plugin, { ...base, topic: 'a/#' }), {
    code: 'CONFIG',
    message: /\/topic contains \+ or #/,
  });
});

t.test("send errors by cause, in the target's language", async (t) => {
  const o = (locale: string) => ({ broker: 'b:1883', clientId: 'herald-pub-x', timeoutMs: 10_000, locale });
  const connack = (code: number, msg: string) => Object.assign(new Error(`Connection refused: ${msg}`), { code });
  t.match(connectFailure(connack(4, 'Bad username or password'), o('en')), {
    code: 'AUTH_FAILED',
    statusCode: 0,
    message: 'The MQTT broker b:1883 refused the user name or password (CONNACK 4: Bad username or password).',
  });
  t.match(connectFailure(connack(5, 'Not authorized'), o('ru')), {
    code: 'AUTH_FAILED',
    message: /^MQTT-брокер b:1883 не пустил этого клиента \(CONNACK 5\)/,
  });
  t.match(connectFailure(connack(135, 'Not authorized'), o('en')), { code: 'AUTH_FAILED' });
  t.match(connectFailure(connack(2, 'Identifier rejected'), o('en')), {
    code: 'PERMANENT_SEND',
    message: /client id herald-pub-x/,
  });
  t.match(connectFailure(connack(1, 'Unacceptable protocol version'), o('en')), { code: 'PERMANENT_SEND' });
  t.match(connectFailure(connack(3, 'Server unavailable'), o('en')), { code: 'RETRYABLE_SEND' });
  t.match(connectFailure(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }), o('en')), {
    code: 'RETRYABLE_SEND',
    message: 'Cannot reach the MQTT broker b:1883: connect ECONNREFUSED.',
  });
  t.match(connectFailure(Object.assign(new Error('x'), { timedOut: true }), o('ru')), {
    code: 'RETRYABLE_SEND',
    message: 'MQTT-брокер b:1883 не ответил за 10 с.',
  });
  t.match(connectFailure(Object.assign(new Error('refused 10.0.0.1'), { code: 'OUTBOUND_REFUSED' }), o('en')), {
    code: 'PERMANENT_SEND',
    message: /Herald may not connect/,
  });
  t.equal(
    explain('de', 'timeout', { broker: 'b', seconds: 1 }),
    'The MQTT broker b did not answer within 1 s.',
    'an unknown language reads English',
  );
});

t.test('locales: every field and option in English and Russian; the same error texts in both', async (t) => {
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
});

t.test('the manifest loads without MQTT.js; it is imported with the first send', async (t) => {
  const entry = path.join(import.meta.dirname, 'index.ts');
  const script =
    `
    import { registerHooks } from 'node:module';
    registerHooks({ resolve(spec, ctx, next) { if (spec === 'mqtt') throw new Error('mqtt was imported'); ` +
    `return next(spec, ctx); } });
    const m = await import(${JSON.stringify(entry)});
    console.log(m.default.manifest.id, m.default.manifest.kind);
  `;
  const out = await new Promise<string>((resolve, reject) => {
    execFile(
      process.execPath,
      ['--conditions=herald-source', '--input-type=module', '-e', script],
      { timeout: 20_000 },
      (err, stdout, stderr) => (err ? reject(new Error(stderr || err.message)) : resolve(stdout)),
    );
  });
  t.equal(out.trim(), 'mqtt target');
});
