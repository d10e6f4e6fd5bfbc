/**
 * Browser notifications through the service: subscribing a browser through /api/push, the VAPID
 * key pair made once and sealed at rest, owner isolation, and deliveries of a `webpush` target to
 * a loopback push service that verifies VAPID and decrypts each message with the browser's keys
 * (plugins/target-webpush/test/fakes/push-service.ts): the exact payload, 410 removing the
 * subscription, 429 and 500 retried, no subscription a permanent failure. Secrets never appear
 * in an answer or a log line.
 */
import crypto from 'node:crypto';
import t from 'tap';
import { createOutboundHttp } from '../../core/src/net/outbound.ts';
import { pushDeps } from '../../core/src/relay/push/routes.ts';
import { resealWebPushSecrets, vapidKeys } from '../../core/src/relay/push/store.ts';
import { checkEndpoint, checkKeys } from '../../core/src/relay/push/validate.ts';
import { SecretsAtRest } from '../../core/src/secrets/at-rest.ts';
import { type FakePushService, startFakePushService } from '../../plugins/target-webpush/test/fakes/push-service.ts';
import {
  EXAMPLE_HOOK_HEADERS,
  exampleChain,
  startService,
  TEST_PLUGINS,
  type TestService,
  unsealed,
} from '../helpers/service.ts';

const PLUGINS = `${TEST_PLUGINS},@herald/target-webpush`;
const hookHeaders = EXAMPLE_HOOK_HEADERS;

let s: TestService;
let fake: FakePushService;
t.before(async () => {
  s = await startService({ SERVICE_PLUGINS: PLUGINS });
  fake = await startFakePushService();
});
t.teardown(async () => {
  await s.stop();
  await fake.close();
});

const relay = () => s.service.core.services.get('relay') as { tick(): Promise<void> };
const subscribe = (
  token: string,
  sub: { endpoint: string; keys: { p256dh: string; auth: string } },
  label = 'Test browser',
) => s.request('POST', '/api/push/subscriptions', { token, body: { ...sub, expirationTime: null, label } });

/** A user with a webhook provider, a tracker and a webpush target linked to it. */
async function chain(token: string) {
  const { target, hook } = await exampleChain(s, { kind: 'webpush', name: 'My browsers', config: {} }, token);
  t.same(target.config, {}, 'a webpush target has no configuration');
  return {
    target,
    fire: async (type: string, name: string) =>
      (await s.request('POST', hook, { headers: hookHeaders, body: { type, payload: { name } } })).body
        .event_ids[0] as string,
  };
}

const event = (token: string, id: string) => s.request('GET', `/api/events/${id}`, { token }).then((r) => r.body);

t.test(
  'the VAPID key pair is made once, shared by concurrent callers, its private key sealed in the database',
  async (t) => {
    const deps = pushDeps(s.service.core);
    // Two handles on one database, as two replicas would be: each its own cache, both racing to insert.
    const twin = () => ({
      ...deps,
      db: {
        dialect: s.service.core.db.dialect,
        all: s.service.core.db.all.bind(s.service.core.db),
        get: s.service.core.db.get.bind(s.service.core.db),
        run: s.service.core.db.run.bind(s.service.core.db),
        tx: s.service.core.db.tx.bind(s.service.core.db),
      },
    });
    const [a, b] = await Promise.all([vapidKeys(twin()), vapidKeys(twin())]);
    t.same(a, b, 'both replicas use the winner');
    const u = await s.user();
    const got = await Promise.all(
      [1, 2, 3].map(() => s.request('GET', '/api/push/vapid-public-key', { token: u.token })),
    );
    t.same(
      got.map((r) => r.status),
      [200, 200, 200],
    );
    t.same(new Set(got.map((r) => r.body.public_key)), new Set([a.publicKey]), 'the API answers the same key');
    t.same(Object.keys(got[0]!.body), ['public_key'], 'only the public key');
    const point = Buffer.from(a.publicKey, 'base64url');
    t.equal(point.length, 65);
    t.equal(point[0], 4, 'an uncompressed P-256 point');

    const rows = await s.service.core.db.all<{ public_key: string; private_key: string }>(
      'SELECT public_key, private_key FROM webpush_vapid',
    );
    t.equal(rows.length, 1, 'one key pair');
    t.match(rows[0]!.private_key, /^enc:v1:/, 'the private key is sealed at rest');
    const priv = unsealed(s, rows[0]!.private_key);
    t.equal(priv, a.privateKey);
    const ecdh = crypto.createECDH('prime256v1');
    ecdh.setPrivateKey(Buffer.from(priv, 'base64url'));
    t.equal(ecdh.getPublicKey().toString('base64url'), rows[0]!.public_key, 'the two halves belong together');
    t.equal((await s.request('GET', '/api/push/vapid-public-key')).status, 401, 'needs a signed-in user');
  },
);

t.test(
  'subscribing: stored with the auth secret sealed, never answered; the same browser again is the same subscription',
  async (t) => {
    const u = await s.user();
    const key = (await s.request('GET', '/api/push/vapid-public-key', { token: u.token })).body.public_key;
    const sub = fake.subscribe(key);
    const r = await subscribe(u.token, sub, 'Firefox on the laptop');
    t.equal(r.status, 201);
    t.same(Object.keys(r.body).sort(), ['created_at', 'endpoint', 'id', 'label', 'last_success_at', 'push_service']);
    t.match(r.body, {
      label: 'Firefox on the laptop',
      endpoint: sub.endpoint,
      push_service: new URL(fake.origin).host,
      last_success_at: null,
    });
    t.notOk(r.text.includes(sub.keys.auth), 'the auth secret is not answered');
    const row = (await s.service.core.db.get<{ auth: string; p256dh: string; user_id: string }>(
      'SELECT auth, p256dh, user_id FROM webpush_subscriptions WHERE id = ?',
      [r.body.id],
    ))!;
    t.match(row.auth, /^enc:v1:/, 'sealed at rest');
    t.equal(unsealed(s, row.auth), sub.keys.auth);
    t.equal(row.p256dh, sub.keys.p256dh);
    t.equal(row.user_id, u.id);

    const again = await subscribe(u.token, sub, '');
    t.equal(again.status, 200, 'the same endpoint: updated, not added');
    t.equal(again.body.id, r.body.id);
    t.equal(again.body.label, 'Firefox on the laptop', 'an empty label keeps the stored one');
    const list = await s.request('GET', '/api/push/subscriptions', { token: u.token });
    t.same(
      list.body.subscriptions.map((x: any) => x.id),
      [r.body.id],
    );
    t.notOk(list.text.includes(sub.keys.auth));

    // Another account subscribing the same browser takes it over.
    const other = await s.user();
    const moved = await subscribe(other.token, sub);
    t.equal(moved.status, 201);
    t.same(
      (await s.request('GET', '/api/push/subscriptions', { token: u.token })).body.subscriptions,
      [],
      'the first account no longer has it',
    );
    t.equal((await s.request('GET', '/api/push/subscriptions', { token: other.token })).body.subscriptions.length, 1);
  },
);

t.test('what a subscription must be: https endpoints, keys of the right sizes, at most 20 browsers', async (t) => {
  const u = await s.user();
  const key = (await s.request('GET', '/api/push/vapid-public-key', { token: u.token })).body.public_key;
  const good = fake.subscribe(key);
  const refused = async (body: unknown, code: string, status = 422) => {
    const r = await s.request('POST', '/api/push/subscriptions', { token: u.token, body });
    t.equal(r.status, status, `${code}: ${r.status}`);
    t.equal(r.body.code, code);
    t.type(r.body.detail, 'string');
    return r;
  };
  await refused({ ...good, endpoint: 'http://push.example.com/x' }, 'push_endpoint_not_https');
  await refused({ ...good, endpoint: 'not a url' }, 'push_endpoint_invalid');
  await refused({ ...good, endpoint: 'https://user:pw@push.example.com/x' }, 'push_endpoint_invalid');
  await refused({ ...good, endpoint: 'https://10.1.2.3/push/x' }, 'push_endpoint_refused');
  await refused({ ...good, keys: { ...good.keys, auth: Buffer.alloc(15).toString('base64url') } }, 'push_keys_invalid');
  await refused({ ...good, keys: { ...good.keys, auth: Buffer.alloc(17).toString('base64url') } }, 'push_keys_invalid');
  const short = await refused(
    {
      ...good,
      keys: { ...good.keys, p256dh: Buffer.from(good.keys.p256dh, 'base64url').subarray(0, 64).toString('base64url') },
    },
    'push_keys_invalid',
  );
  t.match(short.body.errors, [{ path: 'body/keys/p256dh' }]);
  const offCurve = Buffer.from(good.keys.p256dh, 'base64url');
  offCurve[40]! ^= 1;
  await refused({ ...good, keys: { ...good.keys, p256dh: offCurve.toString('base64url') } }, 'push_keys_invalid');
  t.equal(
    (await s.request('POST', '/api/push/subscriptions', { token: u.token, body: { ...good, extra: 1 } })).status,
    422,
    'unknown fields refused',
  );
  t.equal(
    (
      await s.request('POST', '/api/push/subscriptions', {
        token: u.token,
        body: { ...good, keys: { ...good.keys, auth: `${good.keys.auth}==` } },
      })
    ).status,
    201,
    'padded base64url is accepted',
  );

  // Twenty browsers, not twenty-one.
  for (let i = 1; i < 20; i++) t.equal((await subscribe(u.token, fake.subscribe(key))).status, 201);
  const over = await refused(fake.subscribe(key), 'push_subscription_limit', 409);
  t.same(over.body.params, { limit: 20 });
});

t.test(
  'endpoint checks outside the service: https only, loopback http only where the policy allows loopback',
  async (t) => {
    const strict = createOutboundHttp({ allowCidrs: [] });
    const lenient = createOutboundHttp({ allowCidrs: ['127.0.0.0/8'] });
    t.teardown(async () => {
      await strict.close();
      await lenient.close();
    });
    t.equal(
      await checkEndpoint('https://fcm.googleapis.com/fcm/send/abc', strict),
      'https://fcm.googleapis.com/fcm/send/abc',
      'a push service by name',
    );
    t.equal(
      await checkEndpoint('http://127.0.0.1:9/push/x', lenient),
      'http://127.0.0.1:9/push/x',
      'loopback http with the allowance',
    );
    await t.rejects(
      checkEndpoint('http://127.0.0.1:9/push/x', strict),
      { code: 'push_endpoint_refused' },
      'loopback without it',
    );
    await t.rejects(checkEndpoint('https://[::1]/push/x', strict), { code: 'push_endpoint_refused' });
    await t.rejects(checkEndpoint('http://192.168.1.5/push/x', lenient), { code: 'push_endpoint_not_https' });
    await t.rejects(checkEndpoint(`https://push.example.com/${'a'.repeat(2048)}`, strict), {
      code: 'push_endpoint_invalid',
    });
    await t.rejects(checkEndpoint('https://push.example.com/x#frag', strict), { code: 'push_endpoint_invalid' });
    const k = { p256dh: fake.subscribe().keys.p256dh, auth: Buffer.alloc(16, 1).toString('base64url') };
    t.same(checkKeys(k), k);
    t.throws(() => checkKeys({ ...k, p256dh: 'not*base64' }), { code: 'push_keys_invalid' });
  },
);

t.test('owner isolation: another user cannot list, delete or test a browser of yours', async (t) => {
  const a = await s.user();
  const b = await s.user();
  const key = (await s.request('GET', '/api/push/vapid-public-key', { token: a.token })).body.public_key;
  const mine = (await subscribe(a.token, fake.subscribe(key))).body;
  t.same(
    (await s.request('GET', '/api/push/subscriptions', { token: b.token })).body.subscriptions,
    [],
    'not listed for B',
  );
  const del = await s.request('DELETE', `/api/push/subscriptions/${mine.id}`, { token: b.token });
  t.equal(del.status, 404);
  t.equal(del.body.code, 'not_found');
  t.equal((await s.request('POST', `/api/push/subscriptions/${mine.id}/test`, { token: b.token })).status, 404);
  t.equal(
    (await s.request('GET', '/api/push/subscriptions', { token: a.token })).body.subscriptions.length,
    1,
    'still there',
  );
  t.equal((await s.request('GET', '/api/push/subscriptions')).status, 401);
  t.equal(
    (await s.request('DELETE', `/api/push/subscriptions/${mine.id}`, { token: a.token })).status,
    204,
    'the owner removes it',
  );
  t.same((await s.request('GET', '/api/push/subscriptions', { token: a.token })).body.subscriptions, []);
});

t.test("a test notification to one browser, in the user's language", async (t) => {
  const u = await s.user();
  const key = (await s.request('GET', '/api/push/vapid-public-key', { token: u.token })).body.public_key;
  const one = (await subscribe(u.token, fake.subscribe(key))).body;
  const two = (await subscribe(u.token, fake.subscribe(key))).body;
  const before = fake.received.length;
  const r = await s.request('POST', `/api/push/subscriptions/${two.id}/test`, {
    token: u.token,
    body: { locale: 'ru' },
  });
  t.same(r.body, { ok: true, detail: 'Доставлено браузерам: 1 из 1.', removed: false });
  t.equal(fake.received.length, before + 1, 'only that browser');
  const got = fake.received.at(-1)!;
  t.equal(got.endpoint, two.endpoint);
  t.match(JSON.parse(got.plaintext), {
    title: 'Herald: тестовое уведомление',
    body: 'Этот браузер будет показывать уведомления Herald.',
    url: '/#/account',
    severity: 'info',
    test: true,
    lang: 'ru',
  });
  t.equal(got.headers.ttl, '300');
  const listed = (await s.request('GET', '/api/push/subscriptions', { token: u.token })).body.subscriptions;
  t.ok(listed.find((x: any) => x.id === two.id).last_success_at, 'last delivery recorded');
  t.equal(listed.find((x: any) => x.id === one.id).last_success_at, null);

  fake.unsubscribe(one.endpoint);
  const gone = await s.request('POST', `/api/push/subscriptions/${one.id}/test`, { token: u.token, body: {} });
  t.match(gone.body, { ok: false, removed: true, status_code: 410 });
  t.same(
    (await s.request('GET', '/api/push/subscriptions', { token: u.token })).body.subscriptions.map((x: any) => x.id),
    [two.id],
  );
});

t.test(
  'deliveries of a webpush target: the exact payload decrypted, 410 removes, 429 and 500 retried, none subscribed ' +
    'fails',
  async (t) => {
    const u = await s.user();
    const key = (await s.request('GET', '/api/push/vapid-public-key', { token: u.token })).body.public_key;
    const c = await chain(u.token);

    // Nobody subscribed yet: a permanent failure saying what to do.
    const lonely = await c.fire('alarm', 'pump');
    await relay().tick();
    const failed = await event(u.token, lonely);
    t.equal(failed.dispatch_status, 'failed');
    t.match(failed.deliveries, [
      {
        status: 'failed',
        attempts: 1,
        last_error: 'No browser is subscribed; open the account page and choose Notify this browser.',
      },
    ]);

    const laptop = fake.subscribe(key);
    const phone = fake.subscribe(key);
    const laptopSub = (await subscribe(u.token, laptop, 'laptop')).body;
    await subscribe(u.token, phone, 'phone');
    const before = fake.received.length;
    const id = await c.fire('alarm', 'boiler');
    await relay().tick();
    t.equal((await event(u.token, id)).dispatch_status, 'dispatched');
    const got = fake.received.slice(before);
    t.same(got.map((x) => x.endpoint).sort(), [laptop.endpoint, phone.endpoint].sort(), 'each browser got one');
    for (const g of got) {
      const payload = JSON.parse(g.plaintext);
      // Without SERVICE_PUBLIC_URL the dispatch thread knows no address of its own: the link is then relative, which
      // the service worker resolves on its site.
      t.match(payload.url, new RegExp(`^(${s.url.replaceAll('.', '\\.')})?/#/events\\?event=${id}$`));
      t.same(
        payload,
        { title: 'ALARM boiler', body: 'alarm', url: payload.url, tag: id, severity: 'critical', lang: 'en' },
        'the exact payload',
      );
      t.equal(g.headers.urgency, 'high');
      t.equal(g.headers.ttl, '86400');
      t.equal(g.claims.aud, fake.origin);
      t.equal(g.claims.sub, 'mailto:webpush@herald.invalid', 'no https public URL: the reserved mailto');
      t.equal(g.vapidKey, key);
    }

    // The laptop unsubscribed: 410 removes it, the phone still gets the message.
    fake.unsubscribe(laptop.endpoint);
    const after410 = await c.fire('thing_happened', 'door');
    await relay().tick();
    const e410 = await event(u.token, after410);
    t.equal(e410.dispatch_status, 'dispatched');
    t.equal(fake.received.at(-1)!.endpoint, phone.endpoint);
    t.notOk(
      await s.service.core.db.get('SELECT 1 AS x FROM webpush_subscriptions WHERE id = ?', [laptopSub.id]),
      'the gone subscription was removed',
    );
    t.equal(JSON.parse(fake.received.at(-1)!.plaintext).severity, 'info');
    t.equal(fake.received.at(-1)!.headers.urgency, 'normal');

    // 500, then the push service recovers.
    fake.refuse({ status: 500 }, 1);
    const r500 = await c.fire('alarm', 'five hundred');
    await relay().tick();
    const mid = await event(u.token, r500);
    t.equal(mid.dispatch_status, 'pending', 'retry scheduled');
    t.match(mid.deliveries, [{ attempts: 1, last_status_code: 500 }]);
    s.clock.set(new Date(Date.now() + 60_000));
    await relay().tick();
    t.equal((await event(u.token, r500)).dispatch_status, 'dispatched');
    t.equal(JSON.parse(fake.received.at(-1)!.plaintext).title, 'ALARM five hundred');

    // 429 with Retry-After, then accepted.
    fake.refuse({ status: 429, headers: { 'retry-after': '5' } }, 1);
    const r429 = await c.fire('alarm', 'slow down');
    await relay().tick();
    const wait = await event(u.token, r429);
    t.equal(wait.dispatch_status, 'pending');
    t.match(wait.deliveries[0].last_error, /asks us to slow down \(429\)/);
    s.clock.set(new Date(Date.now() + 120_000));
    await relay().tick();
    t.equal((await event(u.token, r429)).dispatch_status, 'dispatched');
    t.equal(JSON.parse(fake.received.at(-1)!.plaintext).title, 'ALARM slow down');

    // The target's own test goes through the same facility.
    const test = await s.request('POST', `/api/targets/${c.target.id}/test`, { token: u.token });
    t.match(test.body, { ok: true, detail: 'Delivered to 1 of 1 subscribed browsers.' });

    // The last browser gone: the delivery fails saying so.
    fake.unsubscribe(phone.endpoint);
    const last = await c.fire('alarm', 'nobody');
    await relay().tick();
    t.match((await event(u.token, last)).deliveries, [{ status: 'failed', last_status_code: 410 }]);
    s.clock.real();
  },
);

t.test('no secret in the logs or the answers; a rotated key re-seals the push secrets', async (t) => {
  const core = s.service.core;
  const vapid = await vapidKeys(pushDeps(core));
  const auths = (await core.db.all<{ auth: string }>('SELECT auth FROM webpush_subscriptions')).map((r) =>
    unsealed(s, r.auth),
  );
  t.ok(auths.length > 5, `${auths.length} subscriptions`);
  const text = s.logText();
  t.notOk(text.includes(vapid.privateKey), 'the VAPID private key is not logged');
  for (const a of auths) t.notOk(text.includes(a), 'no auth secret is logged');
  t.notOk(/\/push\/[A-Za-z0-9_-]{32}/.test(text), 'no push endpoint is logged');

  // A rotation: what the old key sealed is sealed again with the new one.
  const oldKey = new SecretsAtRest('the old secret key, before the rotation');
  const sealedOld = oldKey.seal(auths[0]!);
  const one = (await core.db.get<{ id: string }>('SELECT id FROM webpush_subscriptions ORDER BY id LIMIT 1'))!;
  await core.db.run('UPDATE webpush_subscriptions SET auth = ? WHERE id = ?', [sealedOld, one.id]);
  const rotated = new SecretsAtRest(crypto.randomBytes(16).toString('hex'), 'the old secret key, before the rotation');
  // Rows the rotated pair cannot open (sealed with this service's own key) are left alone.
  const n = await resealWebPushSecrets({ ...pushDeps(core), atRest: rotated });
  t.equal(n, 1, 'one row re-sealed');
  const now = (await core.db.get<{ auth: string }>('SELECT auth FROM webpush_subscriptions WHERE id = ?', [one.id]))!
    .auth;
  t.not(now, sealedOld);
  t.equal(rotated.open(now), auths[0], 'sealed with the new key');
  await core.db.run('UPDATE webpush_subscriptions SET auth = ? WHERE id = ?', [core.atRest.seal(auths[0]!), one.id]);
});
