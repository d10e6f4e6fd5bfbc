import http from 'node:http';
import { errorCode, missingLocaleStrings, secretPaths } from '@herald/plugin-api';
import { checkConfig, createTestHost, FakeClock } from '@herald/plugin-api/testing';
import t from 'tap';
import { ERR, NtfyServer } from '../test/fakes/ntfy-server.ts';
import plugin, { DEFAULT_RETRY_AFTER_MS, MAX_JSON_BYTES } from './index.ts';

const TOKEN = 'tk_AgQdq7mVBoFD37zQVN29RhuMzNIz2';

async function setup(tt: any, extra: Record<string, unknown> = {}, host = createTestHost()) {
  const ntfy = await new NtfyServer().start();
  tt.teardown(() => ntfy.close());
  const harness = await host.target(plugin, { server_url: ntfy.url, topic: 'herald_alerts', ...extra });
  const o = { signal: harness.abort.signal, attempt: 1 };
  const send = (m = {}) => harness.instance.send(harness.message(m, { fit: false }), o);
  return { ntfy, harness, send, o };
}

const caught = (p: Promise<unknown>) =>
  p.then(
    () => {
      throw new Error('expected a failure');
    },
    (e: unknown) => e as any,
  );
const bytes = (s: string) => Buffer.byteLength(s, 'utf8');

t.test('manifest: id, limits, secrets, defaults and complete locales', async (tt) => {
  const m = plugin.manifest;
  tt.equal(m.id, 'ntfy');
  tt.equal(m.kind, 'target');
  tt.same(m.limits, { maxMessageLength: 4096, maxTitleLength: 256, overflow: 'split', formats: ['markdown', 'text'] });
  tt.same(secretPaths(m.configSchema), ['topic', 'token', 'password']);
  tt.equal((m.configSchema as any).properties.server_url.default, 'https://ntfy.sh');
  tt.same(missingLocaleStrings(m, 'en'), []);
  tt.same(missingLocaleStrings(m, 'ru'), []);
});

t.test('publishes JSON to the server root: topic, message, title, priority, tags, click', async (tt) => {
  const { ntfy, send } = await setup(tt);
  const result = await send({
    eventType: 'ups_on_battery',
    severity: 'critical',
    title: 'UPS **on battery**',
    plainTitle: 'UPS on battery',
    body: 'Load *40%*',
    plainBody: 'Load 40%',
    url: 'https://nas.example/ups',
  });
  const got = ntfy.received[0]!;
  tt.equal(got.method, 'POST');
  tt.equal(got.path, '/', 'JSON publishing goes to the root URL, not the topic URL');
  tt.match(got.headers['content-type'], /^application\/json/);
  tt.equal(got.headers.authorization, undefined, 'no login configured, none sent');
  tt.notMatch(got.path, /herald_alerts/, 'the topic (a secret) travels in the body, not in the URL');
  tt.same(got.body, {
    topic: 'herald_alerts',
    message: 'Load 40%',
    title: 'UPS on battery',
    priority: 5,
    tags: ['rotating_light', 'ups_on_battery'],
    click: 'https://nas.example/ups',
  });
  tt.equal(result!.remoteId, ntfy.published[0]!.id, "ntfy's message id is the remote id");
  tt.same(
    result!.messageRef,
    { server: ntfy.url, id: ntfy.published[0]!.id, title: 'UPS on battery' },
    'no topic: it is a secret',
  );
});

t.test('priority and the emoji tag follow the severity', async (tt) => {
  const { ntfy, send } = await setup(tt);
  await send({ severity: 'info', eventType: 'backup_done' });
  await send({ severity: 'warning', eventType: 'disk_low' });
  await send({ severity: 'critical', eventType: 'disk_failed' });
  tt.same(
    ntfy.received.map((r) => [r.body.priority, r.body.tags]),
    [
      [3, ['backup_done']],
      [4, ['warning', 'disk_low']],
      [5, ['rotating_light', 'disk_failed']],
    ],
  );
  tt.notOk('click' in ntfy.received[0]!.body, 'no URL, no click action');
});

t.test('markdown: sent with markdown:true only when switched on and the message is Markdown', async (tt) => {
  const m = { format: 'markdown' as const, body: 'Disk **sda** at 91\\%', plainBody: 'Disk sda at 91%' };
  let { ntfy, send } = await setup(tt, { markdown: true });
  await send(m);
  tt.same([ntfy.received[0]!.body.message, ntfy.received[0]!.body.markdown], ['Disk **sda** at 91\\%', true]);
  tt.equal(ntfy.published[0]!.content_type, 'text/markdown', 'ntfy stores it as Markdown');
  await send({ ...m, format: 'text', body: 'Disk sda at 91%' });
  tt.notOk('markdown' in ntfy.received[1]!.body, 'a plain-text message has no markdown flag');

  ({ ntfy, send } = await setup(tt));
  await send(m);
  tt.equal(ntfy.received[0]!.body.message, 'Disk sda at 91%', 'off (the default): the plain text, for the phone apps');
  tt.notOk('markdown' in ntfy.received[0]!.body);
});

t.test('a title-only message shows its title as the message', async (tt) => {
  const { ntfy, send } = await setup(tt);
  await send({ body: '', plainBody: '', title: 'Door opened', plainTitle: 'Door opened' });
  tt.same(ntfy.received[0]!.body.message, 'Door opened');
  tt.notOk('title' in ntfy.received[0]!.body);
});

t.test(
  'login: access token as Bearer, user name and password as Basic; the protected topic accepts them',
  async (tt) => {
    let { ntfy, send } = await setup(tt, { topic: 'protected', token: TOKEN });
    await send();
    tt.equal(ntfy.received[0]!.headers.authorization, `Bearer ${TOKEN}`);
    tt.equal(ntfy.published.length, 1);

    ({ ntfy, send } = await setup(tt, { topic: 'protected', username: 'phil', password: 'mypass-123' }));
    await send();
    tt.equal(ntfy.received[0]!.headers.authorization, `Basic ${Buffer.from('phil:mypass-123').toString('base64')}`);
    tt.equal(ntfy.published.length, 1);
  },
);

t.test('rejected credentials are auth failures (401, 403), never with the secret in the message', async (tt) => {
  let { ntfy, send } = await setup(tt, { token: 'tk_wrongwrongwrongwrongwrongwr' });
  let err = await caught(send());
  tt.equal(errorCode(err), 'AUTH_FAILED');
  tt.equal(err.statusCode, 401);
  tt.match(err.message, /^ntfy answered 401: unauthorized \(40101\); the server rejected the credentials/);
  tt.notMatch(err.message, /tk_wrong/);
  tt.equal(ntfy.published.length, 0);

  ({ send } = await setup(tt, { topic: 'protected' }));
  err = await caught(send());
  tt.equal(errorCode(err), 'AUTH_FAILED', 'anonymous on a protected topic');
  tt.equal(err.statusCode, 403);

  ({ send } = await setup(tt, { topic: 'protected', username: 'reader', password: 'reader-pass' }));
  err = await caught(send({ locale: 'ru' }));
  tt.equal(errorCode(err), 'AUTH_FAILED', 'a user without write access');
  tt.match(
    err.message,
    /^ntfy ответил 403: forbidden \(40301\); сервер не принял учётные данные/,
    "worded in the target's language",
  );
});

t.test('limits: exactly 4,096 bytes is one message, 4,097 bytes is split into parts of at most 4,096', async (tt) => {
  const { ntfy, send } = await setup(tt);
  const exact = 'x'.repeat(4096);
  await send({ body: exact, plainBody: exact });
  tt.equal(ntfy.published.length, 1);
  tt.equal(ntfy.published[0]!.message, exact, 'unsplit, unchanged');

  const over = `${'word '.repeat(819)}xy`; // 4,097 bytes
  tt.equal(bytes(over), 4097);
  const r = await send({ body: over, plainBody: over, deliveryId: 'd-over' });
  const parts = ntfy.published.slice(1).map((p) => p.message);
  tt.equal(parts.length, 2);
  for (const p of parts) tt.ok(bytes(p) <= 4096, `${bytes(p)} <= 4096`);
  tt.match(parts[0], /\n\n\(part 1 of 2\)$/);
  tt.match(parts[1], /\n\n\(part 2 of 2\)$/);
  tt.equal(parts.map((p) => p.replace(/\n\n\(part \d of 2\)$/, '')).join(' '), over, 'cut at a space, nothing lost');
  tt.equal(r!.remoteId, ntfy.published[1]!.id, 'the first part is the remote id');
  tt.equal(r!.detail, 'Delivered as 2 ntfy messages of at most 4096 bytes each.');
});

t.test('limits in bytes, not characters: 2,048 Cyrillic letters fit, 2,049 are split (in Russian)', async (tt) => {
  const { ntfy, send } = await setup(tt);
  await send({ locale: 'ru', body: 'я'.repeat(2048), plainBody: 'я'.repeat(2048) });
  tt.equal(ntfy.published.length, 1);
  const r = await send({ locale: 'ru', body: 'я'.repeat(2049), plainBody: 'я'.repeat(2049) });
  tt.equal(r!.detail, 'Доставлено 2 сообщениями ntfy, каждое не больше 4096 байт.');
  const parts = ntfy.published.slice(1).map((p) => p.message);
  tt.equal(parts.length, 2);
  for (const p of parts) tt.ok(bytes(p) <= 4096);
  tt.match(parts[1], /\(часть 2 из 2\)$/);
});

t.test("the JSON body stays within ntfy's 8,192 bytes when escaping doubles the message", async (tt) => {
  const { ntfy, send } = await setup(tt);
  const quotes = '"'.repeat(4096); // 4,096 bytes as text (fits the message size), 8,192 escaped
  await send({ body: quotes, plainBody: quotes });
  tt.ok(ntfy.received.length >= 2, 'split into several publishes');
  for (const r of ntfy.received) tt.ok(r.bytes <= MAX_JSON_BYTES, `${r.bytes} <= ${MAX_JSON_BYTES}`);
  tt.equal(ntfy.published.map((p) => p.message.replace(/\n\n\(part \d of \d\)$/, '')).join(''), quotes);
});

t.test('a retry of a split message sends only the parts ntfy has not accepted', async (tt) => {
  const { ntfy, harness, o } = await setup(tt);
  const over = `${'word '.repeat(819)}xy`;
  const message = harness.message({ body: over, plainBody: over, deliveryId: 'd-split' }, { fit: false });
  ntfy.failAt = 2;
  const err = await caught(harness.instance.send(message, o));
  tt.equal(errorCode(err), 'RETRYABLE_SEND');
  tt.equal(ntfy.published.length, 1, 'the first part went out');
  const r = await harness.instance.send(message, { ...o, attempt: 2 });
  tt.equal(ntfy.published.length, 2, 'only the second part is sent again');
  tt.match(ntfy.published[1]!.message, /\(part 2 of 2\)$/);
  tt.equal(r!.remoteId, ntfy.published[0]!.id);
});

t.test(
  "429: RateLimitedError; 5 s without Retry-After, a proxy's Retry-After, the daily quota until 00:00 UTC",
  async (tt) => {
    const clock = new FakeClock('2026-03-01T23:00:00Z');
    const { ntfy, send } = await setup(tt, {}, createTestHost({ clock }));
    ntfy.rateLimit = { count: 1, code: 42901 };
    let err = await caught(send());
    tt.equal(errorCode(err), 'RATE_LIMITED');
    tt.equal(err.retryAfterMs, DEFAULT_RETRY_AFTER_MS);
    tt.match(err.message, /too many requests \(42901\)/);

    ntfy.rateLimit = { count: 1, code: 42901, retryAfter: '7' };
    err = await caught(send());
    tt.equal(err.retryAfterMs, 7000);

    ntfy.rateLimit = { count: 1, code: 42908 };
    err = await caught(send());
    tt.equal(err.retryAfterMs, 3_600_000, 'one hour to midnight UTC');
    tt.match(err.message, /daily message quota/);

    await send();
    tt.equal(ntfy.published.length, 1, 'the retry goes through');
  },
);

t.test('5xx and network failures are retryable; other 4xx are permanent', async (tt) => {
  const { ntfy, send, harness, o } = await setup(tt);
  ntfy.failNext = ERR.internal;
  let err = await caught(send());
  tt.equal(errorCode(err), 'RETRYABLE_SEND');
  tt.equal(err.statusCode, 500);

  ntfy.failNext = ERR.attachmentsDisallowed;
  err = await caught(send());
  tt.equal(errorCode(err), 'PERMANENT_SEND');
  tt.equal(err.statusCode, 400);
  tt.equal(err.message, 'ntfy answered 400: invalid request: attachments not allowed (40014)');

  ntfy.failNext = ERR.jsonTooLarge;
  err = await caught(send());
  tt.equal(errorCode(err), 'PERMANENT_SEND');
  tt.match(err.message, /JSON body too large \(41303\); the message is longer than the server accepts/);

  await ntfy.close();
  err = await caught(harness.instance.send(harness.message({ locale: 'ru' }), o));
  tt.equal(errorCode(err), 'RETRYABLE_SEND');
  tt.equal(err.statusCode, 0);
  tt.match(err.message, /^не удалось связаться с сервером ntfy/);
});

t.test('a redirect is refused, not followed: the credentials and message stay put', async (tt) => {
  const ntfy = await new NtfyServer().start();
  tt.teardown(() => ntfy.close());
  const moved = http.createServer((req, res) => res.writeHead(307, { location: `${ntfy.url}${req.url}` }).end());
  await new Promise<void>((r) => moved.listen(0, '127.0.0.1', r));
  tt.teardown(() => {
    moved.closeAllConnections();
    moved.close();
  });
  const harness = await createTestHost().target(plugin, {
    server_url: `http://127.0.0.1:${(moved.address() as { port: number }).port}`,
    topic: 'protected',
    token: TOKEN,
  });
  const err = await caught(harness.instance.send(harness.message(), { signal: harness.abort.signal, attempt: 1 }));
  tt.equal(errorCode(err), 'PERMANENT_SEND');
  tt.match(err.message, /redirect/);
  tt.same(ntfy.received, [], 'the other server saw nothing');
});

t.test(
  'ntfy cannot edit: update is not supported, reply posts a new message naming the earlier one (en, ru)',
  async (tt) => {
    const { ntfy, send, harness, o } = await setup(tt);
    const first = await send({ plainTitle: 'UPS on battery', title: 'UPS on battery' });
    const previous = { messageRef: first!.messageRef!, deliveryId: 'd1', eventType: 'ups_on_battery' };
    tt.equal(await harness.instance.update!({ previous, message: harness.message() }, o), false);

    await harness.instance.reply!(
      { previous, message: harness.message({ plainTitle: 'UPS on line', plainBody: 'Charge 90%' }) },
      o,
    );
    tt.equal(ntfy.received.at(-1)!.body.message, 'Update to “UPS on battery”:\nCharge 90%');
    tt.equal(ntfy.received.at(-1)!.body.title, 'UPS on line');

    await harness.instance.reply!(
      { previous, message: harness.message({ locale: 'ru', plainTitle: 'ИБП от сети', plainBody: 'Заряд 90%' }) },
      o,
    );
    tt.equal(ntfy.received.at(-1)!.body.message, 'Обновление к «UPS on battery»:\nЗаряд 90%');

    const moved = { ...previous, messageRef: { ...previous.messageRef, server: 'https://ntfy.example.net' } };
    tt.equal(
      await harness.instance.reply!({ previous: moved, message: harness.message() }, o),
      false,
      'an earlier message on another server is not followed',
    );
  },
);

t.test('reply in Markdown: the earlier title is escaped inside an italic line', async (tt) => {
  const { ntfy, harness, o } = await setup(tt, { markdown: true });
  const previous = {
    messageRef: { server: ntfy.url, id: 'x', title: 'disk_1 *full*' },
    deliveryId: 'd1',
    eventType: 'disk',
  };
  await harness.instance.reply!({ previous, message: harness.message({ format: 'markdown', body: '**ok** now' }) }, o);
  tt.equal(ntfy.received[0]!.body.message, '_Update to “disk\\_1 \\*full\\*”:_\n\n**ok** now');
  tt.equal(ntfy.received[0]!.body.markdown, true);
});

t.test('validateConfig: http(s) server addresses and ntfy-legal topics only, one way to log in', async (tt) => {
  tt.same(checkConfig(plugin, { topic: 'herald_alerts' }), [], 'the default server https://ntfy.sh');
  tt.same(checkConfig(plugin, { server_url: 'http://ntfy.lan:8080', topic: 'a-b_C9', token: TOKEN }), []);
  tt.same(
    checkConfig(plugin, {
      server_url: 'https://ntfy.example.net/',
      topic: 'x'.repeat(64),
      username: 'phil',
      password: 'p',
    }),
    [],
  );
  tt.throws(
    () => checkConfig(plugin, { server_url: 'ftp://ntfy.example.net', topic: 'herald' }),
    /server_url/,
    'the schema refuses ftp',
  );

  const v = plugin.validateConfig!;
  const base = { server_url: 'https://ntfy.sh', topic: 'herald', markdown: false };
  const codes = (c: Record<string, unknown>) => v({ ...base, ...c } as any).map((p) => `${p.path} ${p.code}`);
  tt.same(codes({ server_url: 'ftp://ntfy.example.net' }), ['/server_url pattern']);
  tt.match(
    v({ ...base, server_url: 'ftp://ntfy.example.net' })[0],
    { params: { pattern: '^https?://' }, detail: /must start with http:\/\/ or https:\/\// },
    "the web client words a ^https?:// pattern in the user's language",
  );
  tt.same(codes({ server_url: 'https://phil:pw@ntfy.example.net' }), ['/server_url url_credentials']);
  tt.same(codes({ server_url: 'https://ntfy.example.net/?x=1' }), ['/server_url url_query']);
  tt.same(codes({ topic: 'x'.repeat(65) }), ['/topic pattern']);
  tt.same(codes({ topic: 'has space' }), ['/topic pattern']);
  tt.same(codes({ topic: 'a/b' }), ['/topic pattern']);
  tt.same(codes({ token: TOKEN, username: 'phil', password: 'p' }), ['/token auth_conflict']);
  tt.same(codes({ username: 'phil' }), ['/password required']);
  tt.same(codes({ password: 'p' }), ['/username required']);
});
