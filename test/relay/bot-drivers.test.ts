/**
 * The bot subsystem is generic: a second messaging plugin (the "parrot" test fixture, whose
 * protocol differs from Telegram's in authentication, offsets and commands) runs bots in polling
 * and webhook mode through the same core routes and loops, and `POST /api/bots` picks the kind.
 */

import { hmacSha256Hex } from '@herald/plugin-api';
import t from 'tap';
import { botRuntime } from '../../core/src/relay/bots/index.ts';
import { botWebhookSecret } from '../../core/src/relay/bots/webhook-secret.ts';
import { FakeParrot } from '../fixtures/plugins/herald-target-parrot/src/fake.ts';
import { startService, TEST_PLUGINS, type TestService } from '../helpers/service.ts';
import { waitFor } from '../helpers/wait.ts';

const TOKEN = 'parrot-token-for-tests-0001';
const OTHER = 'parrot-token-for-tests-0002';
const SECRET = 'hook-secret-0123456789';

/** Waits (up to 15 s) until `fn` answers a truthy value, and returns it. */
const until = <T>(fn: () => T | Promise<T>) => waitFor("the bot driver's exchange", fn);

async function setup(
  t: { teardown(fn: () => unknown): void },
  plugins: string,
  env: Record<string, string> = {},
): Promise<{ s: TestService; fake: FakeParrot }> {
  const fake = await new FakeParrot()
    .addBot(TOKEN, { id: 'p-1', handle: 'polly' })
    .addBot(OTHER, { id: 'p-2', handle: 'kea' })
    .start();
  const s = await startService({ SERVICE_PLUGINS: plugins, ...env });
  botRuntime(s.service.core).backoffBaseMs = 50;
  t.teardown(async () => {
    await s.stop();
    await fake.close();
  });
  return { s, fake };
}

const signed = (body: unknown, secret = SECRET) => ({
  'x-parrot-signature': hmacSha256Hex(secret, Buffer.from(JSON.stringify(body))),
});

t.test("another kind's bot polls through the core loop with its own offset semantics", async (t) => {
  const { s, fake } = await setup(t, `${TEST_PLUGINS},herald-target-parrot`);
  const token = s.admin.token;
  const db = s.service.core.db;

  const c = await s.request('POST', '/api/bots', {
    token,
    body: { name: 'Polly', token: TOKEN, mode: 'polling', api_root: fake.url },
  });
  t.equal(c.status, 201, c.text);
  t.match(
    c.body,
    { kind: 'parrot', bot_id: 'p-1', username: 'polly', mode: 'polling', status: 'ok' },
    'the only bot kind is the default',
  );
  t.ok(botRuntime(s.service.core).polling(c.body.id), 'a polling loop runs');

  const hello = fake.push(TOKEN, { room: { id: 'room-7', kind: 'room', name: 'Kitchen' }, text: '!hello' });
  const chat = await until(() =>
    db.get(`SELECT * FROM bot_chats WHERE bot_id = ? AND chat_id = 'room-7'`, [c.body.id]),
  );
  t.ok(Number(chat.registered) === 1 || chat.registered === true, "the driver's start command registers the chat");
  t.equal(chat.title, 'Kitchen');
  const greeting = await until(() => fake.sent.find((m) => m.room === 'room-7'));
  t.match(greeting.text, /registered with Herald/, "greeted through the driver's reply");
  const last = fake.push(TOKEN, { text: 'no room: acknowledged, nothing recorded' });
  const stored = await until(
    async () =>
      Number((await db.get('SELECT update_offset FROM bots WHERE id = ?', [c.body.id]))!.update_offset) === last,
  );
  t.ok(stored, 'the stored offset is what the driver says (the last seq, not plus one)');
  await until(() => fake.calls.some((x) => x.path === '/v1/events' && x.query.since === String(last)));
  t.pass('the next poll asks for events after it');
  t.ok(
    fake.calls.some((x) => x.method === 'DELETE' && x.path === '/v1/webhook'),
    'the webhook is removed before polling',
  );
  t.ok(hello < last);

  const target = await s.request('POST', '/api/targets', {
    token,
    body: { kind: 'parrot', name: 'Kitchen', locale: 'en', config: { bot_id: c.body.id, room: 'room-7' } },
  });
  t.equal(target.status, 201, target.text);
  const sent = await s.request('POST', `/api/targets/${target.body.id}/test`, { token });
  t.equal(sent.body.ok, true, sent.text);
  t.ok(
    fake.sent.some((m) => m.room === 'room-7' && m.token === TOKEN && m !== greeting),
    'the target sends through the bot',
  );

  const bad = await s.request('POST', '/api/bots', {
    token,
    body: { name: 'Bad', token: 'parrot-revoked', mode: 'polling', api_root: fake.url },
  });
  t.equal(bad.status, 422, "the driver's AuthFailedError refuses a rejected token");
  t.equal(bad.body.code, 'bot_token_rejected');
});

t.test("another kind's webhook: its driver authenticates the inbound route", async (t) => {
  const { s, fake } = await setup(t, `${TEST_PLUGINS},herald-target-parrot,@herald/target-telegram`, {
    SERVICE_MESSAGING_WEBHOOK_SECRET: SECRET,
    SERVICE_PUBLIC_URL: 'https://herald.example.test',
  });
  const token = s.admin.token;
  const db = s.service.core.db;

  const c = await s.request('POST', '/api/bots', {
    token,
    body: { kind: 'parrot', name: 'Hooked', token: TOKEN, mode: 'webhook', api_root: fake.url },
  });
  t.equal(c.status, 201, c.text);
  t.equal(c.body.status, 'ok');
  const hook = fake.webhooks.get(TOKEN)!;
  t.match(
    hook,
    { url: /^https:\/\/herald\.example\.test\/api\/bots\/[A-Za-z0-9_-]{40,}\/webhook$/ },
    'the webhook was set through the driver',
  );
  const path = new URL(hook.url).pathname;
  const own = hook.secret;
  t.equal(own, botWebhookSecret(SECRET, path.split('/')[3]!), "with the bot's own secret");
  const signedOwn = (body: unknown) => signed(body, own);

  const event = { seq: 5, room: { id: 'room-9', kind: 'room' }, text: '!hello' };
  t.equal((await s.request('POST', path, { body: event })).status, 401, 'unsigned');
  t.equal(
    (await s.request('POST', path, { body: event, headers: signed(event, 'another-secret-value') })).status,
    401,
    'signed with another secret',
  );
  t.equal(
    (await s.request('POST', path, { body: event, headers: signed(event) })).status,
    401,
    'signed with the shared key',
  );
  t.equal(
    (await s.request('POST', path, { body: event, headers: { 'x-telegram-bot-api-secret-token': own } })).status,
    401,
    "another kind's proof does not count for this bot",
  );
  t.equal(
    (await s.request('POST', path, { body: { ...event, seq: 6 }, headers: signedOwn(event) })).status,
    401,
    'a signature over other bytes',
  );
  t.equal(Number((await db.get('SELECT COUNT(*) AS n FROM bot_chats'))!.n), 0, 'nothing recorded so far');

  const ok = await s.request('POST', path, { body: event, headers: signedOwn(event) });
  t.equal(ok.status, 200, ok.text);
  t.same(ok.body, { ok: true });
  const chat = await db.get(`SELECT * FROM bot_chats WHERE bot_id = ? AND chat_id = 'room-9'`, [c.body.id]);
  t.ok(chat && (Number(chat.registered) === 1 || chat.registered === true), 'recorded and registered');
  await until(() => fake.sent.find((m) => m.room === 'room-9'));

  const unknown = botWebhookSecret(SECRET, 'unknown-path-id');
  t.equal(
    (await s.request('POST', '/api/bots/unknown-path-id/webhook', { body: event, headers: signed(event, unknown) }))
      .status,
    404,
    "unknown path, accepted by a driver with the path's secret",
  );
  t.equal(
    (
      await s.request('POST', '/api/bots/unknown-path-id/webhook', {
        body: event,
        headers: { 'x-telegram-bot-api-secret-token': unknown },
      })
    ).status,
    404,
    'unknown path, accepted by the other driver',
  );
  t.equal(
    (await s.request('POST', '/api/bots/unknown-path-id/webhook', { body: event, headers: signedOwn(event) })).status,
    401,
    "unknown path, another bot's secret",
  );
  t.equal(
    (
      await s.request('POST', '/api/bots/unknown-path-id/webhook', {
        body: event,
        headers: { 'x-parrot-signature': 'nope' },
      })
    ).status,
    401,
    'unknown path, accepted by none',
  );

  const toPolling = await s.request('PATCH', `/api/bots/${c.body.id}`, { token, body: { mode: 'polling' } });
  t.equal(toPolling.status, 200, toPolling.text);
  t.notOk(fake.webhooks.has(TOKEN), 'the webhook is removed through the driver');
  t.ok(botRuntime(s.service.core).polling(c.body.id), 'polling started');
});

t.test(
  "POST /api/bots without a kind: the only bot kind, else 422 naming the kinds in the caller's language",
  async (t) => {
    const { s, fake } = await setup(t, `${TEST_PLUGINS},herald-target-parrot,@herald/target-telegram`);
    const body = { name: 'Which', token: OTHER, mode: 'polling', api_root: fake.url };
    const en = await s.request('POST', '/api/bots', { token: s.admin.token, body });
    t.equal(en.status, 422);
    t.equal(en.body.code, 'kind_required');
    t.equal(
      en.body.detail,
      'Say which kind of bot this is: set "kind" to one of the bot kinds this server runs (parrot, telegram).',
    );
    t.same(en.body.errors, [{ path: 'body/kind', message: 'is required: the bot kinds are parrot, telegram' }]);
    const ru = await s.user();
    t.equal((await s.request('PATCH', '/api/v1/users/me', { token: ru.token, body: { locale: 'ru' } })).status, 200);
    const inRussian = await s.request('POST', '/api/bots', { token: ru.token, body });
    t.equal(inRussian.status, 422);
    t.equal(
      inRussian.body.detail,
      'Укажите вид бота: задайте в поле "kind" один из видов ботов, которые работают на этом сервере (parrot, ' +
        'telegram).',
    );
    const named = await s.request('POST', '/api/bots', { token: s.admin.token, body: { ...body, kind: 'parrot' } });
    t.equal(named.status, 201, named.text);
    t.equal(named.body.kind, 'parrot');
    t.equal(
      (await s.request('POST', '/api/bots', { token: s.admin.token, body: { ...body, kind: 'slack' } })).body.code,
      'unknown_kind',
    );
  },
);

t.test('POST /api/bots with no bot-capable plugin enabled is refused with a readable reason', async (t) => {
  const { s, fake } = await setup(t, TEST_PLUGINS);
  const r = await s.request('POST', '/api/bots', {
    token: s.admin.token,
    body: { name: 'None', token: TOKEN, mode: 'polling', api_root: fake.url },
  });
  t.equal(r.status, 422);
  t.equal(r.body.code, 'kind_required');
  t.match(r.body.detail, /no enabled plugin supplies a bot kind/);
  t.same((await s.request('GET', '/api/bots', { token: s.admin.token })).body.bots, []);
});
