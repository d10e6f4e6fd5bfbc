/**
 * The webpush target against a loopback push service that verifies VAPID and decrypts every
 * message with the browser's keys (test/fakes/push-service.ts).
 */

import { errorCode } from '@herald/plugin-api';
import { createTestHost, createTestHttp, createTestWebPush } from '@herald/plugin-api/testing';
import t from 'tap';
import { type FakePushService, startFakePushService } from '../test/fakes/push-service.ts';
import plugin from './index.ts';
import { MAX_PLAINTEXT_BYTES } from './payload.ts';

const caught = (p: Promise<unknown>) =>
  p.then(
    () => {
      throw new Error('expected a failure');
    },
    (e: unknown) => e as any,
  );

async function setup(tt: any, browsers = 1, o: { http?: ReturnType<typeof createTestHttp> } = {}) {
  const fake = await startFakePushService();
  tt.teardown(() => fake.close());
  const webPush = createTestWebPush();
  for (let i = 0; i < browsers; i++)
    webPush.subscribed.push({ id: `sub-${i + 1}`, ...fake.subscribe(webPush.keys.publicKey) });
  const host = createTestHost(o.http ? { http: o.http } : {});
  const harness = await host.target(plugin, {}, { webPush });
  const send = (m = {}, attempt = 1) =>
    harness.instance.send(harness.message(m, { fit: false }), { signal: harness.abort.signal, attempt });
  return { fake, webPush, harness, send };
}

const plain = (fake: FakePushService, i = 0) => JSON.parse(fake.received[i]!.plaintext);

t.test('one message reaches every subscribed browser, encrypted for each, signed with the VAPID key', async (t) => {
  const { fake, webPush, send } = await setup(t, 2);
  const r = await send({
    eventId: 'evt-42',
    severity: 'warning',
    title: 'UPS on battery',
    plainTitle: 'UPS on battery',
    body: 'rack: 80 %',
    plainBody: 'rack: 80 %',
    locale: 'ru',
  });
  t.equal(fake.received.length, 2, 'both browsers got it');
  t.same(new Set(fake.received.map((x) => x.endpoint)), new Set(webPush.subscribed.map((s) => s.endpoint)));
  for (let i = 0; i < 2; i++) {
    t.same(
      plain(fake, i),
      {
        title: 'UPS on battery',
        body: 'rack: 80 %',
        url: 'https://herald.example.test/#/events?event=evt-42',
        tag: 'evt-42',
        severity: 'warning',
        lang: 'ru',
      },
      'the service decrypted the exact payload',
    );
    const got = fake.received[i]!;
    t.equal(got.headers.ttl, '86400');
    t.equal(got.headers.urgency, 'high', 'a warning is urgent');
    t.match(got.headers.topic, /^[A-Za-z0-9_-]{32}$/);
    t.equal(got.claims.aud, fake.origin, 'aud is the push service origin');
    t.equal(got.claims.sub, 'mailto:push@example.test');
    t.equal(got.vapidKey, webPush.keys.publicKey);
  }
  t.same(webPush.succeeded.sort(), ['sub-1', 'sub-2'], 'both marked delivered');
  t.same(
    r,
    { detail: 'Доставлено браузерам: 2 из 2.', messageRef: { tag: 'evt-42' } },
    'the detail in the target language',
  );
});

t.test('an info event is of normal urgency; a test message lives five minutes and says so', async (t) => {
  const { fake, send } = await setup(t);
  await send({ severity: 'info', test: true });
  t.equal(fake.received[0]!.headers.urgency, 'normal');
  t.equal(fake.received[0]!.headers.ttl, '300');
  t.equal(plain(fake).test, true);
});

t.test('an update replaces the notification: same tag, renotify', async (t) => {
  const { fake, harness } = await setup(t);
  const r = await harness.instance.update!(
    {
      previous: { messageRef: { tag: 'evt-1' }, deliveryId: 'd0', eventType: 'ups_on_battery' },
      message: harness.message({ eventId: 'evt-2', plainTitle: 'UPS on line' }),
    },
    { signal: harness.abort.signal, attempt: 1 },
  );
  t.match(plain(fake), {
    tag: 'evt-1',
    renotify: true,
    title: 'UPS on line',
    url: 'https://herald.example.test/#/events?event=evt-2',
  });
  t.same((r as { messageRef: unknown }).messageRef, { tag: 'evt-1' });
});

t.test('404 and 410 remove the subscription; the delivery succeeds when another browser took it', async (t) => {
  const { fake, webPush, send } = await setup(t, 3);
  const [a, b] = webPush.subscribed;
  fake.unsubscribe(a!.endpoint);
  fake.refuseFor(b!.endpoint, { status: 404 });
  const r = await send();
  t.same(webPush.removed.sort(), ['sub-1', 'sub-2'], 'both gone ones removed');
  t.same(
    webPush.subscribed.map((s) => s.id),
    ['sub-3'],
  );
  t.equal(fake.received.length, 1);
  t.equal(
    (r as { detail: string }).detail,
    'Delivered to 1 of 3 subscribed browsers. Removed 2 that had unsubscribed.',
  );
});

t.test('every browser gone: a permanent failure that says to subscribe again', async (t) => {
  const { fake, webPush, send } = await setup(t, 1);
  fake.unsubscribe(webPush.subscribed[0]!.endpoint);
  const err = await caught(send());
  t.equal(errorCode(err), 'PERMANENT_SEND');
  t.equal(err.statusCode, 410);
  t.match(err.message, /unsubscribed .*Notify this browser again/);
  t.same(webPush.subscribed, []);
});

t.test('no subscribed browser: a permanent failure with the sentence, in the target language', async (t) => {
  const { webPush, send } = await setup(t, 0);
  const en = await caught(send());
  t.equal(errorCode(en), 'PERMANENT_SEND');
  t.equal(en.message, 'No browser is subscribed; open the account page and choose Notify this browser.');
  const ru = await caught(send({ locale: 'ru' }));
  t.equal(
    ru.message,
    'Ни один браузер не подписан; откройте страницу учётной записи и выберите «Уведомлять этот браузер».',
  );
  t.same(webPush.removed, []);
});

t.test('a core without Web Push: a permanent failure saying so', async (t) => {
  const harness = await createTestHost().target(plugin, {});
  const err = await caught(harness.instance.send(harness.message(), { signal: harness.abort.signal, attempt: 1 }));
  t.equal(errorCode(err), 'PERMANENT_SEND');
  t.match(err.message, /does not keep browser subscriptions/);
});

t.test('429 is rate limited with the push service Retry-After; the retry skips the browser that took it', async (t) => {
  const { fake, webPush, send, harness } = await setup(t, 2);
  fake.refuseFor(webPush.subscribed[1]!.endpoint, { status: 429, headers: { 'retry-after': '7' } });
  const msg = harness.message();
  const err = await caught(harness.instance.send(msg, { signal: harness.abort.signal, attempt: 1 }));
  t.equal(errorCode(err), 'RATE_LIMITED');
  t.equal(err.retryAfterMs, 7000);
  t.match(err.message, /127\.0\.0\.1:\d+ asks us to slow down \(429\)/);
  t.notMatch(err.message, /\/push\//, 'the endpoint (a capability) is not in the message');
  t.equal(fake.received.length, 1, 'the other browser got it');
  fake.reset();
  await harness.instance.send(msg, { signal: harness.abort.signal, attempt: 2 });
  t.equal(fake.received.length, 2, 'the retry sent only to the browser that had refused');
  t.equal(fake.received[1]!.endpoint, webPush.subscribed[1]!.endpoint);
  void send;
});

t.test('5xx and network failures are retryable; 403 and 413 are permanent', async (t) => {
  const { fake, send } = await setup(t);
  fake.refuse({ status: 500 }, 1);
  const e500 = await caught(send());
  t.equal(errorCode(e500), 'RETRYABLE_SEND');
  t.equal(e500.statusCode, 500);
  fake.refuse({ status: 403 }, 1);
  const e403 = await caught(send());
  t.equal(errorCode(e403), 'PERMANENT_SEND');
  t.match(e403.message, /VAPID signature \(403\)/);
  fake.refuse({ status: 413 }, 1);
  t.equal((await caught(send())).statusCode, 413);
  fake.refuse({ status: 400, body: '{"reason":"bad"}' }, 1);
  t.match((await caught(send())).message, /refused the notification \(400\): \{"reason":"bad"\}/);
  await fake.close();
  const net = await caught(send());
  t.equal(errorCode(net), 'RETRYABLE_SEND');
  t.equal(net.statusCode, 0);
});

t.test('a push service the address policy refuses is a permanent failure', async (t) => {
  const { send } = await setup(t, 1, { http: createTestHttp({ refuse: (host) => host === '127.0.0.1' }) });
  const err = await caught(send());
  t.equal(errorCode(err), 'PERMANENT_SEND');
  t.match(err.message, /address policy does not allow the push service 127\.0\.0\.1:\d+/);
});

t.test('a body past the 4 KB record is cut to fit and the service accepts it', async (t) => {
  const { fake, send } = await setup(t);
  const long = 'ж'.repeat(5000);
  const r = await send({ body: long, plainBody: long });
  const got = fake.received[0]!;
  t.ok(got.bodyBytes <= 4096, `${got.bodyBytes} bytes on the wire`);
  t.ok(Buffer.byteLength(got.plaintext) <= MAX_PLAINTEXT_BYTES);
  t.match(plain(fake).body, /^ж+…$/);
  t.match((r as { detail: string }).detail, /Cut \d+ characters to fit the 4 KB push limit\./);
});

t.test('the auth secrets and the VAPID private key never reach the log or an error', async (t) => {
  const { fake, webPush, harness, send } = await setup(t, 2);
  fake.unsubscribe(webPush.subscribed[0]!.endpoint);
  const secrets = [webPush.keys.privateKey, ...webPush.subscribed.map((s) => s.keys.auth)];
  fake.refuse({ status: 500 }, 1);
  const err = await caught(send());
  await send();
  const text = JSON.stringify(harness.log.lines) + String(err.message);
  for (const s of secrets) t.notOk(text.includes(s), 'not in the log');
  t.notOk(text.includes(webPush.subscribed[0]!.endpoint), 'nor the endpoint');
});

t.test('the fake: refuses a wrong VAPID key, a missing token, a missing TTL and undecryptable bodies', async (t) => {
  const fake = await startFakePushService();
  t.teardown(() => fake.close());
  const webpush = (await import('web-push')).default;
  const mine = webpush.generateVAPIDKeys();
  const other = webpush.generateVAPIDKeys();
  const sub = fake.subscribe(mine.publicKey);
  const post = async (
    d: { endpoint: string; headers: Record<string, unknown>; body: Buffer | null },
    drop: string[] = [],
  ) => {
    const headers = Object.fromEntries(
      Object.entries(d.headers)
        .filter(([k]) => !drop.includes(k.toLowerCase()) && k.toLowerCase() !== 'content-length')
        .map(([k, v]) => [k, String(v)]),
    );
    return (await fetch(d.endpoint, { method: 'POST', headers, body: d.body ? new Uint8Array(d.body) : null })).status;
  };
  const details = (vapid: { publicKey: string; privateKey: string }, s = sub, payload = 'hello') =>
    webpush.generateRequestDetails(s, payload, {
      vapidDetails: { subject: 'mailto:a@example.test', ...vapid },
    }) as never;
  t.equal(await post(details(mine)), 201, 'signed with the subscription key: accepted');
  t.equal(fake.received[0]!.plaintext, 'hello');
  t.equal(await post(details(other)), 403, 'another key than the subscription was made with');
  t.equal(await post(details(mine), ['authorization']), 401, 'no token');
  t.equal(await post(details(mine), ['ttl']), 400, 'no TTL');
  const wrongAuth = { ...sub, keys: { ...sub.keys, auth: Buffer.alloc(16, 7).toString('base64url') } };
  t.equal(await post(details(mine, wrongAuth)), 400, 'encrypted with another auth secret');
  t.equal(await post(details(mine, sub, 'x'.repeat(MAX_PLAINTEXT_BYTES + 1))), 413, 'one byte over 4096');
  t.equal(await post(details(mine, sub, 'x'.repeat(MAX_PLAINTEXT_BYTES))), 201, 'exactly 4096');
  t.match(
    fake.requests.map((r) => r.reason ?? ''),
    ['', /k is not the key/, /missing vapid/, /TTL/, /cannot decrypt/, /exceeds 4096/, ''],
  );
});
