import http from 'node:http';
import { errorCode, missingLocaleStrings, secretPaths } from '@herald/plugin-api';
import { checkConfig, createTestHost } from '@herald/plugin-api/testing';
import t from 'tap';
import { AppriseApiFake } from '../test/fakes/apprise-api.ts';
import plugin, { IDEMPOTENCY_HEADER, NOTIFY_TYPE } from './index.ts';

async function setup(tt: any, extra: Record<string, unknown> = { key: 'homelab' }) {
  const fake = await new AppriseApiFake().start();
  tt.teardown(() => fake.close());
  const harness = await createTestHost().target(plugin, { url: fake.url, ...extra });
  const o = { signal: harness.abort.signal, attempt: 1 };
  const send = (m = {}) => harness.instance.send(harness.message(m, { fit: false }), o);
  return { fake, harness, send, o };
}

const caught = (p: Promise<unknown>) =>
  p.then(
    () => {
      throw new Error('expected a failure');
    },
    (e: unknown) => e as any,
  );

t.test('manifest: id, limits, formats, secret fields, locales complete', async (tt) => {
  const m = plugin.manifest;
  tt.equal(m.id, 'apprise_api');
  tt.same(m.limits, { maxMessageLength: 32768, maxTitleLength: 250, formats: ['markdown'], overflow: 'truncate' });
  tt.same(secretPaths(m.configSchema).sort(), ['password', 'urls']);
  tt.same(missingLocaleStrings(m, 'en'), []);
  tt.same(missingLocaleStrings(m, 'ru'), []);
});

t.test('stateful: POST /notify/<key> with title, plain body, type, format and tag', async (tt) => {
  const { fake, send } = await setup(tt, { key: 'homelab', tag: 'alerts' });
  const result = await send({
    deliveryId: 'del-1',
    title: 'Disk **full**',
    plainTitle: 'Disk full',
    body: 'Volume /data is at 97\\%',
    plainBody: 'Volume /data is at 97%',
    url: 'https://nas.example/disks',
    severity: 'critical',
  });
  tt.equal(fake.received.length, 1);
  const got = fake.received[0]!;
  tt.equal(got.method, 'POST');
  tt.equal(got.path, '/notify/homelab');
  tt.match(got.headers['content-type'], /^application\/json/);
  tt.equal(got.headers.accept, 'application/json');
  tt.equal(got.headers['x-apprise-log-level'], 'INFO');
  tt.equal(got.headers[IDEMPOTENCY_HEADER], 'del-1');
  tt.equal(got.headers.authorization, undefined, 'no credentials unless configured');
  tt.same(got.body, {
    title: 'Disk full',
    body: 'Volume /data is at 97%\n\nhttps://nas.example/disks',
    type: 'failure',
    format: 'text',
    tag: 'alerts',
  });
  tt.same(
    fake.notified.map((n) => n.service),
    ['json://phone', 'json://mail'],
    'the services tagged "alerts"',
  );
  tt.same(result, { detail: 'Apprise notified 2 services', messageRef: { title: 'Disk full' } });
});

t.test('severity maps to Apprise types; success is never used', async (tt) => {
  tt.same(NOTIFY_TYPE, { info: 'info', warning: 'warning', critical: 'failure' });
  const { fake, send } = await setup(tt);
  for (const severity of ['info', 'warning', 'critical'] as const) await send({ severity });
  tt.same(
    fake.received.map((r) => r.body.type),
    ['info', 'warning', 'failure'],
  );
});

t.test('body_format markdown: the Markdown rendering, format markdown, the link as an autolink', async (tt) => {
  const { fake, send } = await setup(tt, { key: 'homelab', body_format: 'markdown' });
  await send({
    title: 'Backup',
    body: 'Copied **42** files to nas\\-1',
    plainBody: 'Copied 42 files to nas-1',
    url: 'https://nas.example/1',
  });
  tt.same(fake.received[0]!.body, {
    title: 'Backup',
    body: 'Copied **42** files to nas\\-1\n\n<https://nas.example/1>',
    type: 'info',
    format: 'markdown',
  });
});

t.test('stateless: POST /notify with the Apprise URLs; basic authentication when configured', async (tt) => {
  const { fake, send } = await setup(tt, {
    urls: 'json://phone, json://tv',
    username: 'herald',
    password: 's3cret-pass',
  });
  fake.basicAuth = { user: 'herald', pass: 's3cret-pass' };
  await send({ title: 'Hi', body: 'there' });
  const got = fake.received[0]!;
  tt.equal(got.path, '/notify');
  tt.equal(got.headers.authorization, `Basic ${Buffer.from('herald:s3cret-pass').toString('base64')}`);
  tt.same(got.body, { title: 'Hi', body: 'there', type: 'info', format: 'text', urls: 'json://phone, json://tv' });
  tt.same(
    fake.notified.map((n) => n.service),
    ['json://phone', 'json://tv'],
  );
});

t.test('an empty body carries the title (Apprise requires a body)', async (tt) => {
  const { fake, send } = await setup(tt);
  await send({ title: 'Only a title', body: '', plainBody: '' });
  tt.same(fake.received[0]!.body, { title: '', body: 'Only a title', type: 'info', format: 'text' });
  tt.equal(fake.notified.length, 3);
});

t.test('limits: a body at the declared limit goes whole; a longer one is cut with the link kept', async (tt) => {
  const { fake, send } = await setup(tt);
  const whole = 'x'.repeat(32_768);
  const r1 = await send({ body: whole, plainBody: whole });
  tt.equal(fake.received[0]!.body.body, whole);
  tt.equal(r1!.detail, 'Apprise notified 3 services');
  const r2 = await send({ body: 'y'.repeat(40_000), plainBody: 'y'.repeat(40_000), url: 'https://nas.example/2' });
  const body: string = fake.received[1]!.body.body;
  tt.equal(body.length, 32_768);
  tt.ok(body.endsWith('…\n\nhttps://nas.example/2'));
  tt.match(r2!.detail, /^Apprise notified 3 services; cut \d+ characters to fit the message limit$/);
  const r3 = await send({ locale: 'ru', body: 'я'.repeat(40_000), plainBody: 'я'.repeat(40_000) });
  tt.match(r3!.detail, /^Apprise уведомил сервисов: 3; обрезано символов: 7233/);
  await send({ title: 'T'.repeat(300) });
  tt.equal(fake.received.at(-1)!.body.title.length, 250);
});

t.test('answers: 204, 400, 401, 404, 424 (none or some sent), 429, 431, 500, mapped and worded', async (tt) => {
  let s = await setup(tt, { key: 'nothing-here' });
  let err = await caught(s.send());
  tt.equal(errorCode(err), 'PERMANENT_SEND', '204 no configuration');
  tt.equal(err.statusCode, 204);
  tt.match(err.message, /^Apprise API answered 204: HTTP 204; no configuration is saved under the key "nothing-here"/);

  s = await setup(tt, { urls: 'notaurl' });
  err = await caught(s.send({ locale: 'ru' }));
  tt.equal(errorCode(err), 'PERMANENT_SEND', '204 no valid URL');
  tt.match(err.message, /^Apprise API ответил 204: .*ни один из адресов Apprise не подходит/);

  s = await setup(tt, { key: 'homelab', tag: 'bad<tag>' });
  err = await caught(s.send());
  tt.equal(errorCode(err), 'PERMANENT_SEND', '400');
  tt.equal(err.message, 'Apprise API answered 400: Unsupported characters found in tag definition');

  s = await setup(tt, { key: 'homelab', username: 'herald', password: 'wrong-pass' });
  s.fake.basicAuth = { user: 'herald', pass: 'right-pass' };
  err = await caught(s.send());
  tt.equal(errorCode(err), 'AUTH_FAILED', '401 from the nginx in front');
  tt.match(err.message, /401 Authorization Required.*refused the credentials/);

  const wrong = await setup(tt);
  const h = await createTestHost().target(plugin, { url: `${wrong.fake.url}/apprise`, key: 'homelab' });
  err = await caught(h.instance.send(h.message(), { signal: h.abort.signal, attempt: 1 }));
  tt.equal(errorCode(err), 'PERMANENT_SEND', '404');
  tt.match(err.message, /no Apprise API answers \/notify at this address/);

  s = await setup(tt, { urls: 'json://downstairs json://down-too' });
  err = await caught(s.send());
  tt.equal(errorCode(err), 'RETRYABLE_SEND', '424 and no service took it: retried');
  tt.equal(err.statusCode, 424);
  tt.match(
    err.message,
    new RegExp(
      /^Apprise API answered 424: One or more notifications could not be sent: /.source +
        /Failed to send JSON notification to \[REDACTED\]: Service Unavailable error=503\.; no service got it/.source,
    ),
    "Apprise's first failure, the secret URL's host redacted",
  );

  s = await setup(tt, { urls: 'json://phone json://downstairs' });
  err = await caught(s.send());
  tt.equal(errorCode(err), 'PERMANENT_SEND', '424 after some services took it: not retried');
  tt.match(err.message, /some services got it and some did not/);
  tt.same(
    s.fake.notified.map((n) => n.service),
    ['json://phone'],
  );

  s = await setup(tt, { key: 'homelab', tag: 'nosuchtag' });
  err = await caught(s.send());
  tt.equal(errorCode(err), 'RETRYABLE_SEND', '424 when the tag matches nothing');

  s = await setup(tt);
  s.fake.failNext = { status: 429, error: 'Too Many Requests', headers: { 'retry-after': '9' } };
  err = await caught(s.send());
  tt.equal(errorCode(err), 'RATE_LIMITED', '429 (a proxy limiting)');
  tt.equal(err.retryAfterMs, 9000);
  s.fake.failNext = { status: 403, error: 'Access denied' };
  err = await caught(s.send());
  tt.equal(errorCode(err), 'AUTH_FAILED', '403');
  tt.equal(err.statusCode, 403);
  s.fake.failNext = { status: 431, error: 'JSON Payload provided is to large' };
  err = await caught(s.send());
  tt.equal(errorCode(err), 'PERMANENT_SEND', '431');
  s.fake.failNext = { status: 500, error: 'An error occurred accessing configuration' };
  err = await caught(s.send());
  tt.equal(errorCode(err), 'RETRYABLE_SEND', '500');
  tt.equal(err.statusCode, 500);
  await s.fake.close();
  err = await caught(s.send());
  tt.equal(errorCode(err), 'RETRYABLE_SEND', 'no answer');
  tt.equal(err.statusCode, 0);
});

t.test('secrets are kept out of error messages and off other origins', async (tt) => {
  const { fake, send } = await setup(tt, { urls: 'json://downstairs-tok3n-abc' });
  const err = await caught(send());
  tt.notMatch(err.message, /tok3n/, 'an Apprise URL echoed back is redacted');
  tt.match(err.message, /\[REDACTED\]/);
  tt.equal(fake.notified.length, 0);

  const other = await new AppriseApiFake().start();
  tt.teardown(() => other.close());
  const moved = http.createServer((req, res) => res.writeHead(307, { location: `${other.url}${req.url}` }).end());
  await new Promise<void>((r) => moved.listen(0, '127.0.0.1', r));
  tt.teardown(() => {
    moved.closeAllConnections();
    moved.close();
  });
  const harness = await createTestHost().target(plugin, {
    url: `http://127.0.0.1:${(moved.address() as { port: number }).port}`,
    urls: 'json://phone',
    username: 'u',
    password: 'pass-word-1',
  });
  const e2 = await caught(harness.instance.send(harness.message(), { signal: harness.abort.signal, attempt: 1 }));
  tt.match(e2.message, /redirect/);
  tt.same(other.received, [], 'neither the URLs nor the password reached the other origin');
});

t.test('following the state: no edit; a reply opens with the update line, in English and Russian', async (tt) => {
  const { fake, harness, send, o } = await setup(tt);
  const first = await send({ title: 'UPS on battery', body: 'Charge 80%' });
  const previous = { messageRef: first!.messageRef!, deliveryId: 'd1', eventType: 'ups_on_battery' };
  tt.equal(await harness.instance.update!({ previous, message: harness.message() }, o), false);
  await harness.instance.reply!(
    { previous, message: harness.message({ title: 'UPS on mains', body: 'Charge 81%' }) },
    o,
  );
  tt.same(fake.received.at(-1)!.body, {
    title: 'UPS on mains',
    body: 'Update to “UPS on battery”:\n\nCharge 81%',
    type: 'info',
    format: 'text',
  });
  await harness.instance.reply!(
    { previous, message: harness.message({ locale: 'ru', title: 'ИБП от сети', body: 'Заряд 81%' }) },
    o,
  );
  tt.equal(fake.received.at(-1)!.body.body, 'Обновление к «UPS on battery»:\n\nЗаряд 81%');
  tt.equal(
    await harness.instance.reply!({ previous: { ...previous, messageRef: {} }, message: harness.message() }, o),
    false,
  );

  const md = await setup(tt, { key: 'homelab', body_format: 'markdown' });
  await md.harness.instance.reply!(
    { previous: { ...previous, messageRef: { title: 'Job *1*' } }, message: md.harness.message({ body: 'done' }) },
    md.o,
  );
  tt.equal(
    md.fake.received.at(-1)!.body.body,
    '_Update to “Job \\*1\\*”:_\n\ndone',
    'Markdown: italic, the earlier title escaped',
  );
});

t.test('validateConfig: exactly one of key and urls, basic auth in pairs, the base address', async (tt) => {
  tt.same(checkConfig(plugin, { url: 'http://apprise.lan:8000', key: 'homelab' }), []);
  tt.same(
    checkConfig(plugin, {
      url: 'http://apprise.lan:8000/apprise',
      urls: 'tgram://bot/chat',
      tag: 'a, b c',
      username: 'u',
      password: 'p',
    }),
    [],
  );
  tt.match(checkConfig(plugin, { url: 'http://apprise.lan:8000' }), [{ path: '/key', code: 'required' }]);
  tt.match(checkConfig(plugin, { url: 'http://apprise.lan:8000', key: 'k', urls: 'json://x' }), [
    { path: '/urls', code: 'key_or_urls' },
  ]);
  tt.match(checkConfig(plugin, { url: 'http://apprise.lan:8000', key: 'k', password: 'p' }), [
    { path: '/username', code: 'required' },
  ]);
  tt.match(checkConfig(plugin, { url: 'http://apprise.lan:8000', key: 'k', username: 'u' }), [
    { path: '/password', code: 'required' },
  ]);
  tt.match(checkConfig(plugin, { url: 'http://apprise.lan:8000/notify/homelab', key: 'homelab' }), [
    { path: '/url', code: 'base_address' },
  ]);
  tt.throws(() => checkConfig(plugin, { url: 'http://apprise.lan:8000', key: 'has space' }), /invalid config: \/key/);
  tt.throws(() => checkConfig(plugin, { url: 'apprise.lan', key: 'k' }), /invalid config: \/url/);
  tt.throws(
    () => checkConfig(plugin, { url: 'http://a.lan', key: 'k', body_format: 'html' }),
    /invalid config: \/body_format/,
  );
});
