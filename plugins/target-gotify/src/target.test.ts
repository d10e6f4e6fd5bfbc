import http from 'node:http';
import { errorCode, missingLocaleStrings, secretPaths } from '@herald/plugin-api';
import { checkConfig, createTestHost } from '@herald/plugin-api/testing';
import t from 'tap';
import { APP_TOKEN, CLIENT_TOKEN, GotifyServer } from '../test/fakes/gotify-server.ts';
import plugin, { DEFAULT_RETRY_AFTER_MS, MAX_MESSAGE_LENGTH, TOKEN_HEADER } from './index.ts';

async function setup(tt: any, extra: Record<string, unknown> = {}, prefix = '') {
  const gotify = await new GotifyServer(prefix).start();
  tt.teardown(() => gotify.close());
  const harness = await createTestHost().target(plugin, { server_url: gotify.url, app_token: APP_TOKEN, ...extra });
  const o = { signal: harness.abort.signal, attempt: 1 };
  const send = (m = {}) => harness.instance.send(harness.message(m), o);
  return { gotify, harness, send, o };
}

const caught = (p: Promise<unknown>) =>
  p.then(
    () => {
      throw new Error('expected a failure');
    },
    (e: unknown) => e as any,
  );

t.test('manifest: id, limits, the secret token and its header, complete locales', async (tt) => {
  const m = plugin.manifest;
  tt.equal(m.id, 'gotify');
  tt.equal(m.kind, 'target');
  tt.same(m.limits, {
    maxMessageLength: 20_000,
    maxTitleLength: 250,
    overflow: 'truncate',
    formats: ['markdown', 'text'],
  });
  tt.same(secretPaths(m.configSchema), ['app_token']);
  tt.same(m.credentialHeaders, ['x-gotify-key']);
  tt.same(missingLocaleStrings(m, 'en'), []);
  tt.same(missingLocaleStrings(m, 'ru'), []);
});

t.test('POST /message with X-Gotify-Key: title, Markdown message, priority, display and click extras', async (tt) => {
  const { gotify, send } = await setup(tt);
  const result = await send({
    format: 'markdown',
    severity: 'warning',
    title: 'Disk **low**',
    plainTitle: 'Disk low',
    body: 'Only *9%* left',
    plainBody: 'Only 9% left',
    url: 'https://nas.example/disks',
  });
  const got = gotify.received[0]!;
  tt.equal(got.method, 'POST');
  tt.equal(got.path, '/message');
  tt.same(got.query, {}, 'the token is not in the URL');
  tt.equal(got.headers[TOKEN_HEADER], APP_TOKEN);
  tt.match(got.headers['content-type'], /^application\/json/, 'extras are only accepted with a JSON body');
  tt.same(got.body, {
    title: 'Disk low',
    message: 'Only *9%* left',
    priority: 7,
    extras: {
      'client::display': { contentType: 'text/markdown' },
      'client::notification': { click: { url: 'https://nas.example/disks' } },
    },
  });
  tt.equal(result!.remoteId, String(gotify.messages[0]!.id), "Gotify's message id is the remote id");
  tt.same(result!.messageRef, { server: gotify.url, id: String(gotify.messages[0]!.id), title: 'Disk low' });
});

t.test('plain text has no display extra; no URL, no click extra; priority 4, 7, 10 by severity', async (tt) => {
  const { gotify, send } = await setup(tt);
  await send({ format: 'text', severity: 'info', body: 'Backup done' });
  tt.same(gotify.received[0]!.body, { title: 'Title', message: 'Backup done', priority: 4 }, 'no extras at all');
  await send({ format: 'markdown', severity: 'critical', url: 'https://x.example/1' });
  tt.same(gotify.received[1]!.body.extras, {
    'client::display': { contentType: 'text/markdown' },
    'client::notification': { click: { url: 'https://x.example/1' } },
  });
  tt.equal(gotify.received[1]!.body.priority, 10);
  await send({ format: 'markdown', url: 'ftp://x.example/1' });
  tt.same(
    gotify.received[2]!.body.extras,
    { 'client::display': { contentType: 'text/markdown' } },
    'only http(s) links are clickable',
  );
});

t.test('a title-only message sends its title as the message (Gotify requires one)', async (tt) => {
  const { gotify, send } = await setup(tt);
  await send({ format: 'text', body: '', plainBody: '', title: 'Door opened', plainTitle: 'Door opened' });
  tt.same(gotify.received[0]!.body, { message: 'Door opened', priority: 4 });
  tt.equal(gotify.messages[0]!.title, 'Herald', 'Gotify shows the application name as the title');
});

t.test('a server under a path (behind a proxy) keeps its path', async (tt) => {
  const { gotify, send } = await setup(tt, {}, '/gotify');
  await send();
  tt.equal(gotify.received[0]!.path, '/gotify/message');
  tt.equal(gotify.messages.length, 1);
});

t.test('limits: a 20,000-character body goes whole, a longer one is cut to 20,000 with an ellipsis', async (tt) => {
  const { gotify, send } = await setup(tt);
  const exact = 'x'.repeat(MAX_MESSAGE_LENGTH);
  await send({ format: 'text', body: exact });
  tt.equal(gotify.messages[0]!.message, exact);
  await send({ format: 'text', body: `${exact}y` });
  tt.equal(gotify.messages[1]!.message.length, MAX_MESSAGE_LENGTH);
  tt.ok(gotify.messages[1]!.message.endsWith('…'));
});

t.test('401: the token was rejected — an auth failure, not retried, without the token in the message', async (tt) => {
  const { gotify, send } = await setup(tt, { app_token: 'AwrongToken1234' });
  let err = await caught(send());
  tt.equal(errorCode(err), 'AUTH_FAILED');
  tt.equal(err.statusCode, 401);
  tt.equal(
    err.message,
    'Gotify answered 401: you need to provide a valid access token or user credentials to access this api; the ' +
      'application token was rejected; create an application in Gotify (Apps) and paste its token',
  );
  tt.notMatch(err.message, /AwrongToken/);
  err = await caught(send({ locale: 'ru' }));
  tt.match(err.message, /^Gotify ответил 401: .*; токен приложения не принят/);
  tt.equal(gotify.messages.length, 0);
});

t.test("400: Gotify's errorDescription is surfaced, permanent", async (tt) => {
  const { gotify, send } = await setup(tt, { app_token: CLIENT_TOKEN });
  const err = await caught(send());
  tt.equal(errorCode(err), 'PERMANENT_SEND');
  tt.equal(err.statusCode, 400);
  tt.equal(err.message, 'Gotify answered 400: appid is required when not authenticating with an application token');
  gotify.failNext = { status: 400, description: "Field 'message' is required" };
  tt.match((await caught(send())).message, /Field 'message' is required/);
});

t.test('a wrong address (404) is permanent and says to check it', async (tt) => {
  const gotify = await new GotifyServer('/gotify').start();
  tt.teardown(() => gotify.close());
  const harness = await createTestHost().target(plugin, {
    server_url: gotify.url.replace('/gotify', ''),
    app_token: APP_TOKEN,
  });
  const err = await caught(harness.instance.send(harness.message(), { signal: harness.abort.signal, attempt: 1 }));
  tt.equal(errorCode(err), 'PERMANENT_SEND');
  tt.equal(err.statusCode, 404);
  tt.match(err.message, /404 page not found; there is no Gotify API at this address/);
});

t.test('429 from a proxy is rate limited with its Retry-After; 5xx and network failures retry', async (tt) => {
  const { gotify, send, harness, o } = await setup(tt);
  gotify.rateLimit = { count: 1, retryAfter: '12' };
  let err = await caught(send());
  tt.equal(errorCode(err), 'RATE_LIMITED');
  tt.equal(err.retryAfterMs, 12_000);
  gotify.rateLimit = { count: 1 };
  tt.equal((await caught(send())).retryAfterMs, DEFAULT_RETRY_AFTER_MS);

  gotify.failNext = { status: 500, description: 'database is locked' };
  err = await caught(send());
  tt.equal(errorCode(err), 'RETRYABLE_SEND');
  tt.equal(err.statusCode, 500);
  tt.match(err.message, /database is locked/);

  await send();
  tt.equal(gotify.messages.length, 1, 'then it goes through');

  await gotify.close();
  err = await caught(harness.instance.send(harness.message(), o));
  tt.equal(errorCode(err), 'RETRYABLE_SEND');
  tt.equal(err.statusCode, 0);
  tt.match(err.message, /^cannot reach the Gotify server/);
});

t.test('a redirect is refused: the token header never reaches another server', async (tt) => {
  const gotify = await new GotifyServer().start();
  tt.teardown(() => gotify.close());
  const moved = http.createServer((req, res) => res.writeHead(308, { location: `${gotify.url}${req.url}` }).end());
  await new Promise<void>((r) => moved.listen(0, '127.0.0.1', r));
  tt.teardown(() => {
    moved.closeAllConnections();
    moved.close();
  });
  const harness = await createTestHost().target(plugin, {
    server_url: `http://127.0.0.1:${(moved.address() as { port: number }).port}`,
    app_token: APP_TOKEN,
  });
  const err = await caught(
    harness.instance.send(harness.message({ locale: 'ru' }), { signal: harness.abort.signal, attempt: 1 }),
  );
  tt.equal(errorCode(err), 'PERMANENT_SEND');
  tt.match(err.message, /перенаправлением/);
  tt.same(gotify.received, []);
});

t.test(
  'Gotify cannot edit: update is not supported, reply sends a new message naming the earlier one (en, ru)',
  async (tt) => {
    const { gotify, send, harness, o } = await setup(tt);
    const first = await send({ plainTitle: 'UPS on battery' });
    const previous = { messageRef: first!.messageRef!, deliveryId: 'd1', eventType: 'ups_on_battery' };
    tt.equal(await harness.instance.update!({ previous, message: harness.message() }, o), false);

    await harness.instance.reply!(
      { previous, message: harness.message({ format: 'markdown', plainTitle: 'UPS on line', body: 'Charge **90%**' }) },
      o,
    );
    tt.same(gotify.received.at(-1)!.body.message, '_Update to “UPS on battery”:_\n\nCharge **90%**');
    tt.equal(gotify.received.at(-1)!.body.title, 'UPS on line');

    await harness.instance.reply!(
      { previous, message: harness.message({ format: 'text', locale: 'ru', body: 'Заряд 90%' }) },
      o,
    );
    tt.equal(gotify.received.at(-1)!.body.message, 'Обновление к «UPS on battery»:\nЗаряд 90%');

    const elsewhere = { ...previous, messageRef: { ...previous.messageRef, server: 'https://other.example' } };
    tt.equal(await harness.instance.reply!({ previous: elsewhere, message: harness.message() }, o), false);
  },
);

t.test('validateConfig: http(s) server address without token or endpoint in it', async (tt) => {
  tt.same(checkConfig(plugin, { server_url: 'https://gotify.example.net', app_token: APP_TOKEN }), []);
  tt.same(checkConfig(plugin, { server_url: 'http://192.168.1.5:8080/gotify/', app_token: APP_TOKEN }), []);
  tt.throws(() => checkConfig(plugin, { server_url: 'ftp://gotify.example.net', app_token: APP_TOKEN }), /server_url/);
  const codes = (c: Record<string, unknown>) =>
    plugin.validateConfig!({ server_url: 'https://g.example', app_token: APP_TOKEN, ...c } as any).map(
      (p) => `${p.path} ${p.code}`,
    );
  tt.same(codes({ server_url: 'ftp://gotify.example.net' }), ['/server_url pattern']);
  tt.same(codes({ server_url: 'https://gotify.example.net/message?token=abc' }), ['/server_url url_query']);
  tt.same(codes({ server_url: 'https://gotify.example.net/message' }), ['/server_url url_endpoint']);
  tt.same(codes({ server_url: 'https://u:p@gotify.example.net' }), ['/server_url url_credentials']);
  tt.same(codes({ app_token: 'AVyv0 pIxuW9d' }), ['/app_token pattern']);
});
