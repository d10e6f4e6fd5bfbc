import http from 'node:http';
import { errorCode, missingLocaleStrings, secretPaths } from '@herald/plugin-api';
import { checkConfig, createTestHost } from '@herald/plugin-api/testing';
import t from 'tap';
import {
  GROUP,
  INLINE_LIMIT_BYTES,
  OTHER_GROUP,
  parseStyled,
  SENDER,
  SignalRestApiFake,
} from '../test/fakes/signal-rest-api.ts';
import plugin, { batchesOf, escapeStyled, IDEMPOTENCY_HEADER, isGroupId, refKey } from './index.ts';

const ALICE = '+4917000000001';
const BOB = '+4917000000002';

async function setup(tt: any, extra: Record<string, unknown> = {}) {
  const fake = await new SignalRestApiFake().start();
  tt.teardown(() => fake.close());
  const harness = await createTestHost().target(plugin, {
    api_url: fake.url,
    number: SENDER,
    recipients: [ALICE],
    ...extra,
  });
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

t.test('manifest: id, limits, plain-text format, no secret fields, locales complete', async (tt) => {
  const m = plugin.manifest;
  tt.equal(m.id, 'signal');
  tt.same(m.limits, {
    maxMessageLength: 2000,
    maxTitleLength: 200,
    formats: ['text'],
    overflow: 'truncate',
    ratePerSecond: 1,
    concurrency: 1,
  });
  tt.same(secretPaths(m.configSchema), []);
  tt.same(missingLocaleStrings(m, 'en'), []);
  tt.same(missingLocaleStrings(m, 'ru'), []);
});

t.test('send: POST /v2/send with number, recipients and styled text; the timestamp is the remote id', async (tt) => {
  const { fake, send } = await setup(tt, { recipients: [ALICE, BOB] });
  const result = await send({
    deliveryId: 'del-1',
    title: 'Disk full',
    body: 'Volume /data is at 97%.',
    url: 'https://nas.example/disks',
  });
  tt.equal(fake.received.length, 1);
  const got = fake.received[0]!;
  tt.equal(got.method, 'POST');
  tt.equal(got.path, '/v2/send');
  tt.match(got.headers['content-type'], /^application\/json/);
  tt.equal(got.headers[IDEMPOTENCY_HEADER], 'del-1');
  tt.same(
    got.body,
    {
      message: '**Disk full**\nVolume /data is at 97%.\nhttps://nas.example/disks',
      number: SENDER,
      recipients: [ALICE, BOB],
      text_mode: 'styled',
    },
    'text_mode defaults to styled',
  );
  const d = fake.delivered[0]!;
  tt.equal(d.text, 'Disk full\nVolume /data is at 97%.\nhttps://nas.example/disks', 'what the recipients read');
  tt.same(d.styles, ['0:9:BOLD'], 'the title is bold');
  tt.same(result, {
    remoteId: d.timestamp,
    detail: undefined,
    messageRef: { title: 'Disk full', ts_people: d.timestamp },
  });
});

t.test("styled text: the notification's own markers stay literal, whatever they are", async (tt) => {
  tt.equal(escapeStyled('a*b ~c~ `d` ||e|| f'), 'a\\*b \\~c\\~ \\`d\\` \\|\\|e\\|\\| f');
  tt.equal(escapeStyled('ends with \\'), 'ends with \\\u200b', 'a trailing backslash cannot escape what follows');
  const { fake, send } = await setup(tt);
  const nasty = 'Price ~3€ *approx* `rm -rf` ||secret|| **bold** a\\*b back\\';
  await send({ title: 'Job *nightly* ~x', body: nasty });
  const d = fake.delivered[0]!;
  tt.equal(d.text, `Job *nightly* ~x\n${nasty}\u200b`, 'every character shows as written');
  tt.same(d.styles, ['0:16:BOLD'], 'only the title is styled');
  tt.same(
    parseStyled('**b** *i* ~s~ `m` ||p||'),
    { text: 'b i s m p', styles: ['0:1:BOLD', '2:1:ITALIC', '4:1:STRIKETHROUGH', '6:1:MONOSPACE', '8:1:SPOILER'] },
    'the fake parses as the REST API does',
  );
});

t.test('normal mode: plain text as it is, text_mode normal', async (tt) => {
  const { fake, send } = await setup(tt, { text_mode: 'normal' });
  await send({ title: 'A *b*', body: 'c ~d~' });
  tt.same(fake.received[0]!.body, {
    message: 'A *b*\nc ~d~',
    number: SENDER,
    recipients: [ALICE],
    text_mode: 'normal',
  });
  tt.equal(fake.delivered[0]!.text, 'A *b*\nc ~d~');
});

t.test('groups: one request per group, numbers together; a retry sends only what did not go out', async (tt) => {
  tt.same(batchesOf([ALICE, GROUP, BOB, OTHER_GROUP]), [
    { id: 'people', recipients: [ALICE, BOB] },
    { id: GROUP, recipients: [GROUP] },
    { id: OTHER_GROUP, recipients: [OTHER_GROUP] },
  ]);
  const { fake, harness, o } = await setup(tt, { recipients: [ALICE, GROUP, BOB, OTHER_GROUP] });
  fake.failGroup = OTHER_GROUP;
  const message = harness.message({ deliveryId: 'del-g', title: 'Backup failed' });
  const err = await caught(harness.instance.send(message, o));
  tt.equal(errorCode(err), 'RETRYABLE_SEND', 'the daemon went away during the last group');
  tt.same(
    fake.delivered.map((d) => d.to),
    [[ALICE, BOB], [GROUP]],
    'the numbers and the first group got it',
  );
  fake.failGroup = null;
  const result = await harness.instance.send(message, { ...o, attempt: 2 });
  tt.same(
    fake.received.slice(3).map((r) => r.body.recipients),
    [[OTHER_GROUP]],
    'the retry only sends to the group that missed it',
  );
  tt.same(
    fake.delivered.map((d) => d.to),
    [[ALICE, BOB], [GROUP], [OTHER_GROUP]],
    'everyone has it once',
  );
  tt.same(result!.messageRef, {
    title: 'Backup failed',
    ts_people: fake.delivered[0]!.timestamp,
    [refKey(GROUP)]: fake.delivered[1]!.timestamp,
    [refKey(OTHER_GROUP)]: fake.delivered[2]!.timestamp,
  });
  tt.equal(result!.remoteId, fake.delivered[0]!.timestamp);
});

t.test('limits: visible text within 2,000 bytes is sent whole; more is cut by bytes, Cyrillic too', async (tt) => {
  const { fake, send } = await setup(tt);
  const fits = 'x'.repeat(INLINE_LIMIT_BYTES - 'T\n'.length - 12);
  const r1 = await send({ title: 'T', body: fits });
  tt.equal(fake.delivered[0]!.text, `T\n${fits}`, 'sent whole');
  tt.equal(r1!.detail, undefined);

  const r2 = await send({ title: 'Отчёт', body: 'я'.repeat(1500) });
  const d = fake.delivered[1]!;
  tt.ok(Buffer.byteLength(d.text) <= INLINE_LIMIT_BYTES, `${Buffer.byteLength(d.text)} bytes <= 2000`);
  tt.ok(d.text.endsWith('…'));
  tt.match(r2!.detail, /^cut \d+ characters to fit Signal's 2,000-byte message text$/);
  const r3 = await send({ locale: 'ru', body: '€'.repeat(1000) });
  tt.match(r3!.detail, /^обрезано символов: \d+/);
  tt.same(
    fake.delivered.filter((x) => x.clipped),
    [],
    'Signal never had to clip',
  );
});

t.test(
  "documented errors map to the contract classes, with the REST API's words, in the target language",
  async (tt) => {
    let s = await setup(tt, { recipients: [ALICE, '+4917000000099'] });
    s.fake.unregistered.add('+4917000000099');
    let err = await caught(s.send());
    tt.equal(errorCode(err), 'PERMANENT_SEND', '400 unregistered recipient');
    tt.equal(err.statusCode, 400);
    tt.equal(
      err.message,
      'signal-cli REST API answered 400: Failed to send message: Unregistered user "+4917000000099"',
    );

    s = await setup(tt, { number: '+4915199999999' });
    err = await caught(s.send({ locale: 'ru' }));
    tt.equal(errorCode(err), 'PERMANENT_SEND', '400 sender not registered on the server');
    tt.equal(err.message, 'signal-cli REST API ответил 400: User +4915199999999 is not registered.');

    s = await setup(tt);
    s.fake.failNext = {
      status: 400,
      error: 'Post "http://127.0.0.1:6001/api/v1/rpc": dial tcp 127.0.0.1:6001: connect: connection refused',
    };
    err = await caught(s.send());
    tt.equal(errorCode(err), 'RETRYABLE_SEND', '400 saying signal-cli is unreachable is retried');

    s.fake.failNext = { status: 403, error: 'Forbidden' };
    err = await caught(s.send());
    tt.equal(errorCode(err), 'AUTH_FAILED', '403');
    tt.equal(err.statusCode, 403);

    s.fake.failNext = { status: 500, error: 'internal error' };
    err = await caught(s.send());
    tt.equal(errorCode(err), 'RETRYABLE_SEND', '500');
    tt.equal(err.statusCode, 500);

    s.fake.rateLimit = { count: 1 };
    err = await caught(s.send());
    tt.equal(errorCode(err), 'RATE_LIMITED', '429');
    tt.equal(err.retryAfterMs, 300_000, 'five minutes when the server names no delay');
    tt.match(err.message, /rate limiting.*; Signal limits this sender/);
    s.fake.rateLimit = { count: 1, retryAfter: '120' };
    err = await caught(s.send());
    tt.equal(err.retryAfterMs, 120_000, 'Retry-After when given');

    const wrongPath = await setup(tt);
    const h = await createTestHost().target(plugin, {
      api_url: `${wrongPath.fake.url}/api`,
      number: SENDER,
      recipients: [ALICE],
    });
    err = await caught(h.instance.send(h.message(), { signal: h.abort.signal, attempt: 1 }));
    tt.equal(errorCode(err), 'PERMANENT_SEND', '404');
    tt.match(err.message, /404: 404 page not found; no signal-cli REST API answers \/v2\/send at this address/);

    const proxy = http.createServer((_req, res) =>
      res
        .writeHead(401, { 'www-authenticate': 'Basic realm="signal"', 'content-type': 'text/html' })
        .end('<html><body>401 Authorization Required</body></html>'),
    );
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    tt.teardown(() => {
      proxy.closeAllConnections();
      proxy.close();
    });
    const hp = await createTestHost().target(plugin, {
      api_url: `http://127.0.0.1:${(proxy.address() as { port: number }).port}`,
      number: SENDER,
      recipients: [ALICE],
    });
    err = await caught(hp.instance.send(hp.message(), { signal: hp.abort.signal, attempt: 1 }));
    tt.equal(errorCode(err), 'AUTH_FAILED', '401 from a proxy in front');

    await s.fake.close();
    err = await caught(s.send({ locale: 'ru' }));
    tt.equal(errorCode(err), 'RETRYABLE_SEND', 'no answer');
    tt.equal(err.statusCode, 0);
    tt.match(err.message, /^signal-cli REST API недоступен: /);
  },
);

t.test('the newer list answer: timestamp taken, recipients it missed named in the detail', async (tt) => {
  const { fake, send } = await setup(tt, { recipients: [ALICE, BOB] });
  fake.arrayAnswer = true;
  fake.partial = [{ number: BOB, reason: 'IDENTITY_FAILURE' }];
  const r = await send();
  tt.equal(r!.remoteId, fake.delivered[0]!.timestamp);
  tt.equal(r!.detail, `not delivered to ${BOB} (IDENTITY_FAILURE)`);
});

t.test(
  'following the state: no edit; a reply quotes the earlier message and names it, in English and Russian',
  async (tt) => {
    const { fake, harness, send, o } = await setup(tt, { recipients: [ALICE, GROUP] });
    const first = await send({ title: 'UPS on battery', body: 'Charge 80%' });
    const previous = { messageRef: first!.messageRef!, deliveryId: 'd1', eventType: 'ups_on_battery' };
    tt.equal(
      await harness.instance.update!({ previous, message: harness.message() }, o),
      false,
      'update is not supported',
    );

    await harness.instance.reply!(
      { previous, message: harness.message({ title: 'UPS on mains', body: 'Charge 81%' }) },
      o,
    );
    const [toPeople, toGroup] = fake.delivered.slice(2);
    tt.equal(toPeople!.text, 'Update to “UPS on battery”:\nUPS on mains\nCharge 81%');
    tt.same(toPeople!.styles, ['0:27:ITALIC', '28:12:BOLD']);
    tt.same(
      toPeople!.quote,
      { timestamp: Number(fake.delivered[0]!.timestamp), author: SENDER, message: 'UPS on battery' },
      'quotes the message the numbers got',
    );
    tt.same(
      toGroup!.quote,
      { timestamp: Number(fake.delivered[1]!.timestamp), author: SENDER, message: 'UPS on battery' },
      'and the one the group got',
    );

    await harness.instance.reply!(
      {
        previous: { ...previous, messageRef: { title: 'ИБП *1*' } },
        message: harness.message({ locale: 'ru', title: 'ИБП 1 от сети', body: '' }),
      },
      o,
    );
    const ru = fake.delivered.at(-1)!;
    tt.equal(ru.text, 'Обновление к «ИБП *1*»:\nИБП 1 от сети');
    tt.equal(ru.quote, undefined, 'nothing to quote without the earlier timestamp');
    tt.equal(
      await harness.instance.reply!({ previous: { ...previous, messageRef: {} }, message: harness.message() }, o),
      false,
    );
  },
);

t.test('validateConfig and the schema: E.164 sender, recipients present and well formed, base address', async (tt) => {
  const good = {
    api_url: 'http://192.168.1.20:8080',
    number: SENDER,
    recipients: [ALICE, GROUP, '2b4b1e6a-5c0d-4f7e-9a3b-0c1d2e3f4a5b'],
  };
  tt.same(checkConfig(plugin, good), []);
  tt.equal(isGroupId(GROUP), true);
  tt.equal(isGroupId('group.abc'), false);
  tt.throws(
    () => checkConfig(plugin, { ...good, number: '015112345678' }),
    /invalid config: \/number/,
    'the sender must be E.164',
  );
  tt.throws(
    () => checkConfig(plugin, { ...good, recipients: [] }),
    /invalid config: \/recipients/,
    'at least one recipient',
  );
  tt.throws(
    () => checkConfig(plugin, { ...good, recipients: ['0170 1234'] }),
    /invalid config: \/recipients\/0/,
    'recipients are numbers, groups or UUIDs',
  );
  tt.throws(
    () => checkConfig(plugin, { ...good, recipients: [ALICE, ALICE] }),
    /invalid config: \/recipients/,
    'no duplicates',
  );
  tt.throws(() => checkConfig(plugin, { ...good, text_mode: 'markdown' }), /invalid config: \/text_mode/);
  tt.match(checkConfig(plugin, { ...good, recipients: [ALICE, 'group.abc='] }), [
    { path: '/recipients/1', code: 'pattern', message: 'is not a group id of the REST API' },
  ]);
  tt.match(checkConfig(plugin, { ...good, api_url: 'http://192.168.1.20:8080/v2/send' }), [
    { path: '/api_url', code: 'base_address', detail: /http:\/\/192\.168\.1\.20:8080/ },
  ]);
});
