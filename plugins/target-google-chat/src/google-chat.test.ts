import http from 'node:http';
import { errorCode, missingLocaleStrings, secretPaths } from '@herald/plugin-api';
import { checkConfig, createTestHost } from '@herald/plugin-api/testing';
import t from 'tap';
import { GoogleChatFake, KEY, SPACE, TOKEN } from '../test/fakes/google-chat.ts';
import plugin, { escapeChat, REPLY_OPTION, threadKeyFor } from './index.ts';

const Z = '\u200b';

async function setup(tt: any, url?: (f: GoogleChatFake) => string) {
  const fake = await new GoogleChatFake().start();
  tt.teardown(() => fake.close());
  const harness = await createTestHost().target(plugin, { url: url ? url(fake) : fake.url() });
  const o = { signal: harness.abort.signal, attempt: 1 };
  const send = (m = {}) => harness.instance.send(harness.message(m), o);
  return { fake, harness, send, o };
}

const caught = (p: Promise<unknown>) =>
  p.then(
    () => {
      throw new Error('expected a failure');
    },
    (e: unknown) => e as any,
  );

t.test('manifest: id, limits, plain-text format, the URL is the secret, locales complete', async (tt) => {
  const m = plugin.manifest;
  tt.equal(m.id, 'google_chat');
  tt.same(m.limits, {
    maxMessageLength: 4096,
    maxTitleLength: 256,
    formats: ['text'],
    overflow: 'truncate',
    ratePerSecond: 1,
    concurrency: 1,
  });
  tt.same(secretPaths(m.configSchema), ['url']);
  tt.same(missingLocaleStrings(m, 'en'), []);
  tt.same(missingLocaleStrings(m, 'ru'), []);
});

t.test(
  'send: spaces.messages.create with a new thread keyed by the delivery, request id and reply option',
  async (tt) => {
    const { fake, send } = await setup(tt);
    const result = await send({
      deliveryId: 'del-7',
      title: 'Backup done',
      body: 'All 42 files copied.',
      url: 'https://nas.example/jobs/1',
    });
    tt.equal(fake.received.length, 1);
    const got = fake.received[0]!;
    tt.equal(got.method, 'POST');
    tt.equal(got.path, `/v1/spaces/${SPACE}/messages`);
    tt.same(got.query, {
      key: KEY,
      token: decodeURIComponent(TOKEN),
      messageReplyOption: REPLY_OPTION,
      requestId: 'del-7',
    });
    tt.match(got.headers['content-type'], /^application\/json/);
    tt.same(got.body, {
      text: '*Backup done*\nAll 42 files copied.\n<https://nas.example/jobs/1|Open>',
      thread: { threadKey: 'herald-del-7' },
    });
    tt.equal(threadKeyFor('del-7'), 'herald-del-7');
    const stored = fake.messages[0]!;
    tt.same(
      result,
      {
        remoteId: stored.name,
        detail: undefined,
        messageRef: { thread_key: 'herald-del-7', thread_name: stored.thread, message: stored.name },
      },
      'the message name is the remote id; the thread is remembered',
    );
  },
);

t.test('the link label speaks the target language; a link the body shows is not repeated', async (tt) => {
  const { fake, send } = await setup(tt);
  await send({ locale: 'ru', title: 'Готово', body: 'Файлы скопированы', url: 'https://nas.example/a|b>c' });
  tt.equal(fake.messages[0]!.text, '*Готово*\nФайлы скопированы\n<https://nas.example/a%7Cb%3Ec|Открыть>');
  await send({ title: 'T', body: 'See https://nas.example/x', url: 'https://nas.example/x' });
  tt.equal(fake.messages[1]!.text, '*T*\nSee https://nas.example/x');
});

t.test('payload text stays literal: no mention, no link syntax, no stray formatting', async (tt) => {
  tt.equal(escapeChat('<users/all> hi'), `<${Z}users/all> hi`, 'a mention of everyone is broken up');
  tt.equal(escapeChat('<https://evil.example|click>'), `<${Z}https://evil.example|click>`);
  tt.equal(
    escapeChat('*urgent* and _this_ ~old~ `x`'),
    `*${Z}urgent${Z}* and _${Z}this${Z}_ ~${Z}old${Z}~ \`${Z}x${Z}\``,
  );
  tt.equal(escapeChat('disk_usage_high 2*3 a~b'), 'disk_usage_high 2*3 a~b', 'inside words nothing changes');
  tt.equal(
    escapeChat('see https://x.example/_a_/*b* now'),
    'see https://x.example/_a_/*b* now',
    'links are left whole',
  );
  const { fake, send } = await setup(tt);
  await send({ title: 'Job *nightly*', body: 'Ping <users/all>' });
  tt.equal(
    fake.messages[0]!.text,
    `*Job *${Z}nightly${Z}**\nPing <${Z}users/all>`,
    'the title in bold around its escaped text',
  );
});

t.test('limits: 4,096 characters in all are sent whole, more are cut to 4,096', async (tt) => {
  const { fake, send } = await setup(tt);
  const head = '*T*\n';
  const fits = 'x'.repeat(4096 - head.length);
  const r1 = await send({ title: 'T', body: fits });
  tt.equal(fake.messages[0]!.text, `${head}${fits}`);
  tt.equal(fake.messages[0]!.text.length, 4096);
  tt.equal(r1!.detail, undefined);

  const r2 = await send({ title: 'T', body: `${fits}y`, url: 'https://nas.example/1' });
  const text = fake.messages[1]!.text;
  tt.equal(text.length, 4096, 'cut to the limit, link kept');
  tt.ok(text.endsWith('…\n<https://nas.example/1|Open>'));
  tt.match(r2!.detail, /^cut \d+ characters to fit Google Chat's 4,096-character limit$/);
  const r3 = await send({ locale: 'ru', body: 'я'.repeat(5000) });
  tt.match(r3!.detail, /^обрезано символов: \d+/);
  tt.equal(
    fake.received.filter((r) => r.body && [...r.body.text].length > 4096).length,
    0,
    'Google never saw more than 4,096',
  );
  await send({ title: 'T'.repeat(300) });
  tt.equal(fake.messages.at(-1)!.text.split('\n')[0]!.length, 256 + 2, 'a long title is cut to 256');
});

t.test('threading: two events about one thing land in one thread; other notifications start their own', async (tt) => {
  const { fake, harness, send, o } = await setup(tt);
  const first = await send({ deliveryId: 'd-1', title: 'UPS on battery' });
  const other = await send({ deliveryId: 'd-2', title: 'Disk full' });
  const previous = { messageRef: first!.messageRef!, deliveryId: 'd-1', eventType: 'ups_on_battery' };
  tt.equal(
    await harness.instance.update!({ previous, message: harness.message() }, o),
    false,
    'no edit through a webhook',
  );
  const second = (await harness.instance.reply!(
    { previous, message: harness.message({ deliveryId: 'd-3', title: 'UPS on mains' }) },
    o,
  )) as any;
  const third = (await harness.instance.reply!(
    {
      previous: { ...previous, messageRef: second.messageRef },
      message: harness.message({ deliveryId: 'd-4', title: 'UPS battery charged' }),
    },
    o,
  )) as any;

  tt.same(
    fake.received.slice(2).map((r) => r.body.thread),
    [{ threadKey: 'herald-d-1' }, { threadKey: 'herald-d-1' }],
    "the replies name the first thread's key",
  );
  tt.same(
    fake.received.slice(2).map((r) => r.query.messageReplyOption),
    [REPLY_OPTION, REPLY_OPTION],
  );
  const [m1, m2, m3, m4] = fake.messages;
  tt.equal(m3!.thread, m1!.thread, 'the second state is in the first thread');
  tt.equal(m4!.thread, m1!.thread, 'so is the third');
  tt.not(m2!.thread, m1!.thread, 'another notification has its own thread');
  tt.same([m1!.threadReply, m3!.threadReply, m4!.threadReply], [false, true, true]);
  tt.equal(second.messageRef.thread_key, 'herald-d-1');
  tt.equal(third.messageRef.thread_name, m1!.thread);
  tt.not(other!.messageRef!.thread_key, first!.messageRef!.thread_key);

  // A reference that only has the thread's name (no key) is followed by name.
  await harness.instance.reply!(
    {
      previous: { ...previous, messageRef: { thread_name: m1!.thread } },
      message: harness.message({ deliveryId: 'd-5' }),
    },
    o,
  );
  tt.same(fake.received.at(-1)!.body.thread, { name: m1!.thread });
  tt.equal(fake.messages.at(-1)!.thread, m1!.thread);
  tt.equal(
    await harness.instance.reply!({ previous: { ...previous, messageRef: {} }, message: harness.message() }, o),
    false,
    'nothing to follow',
  );
});

t.test('a retry after a lost answer does not post twice (request id)', async (tt) => {
  const { fake, harness, o } = await setup(tt);
  const message = harness.message({ deliveryId: 'del-r' });
  const a = await harness.instance.send(message, o);
  const b = await harness.instance.send(message, { ...o, attempt: 2 });
  tt.equal(fake.received.length, 2);
  tt.equal(fake.messages.length, 1, 'one message in the space');
  tt.same(b, a, 'the retry gets the same message back');
});

t.test('documented errors map to the contract classes, worded in the target language', async (tt) => {
  let s = await setup(tt, (f) => f.url({ token: 'wrong-token' }));
  let err = await caught(s.send());
  tt.equal(errorCode(err), 'AUTH_FAILED', '401 wrong token');
  tt.equal(err.statusCode, 401);
  tt.match(
    err.message,
    new RegExp(
      /^Google Chat answered 401: Request had invalid authentication credentials\..* \(UNAUTHENTICATED\); /.source +
        /the webhook's key or token was rejected/.source,
    ),
  );
  tt.notMatch(err.message, /wrong-token|token=/, 'the URL is not in the message');

  s = await setup(tt, (f) => f.url({ key: 'AIzaWrong' }));
  err = await caught(s.send({ locale: 'ru' }));
  tt.equal(errorCode(err), 'AUTH_FAILED', '400 API_KEY_INVALID');
  tt.equal(err.statusCode, 400);
  tt.match(
    err.message,
    /^Google Chat ответил 400: API key not valid\. .*\(INVALID_ARGUMENT\); ключ или токен вебхука отклонены/,
  );

  s = await setup(tt);
  s.fake.revoked = true;
  err = await caught(s.send());
  tt.equal(errorCode(err), 'AUTH_FAILED', '403 PERMISSION_DENIED');
  tt.equal(err.statusCode, 403);

  s = await setup(tt, (f) => f.url({ space: 'NoSuchSpace' }));
  err = await caught(s.send());
  tt.equal(errorCode(err), 'PERMANENT_SEND', '404');
  tt.match(err.message, /Requested entity was not found\. \(NOT_FOUND\); the space does not exist/);

  s = await setup(tt);
  s.fake.failNext = { code: 400, status: 'INVALID_ARGUMENT', message: 'Invalid JSON payload received.' };
  err = await caught(s.send());
  tt.equal(errorCode(err), 'PERMANENT_SEND', '400 other');
  tt.equal(err.statusCode, 400);

  s.fake.throttle = { count: 1, retryAfter: '30' };
  err = await caught(s.send());
  tt.equal(errorCode(err), 'RATE_LIMITED', '429 with Retry-After');
  tt.equal(err.retryAfterMs, 30_000);
  tt.match(err.message, /\(RESOURCE_EXHAUSTED\)$/);
  s.fake.throttle = { count: 1 };
  err = await caught(s.send());
  tt.equal(err.retryAfterMs, 5_000, '429 without Retry-After waits 5 s');
  await s.send();
  tt.equal(s.fake.messages.length, 1, 'then it goes through');

  for (const [code, status] of [
    [500, 'INTERNAL'],
    [503, 'UNAVAILABLE'],
  ] as const) {
    s.fake.failNext = { code, status, message: 'Internal error encountered.' };
    err = await caught(s.send());
    tt.equal(errorCode(err), 'RETRYABLE_SEND', `${code}`);
    tt.equal(err.statusCode, code);
  }
  await s.fake.close();
  err = await caught(s.send());
  tt.equal(errorCode(err), 'RETRYABLE_SEND', 'no answer');
  tt.equal(err.statusCode, 0);
  tt.match(err.message, /^Google Chat webhook unreachable: /);
});

t.test('a refused destination is permanent; the URL is never followed to another origin', async (tt) => {
  const refuse = async () => {
    throw Object.assign(new Error('refused to connect to 10.1.1.1: 10.1.1.1 is a private address'), {
      code: 'OUTBOUND_REFUSED',
    });
  };
  const h = await createTestHost({
    http: { request: refuse, fetch: refuse as typeof fetch, resolveAllowed: refuse },
  }).target(plugin, { url: `https://10.1.1.1/v1/spaces/S/messages?key=${KEY}&token=t` });
  const err = await caught(h.instance.send(h.message({ locale: 'ru' }), { signal: h.abort.signal, attempt: 1 }));
  tt.equal(errorCode(err), 'PERMANENT_SEND');
  tt.match(err.message, /^Вебхук Google Chat отклонён: /);

  const fake = await new GoogleChatFake().start();
  tt.teardown(() => fake.close());
  const moved = http.createServer((req, res) => res.writeHead(302, { location: `${fake.base}${req.url}` }).end());
  await new Promise<void>((r) => moved.listen(0, '127.0.0.1', r));
  tt.teardown(() => {
    moved.closeAllConnections();
    moved.close();
  });
  const harness = await createTestHost().target(plugin, {
    url: fake.url().replace(fake.base, `http://127.0.0.1:${(moved.address() as { port: number }).port}`),
  });
  const e2 = await caught(harness.instance.send(harness.message(), { signal: harness.abort.signal, attempt: 1 }));
  tt.match(e2.message, /redirect/);
  tt.same(fake.received, [], 'the other origin saw nothing');
});

t.test(
  'validateConfig: a space webhook URL passes; http, other paths, missing token and thread parameters do not',
  async (tt) => {
    const good = `https://chat.googleapis.com/v1/spaces/${SPACE}/messages?key=${KEY}&token=${TOKEN}`;
    tt.same(checkConfig(plugin, { url: good }), []);
    tt.match(
      checkConfig(plugin, { url: good.replace('https:', 'http:') }),
      [{ path: '/url', code: 'pattern', message: 'is not an https:// address' }],
      'worded by the web client from the pattern keyword',
    );
    tt.match(checkConfig(plugin, { url: `https://chat.googleapis.com/v1/spaces/${SPACE}?key=${KEY}&token=x` }), [
      { path: '/url', code: 'pattern', message: /is not a space's messages address/ },
    ]);
    tt.match(checkConfig(plugin, { url: `https://chat.googleapis.com/v1/spaces/${SPACE}/messages?key=${KEY}` }), [
      { path: '/url', code: 'pattern', message: 'lacks its key or token parameter' },
    ]);
    tt.match(checkConfig(plugin, { url: `${good}&threadKey=alerts&messageReplyOption=REPLY_MESSAGE_OR_FAIL` }), [
      { path: '/url', code: 'thread_managed', message: /threadKey, messageReplyOption/ },
    ]);
    tt.same(
      checkConfig(plugin, { url: `http://chat.googleapis.com/v1/spaces/${SPACE}/messages?key=${KEY}` }).map(
        (p) => p.message,
      ),
      ['is not an https:// address; lacks its key or token parameter'],
      'one problem for the shape, saying all that differs',
    );
    tt.throws(() => checkConfig(plugin, { url: 'chat.googleapis.com/v1' }), /invalid config/);
  },
);
