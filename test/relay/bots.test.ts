import { createTelegramBotDriver } from '@herald/target-telegram';
import t from 'tap';
import { ConfigurationError } from '../../core/src/config/config.ts';
import { botRuntime, startBots } from '../../core/src/relay/bots/index.ts';
import { botWebhookSecret, webhookKeyId } from '../../core/src/relay/bots/webhook-secret.ts';
import { FakeTelegram } from '../../plugins/target-telegram/test/fakes/telegram.ts';
import { startService, TEST_PLUGINS, type TestService } from '../helpers/service.ts';
import { waitFor } from '../helpers/wait.ts';

const PLUGINS = `${TEST_PLUGINS},@herald/target-telegram`;
const TOKEN = '777:AAF-relay_bot_token_for_tests_abcdef';
const OTHER = '778:AAF-other_bot_token_for_tests_abcdef';
const REVOKED = '779:AAF-revoked_token_for_tests_abcdefgh';
const SECRET = 'hook-secret-0123456789';

/** Waits (up to 15 s) until `fn` answers a truthy value, and returns it. */
const until = <T>(fn: () => T | Promise<T>) => waitFor("the bot's exchange", fn);

/** The service and the fake Bot API, with the telegram driver pointed at the fake. */
async function setup(
  t: { teardown(fn: () => unknown): void },
  env: Record<string, string> = {},
): Promise<{ s: TestService; fake: FakeTelegram }> {
  const fake = await new FakeTelegram()
    .addBot(TOKEN, { id: 777, username: 'herald_relay_bot' })
    .addBot(OTHER, { id: 778, username: 'other_bot' })
    .addChat({ id: 4242, type: 'private', username: 'ann' })
    .addChat({ id: 4343, type: 'private', username: 'ivan' })
    .start();
  const s = await startService({ SERVICE_PLUGINS: PLUGINS, ...env });
  (s.service.core.plugins.target('telegram')!.def as { botDriver?: unknown }).botDriver = createTelegramBotDriver({
    apiRoot: fake.url,
  });
  botRuntime(s.service.core).backoffBaseMs = 50;
  t.teardown(async () => {
    await s.stop();
    await fake.close();
  });
  return { s, fake };
}

const message = (chat: Record<string, unknown>, text: string) => ({
  message: { message_id: 1, date: 1767225600, chat, from: { id: 9, is_bot: false, first_name: 'Ann' }, text },
});

t.test('bots: create, long polling, /start registration, chats, update, delete', async (t) => {
  const { s, fake } = await setup(t);
  const token = s.admin.token;
  const db = s.service.core.db;

  const c = await s.request('POST', '/api/bots', { token, body: { name: 'Main', token: TOKEN, mode: 'polling' } });
  t.equal(c.status, 201, 'created');
  t.match(c.body, {
    kind: 'telegram',
    name: 'Main',
    bot_id: '777',
    username: 'herald_relay_bot',
    mode: 'polling',
    token: '********',
  });
  t.notMatch(c.text, /relay_bot_token/, 'token never returned');
  t.notOk('webhook_path_id' in c.body);
  const storedToken = async () =>
    (await db.get<{ token: string }>('SELECT token FROM bots WHERE id = ?', [c.body.id]))!.token;
  t.match(await storedToken(), /^enc:v1:/, 'the token is stored sealed');
  t.notMatch(await storedToken(), /relay_bot_token/, 'never in clear');
  t.ok(
    botRuntime(s.service.core).polling(c.body.id),
    'a polling loop runs (with the opened token: the fake answers it alone)',
  );

  fake.pushUpdate(TOKEN, message({ id: 4242, type: 'private', username: 'ann', first_name: 'Ann' }, '/start'));
  const chat = await until(() => db.get(`SELECT * FROM bot_chats WHERE bot_id = ? AND chat_id = '4242'`, [c.body.id]));
  t.equal(Number(chat.registered) === 1 || chat.registered === true, true, '/start registers the chat');
  const reply = await until(async () => fake.sent.find((m) => m.chatId === 4242));
  t.match(reply.text, /registered with Herald/, "the bot answers in the owner's language");
  const lastId = fake.pushUpdate(TOKEN, message({ id: -100900, type: 'group', title: 'Family' }, 'hello'));
  await until(() => db.get(`SELECT 1 AS x FROM bot_chats WHERE chat_id = '-100900'`));
  fake.pushUpdate(TOKEN, message({ id: -100900, type: 'supergroup', title: 'Family (renamed)' }, 'hello again'));
  await until(
    async () => (await db.get(`SELECT title FROM bot_chats WHERE chat_id = '-100900'`))?.title === 'Family (renamed)',
  );
  t.equal(
    Number((await db.get(`SELECT COUNT(*) AS n FROM bot_chats WHERE chat_id = '-100900'`))!.n),
    1,
    'a chat seen again is updated in place',
  );
  const offset = await until(async () => {
    const r = await db.get('SELECT update_offset FROM bots WHERE id = ?', [c.body.id]);
    return Number(r!.update_offset) > lastId + 1 ? Number(r!.update_offset) : false;
  });
  t.equal(offset, lastId + 2, 'the offset after the last processed update is stored');
  t.equal(
    (
      await until(async () => {
        const b = (await s.request('GET', `/api/bots/${c.body.id}`, { token })).body;
        return b.status === 'running' && b;
      })
    ).status,
    'running',
  );

  const chats = await s.request('GET', `/api/bots/${c.body.id}/chats`, { token });
  t.equal(chats.status, 200);
  const byId = Object.fromEntries(chats.body.chats.map((x: any) => [x.chat_id, x]));
  t.match(byId['4242'], { type: 'private', username: 'ann', registered: true });
  t.match(byId['-100900'], { type: 'supergroup', title: 'Family (renamed)', registered: false });

  fake.failNext(500, 'Internal Server Error');
  const ivan = fake.pushUpdate(TOKEN, message({ id: 4343, type: 'private', username: 'ivan' }, 'hi'));
  await until(() => db.get(`SELECT 1 AS x FROM bot_chats WHERE chat_id = '4343'`));
  t.pass('polling recovers after a failed call');
  // The loop's next long poll is open before a failure is queued for the calls below.
  await until(async () =>
    fake.calls.some((x) => x.token === TOKEN && x.method === 'getUpdates' && Number(x.params.offset) === ivan + 1),
  );

  t.equal(
    (await s.request('POST', '/api/bots', { token, body: { name: 'Again', token: TOKEN, mode: 'polling' } })).status,
    409,
    'the same bot twice',
  );
  const rejected = await s.request('POST', '/api/bots', {
    token,
    body: { name: 'Bad', token: REVOKED, mode: 'polling' },
  });
  t.equal(rejected.status, 422);
  t.match(rejected.body.detail, /token was rejected/);
  const noSecret = await s.request('POST', '/api/bots', { token, body: { name: 'W', token: OTHER, mode: 'webhook' } });
  t.equal(noSecret.status, 422, 'webhook mode needs the server secret');
  t.match(noSecret.body.detail, /SERVICE_MESSAGING_WEBHOOK_SECRET/);
  t.equal(
    (await s.request('POST', '/api/bots', { token, body: { name: 'S', token: OTHER, mode: 'polling', kind: 'slack' } }))
      .status,
    422,
    'unknown bot kind',
  );
  for (const field of ['bot_id', 'webhook_path_id', 'status', 'user_id', 'update_offset']) {
    t.equal(
      (
        await s.request('POST', '/api/bots', {
          token,
          body: { name: 'P', token: OTHER, mode: 'polling', [field]: 'x' },
        })
      ).status,
      422,
      `${field} refused`,
    );
  }

  fake.failNext(502, 'Bad Gateway', { token: OTHER });
  const pending = await s.request('POST', '/api/bots', {
    token,
    body: { name: 'Later', token: OTHER, mode: 'polling' },
  });
  t.equal(pending.status, 201, 'an unreachable bot service does not block creation');
  t.equal(pending.body.status, 'pending');
  t.equal(pending.body.bot_id, null);
  t.match(pending.body.status_detail, /could not be reached/);
  t.notMatch(pending.body.status_detail, /other_bot_token/);
  t.equal((await s.request('DELETE', `/api/bots/${pending.body.id}`, { token })).status, 204);

  const renamed = await s.request('PATCH', `/api/bots/${c.body.id}`, {
    token,
    body: { name: 'Renamed', token: '********' },
  });
  t.equal(renamed.status, 200);
  t.equal(renamed.body.name, 'Renamed');
  t.equal(s.service.core.atRest.open(await storedToken()), TOKEN, 'the masked token keeps the stored one');
  const swapped = await s.request('PATCH', `/api/bots/${c.body.id}`, { token, body: { token: OTHER } });
  t.equal(swapped.status, 422, 'a token of a different bot');
  t.match(swapped.body.detail, /different bot/);
  t.equal(
    (await s.request('PATCH', `/api/bots/${c.body.id}`, { token, body: { token: REVOKED } })).status,
    422,
    'a rejected new token',
  );
  t.equal(s.service.core.atRest.open(await storedToken()), TOKEN, 'refused updates changed nothing');
  t.ok(botRuntime(s.service.core).polling(c.body.id), 'still polling after refused updates');
  t.equal(
    (await s.request('PATCH', `/api/bots/${c.body.id}`, { token, body: { kind: 'matrix' } })).status,
    422,
    'kind is fixed',
  );

  const other = await s.user();
  for (const [method, path] of [
    ['GET', `/api/bots/${c.body.id}`],
    ['PATCH', `/api/bots/${c.body.id}`],
    ['DELETE', `/api/bots/${c.body.id}`],
    ['GET', `/api/bots/${c.body.id}/chats`],
  ] as const) {
    t.equal(
      (await s.request(method, path, { token: other.token, body: method === 'PATCH' ? { name: 'x' } : undefined }))
        .status,
      404,
      `another user: ${method} ${path.replace(c.body.id, ':id')}`,
    );
  }
  t.same((await s.request('GET', '/api/bots', { token: other.token })).body.bots, []);
  const foreign = await s.request('POST', '/api/targets', {
    token: other.token,
    body: { kind: 'telegram', name: 'T', locale: 'en', config: { bot_id: c.body.id, chat_id: '4242' } },
  });
  t.equal(foreign.status, 422, "another user's bot cannot be used by a target");

  const target = await s.request('POST', '/api/targets', {
    token,
    body: { kind: 'telegram', name: 'Ann', locale: 'en', config: { bot_id: c.body.id, chat_id: '4242' } },
  });
  t.equal(target.status, 201, "a telegram target through the caller's bot");
  const inUse = await s.request('DELETE', `/api/bots/${c.body.id}`, { token });
  t.equal(inUse.status, 409, 'a bot with targets cannot be deleted');
  t.match(inUse.body.detail, /"Ann"/);
  await s.request('DELETE', `/api/targets/${target.body.id}`, { token });
  t.equal((await s.request('DELETE', `/api/bots/${c.body.id}`, { token })).status, 204);
  t.notOk(botRuntime(s.service.core).polling(c.body.id), 'polling stopped');
  t.equal(
    Number((await db.get('SELECT COUNT(*) AS n FROM bot_chats WHERE bot_id = ?', [c.body.id]))!.n),
    0,
    'its chats are gone',
  );
  t.notMatch(s.logText(), /relay_bot_token|other_bot_token/, 'tokens never logged');
});

t.test("webhook mode: setWebhook with the bot's own secret, inbound updates, switching to polling", async (t) => {
  const { s, fake } = await setup(t, {
    SERVICE_MESSAGING_WEBHOOK_SECRET: SECRET,
    SERVICE_PUBLIC_URL: 'https://herald.example.test',
  });
  const token = s.admin.token;
  const db = s.service.core.db;

  const c = await s.request('POST', '/api/bots', { token, body: { name: 'Hooked', token: TOKEN, mode: 'webhook' } });
  t.equal(c.status, 201, 'created');
  t.equal(c.body.status, 'ok');
  const hook = fake.webhooks.get(TOKEN)!;
  t.match(
    hook.url,
    /^https:\/\/herald\.example\.test\/api\/bots\/[A-Za-z0-9_-]{40,}\/webhook$/,
    'webhook registered at the public URL',
  );
  const own = hook.secret_token!;
  t.match(own, /^[A-Za-z0-9_-]{43}$/, 'with a secret of the alphabet Telegram accepts');
  t.not(own, SECRET, "the bot's own secret, not the shared key");
  t.notOk(botRuntime(s.service.core).polling(c.body.id), 'no polling in webhook mode');
  const path = new URL(hook.url).pathname;
  const pathId = path.split('/')[3]!;
  t.equal(own, botWebhookSecret(SECRET, pathId), 'derived from the key and the webhook path');
  t.equal(
    (await db.get('SELECT webhook_key_id FROM bots WHERE id = ?', [c.body.id]))!.webhook_key_id,
    webhookKeyId(SECRET),
    'the record says which key its webhook uses',
  );

  const post = (body: unknown, headers: Record<string, string> = {}, p = path) =>
    s.request('POST', p, { body, headers });
  const start = message({ id: 4242, type: 'private', username: 'ann' }, '/start@herald_relay_bot');
  const none = await post({ update_id: 1, ...start });
  t.equal(none.status, 401, 'no secret header');
  t.match(none.headers.get('content-type'), /problem\+json/);
  t.equal(
    (await post({ update_id: 1, ...start }, { 'x-telegram-bot-api-secret-token': 'wrong' })).status,
    401,
    'wrong secret',
  );
  t.equal(
    (await post({ update_id: 1, ...start }, { 'x-telegram-bot-api-secret-token': `${own}x` })).status,
    401,
    'longer secret',
  );
  t.equal(
    (await post({ update_id: 1, ...start }, { 'x-telegram-bot-api-secret-token': SECRET })).status,
    401,
    'the shared key itself proves nothing',
  );
  // An unknown path is reported only to a request carrying that path's secret, which only the service can make.
  t.equal(
    (
      await post(
        { update_id: 1, ...start },
        { 'x-telegram-bot-api-secret-token': own },
        '/api/bots/unknown-path-id/webhook',
      )
    ).status,
    401,
    "unknown path id, another path's secret",
  );
  t.equal(
    (
      await post(
        { update_id: 1, ...start },
        { 'x-telegram-bot-api-secret-token': SECRET },
        '/api/bots/unknown-path-id/webhook',
      )
    ).status,
    401,
    'unknown path id, the shared key',
  );
  t.equal(
    (
      await post(
        { update_id: 1, ...start },
        { 'x-telegram-bot-api-secret-token': botWebhookSecret(SECRET, 'unknown-path-id') },
        '/api/bots/unknown-path-id/webhook',
      )
    ).status,
    404,
    'unknown path id, its own secret',
  );
  t.equal(Number((await db.get('SELECT COUNT(*) AS n FROM bot_chats'))!.n), 0, 'nothing recorded so far');

  const ok = await post({ update_id: 1, ...start }, { 'x-telegram-bot-api-secret-token': own });
  t.equal(ok.status, 200);
  t.same(ok.body, { ok: true });
  const again = await post({ update_id: 1, ...start }, { 'x-telegram-bot-api-secret-token': own });
  t.equal(again.status, 200, 'a redelivered update is harmless');
  const rows = await db.all('SELECT * FROM bot_chats WHERE bot_id = ?', [c.body.id]);
  t.equal(rows.length, 1, 'one chat row');
  t.equal(rows[0]!.chat_id, '4242');
  t.ok(Number(rows[0]!.registered) === 1 || rows[0]!.registered === true, 'registered by /start');
  await until(async () => fake.sent.filter((m) => m.chatId === 4242).length >= 1);

  await s.request('PATCH', '/api/v1/users/me', { token, body: { locale: 'ru' } });
  await post(
    { update_id: 2, ...message({ id: 4343, type: 'private', username: 'ivan' }, '/start') },
    { 'x-telegram-bot-api-secret-token': own },
  );
  const ru = await until(async () => fake.sent.find((m) => m.chatId === 4343));
  t.match(ru.text, /зарегистрирован в Herald/, "the reply follows the owner's locale");
  const junk = await post({ hello: 'world' }, { 'x-telegram-bot-api-secret-token': own });
  t.equal(junk.status, 200, 'an update the driver does not understand is acknowledged');

  const toPolling = await s.request('PATCH', `/api/bots/${c.body.id}`, { token, body: { mode: 'polling' } });
  t.equal(toPolling.status, 200);
  t.equal(toPolling.body.mode, 'polling');
  t.notOk(fake.webhooks.has(TOKEN), 'the webhook is removed');
  t.ok(botRuntime(s.service.core).polling(c.body.id), 'polling started');
  t.equal(
    (await db.get('SELECT webhook_key_id FROM bots WHERE id = ?', [c.body.id]))!.webhook_key_id,
    null,
    'no webhook registered in polling mode',
  );
  const back = await s.request('PATCH', `/api/bots/${c.body.id}`, { token, body: { mode: 'webhook' } });
  t.equal(back.body.status, 'ok');
  t.equal(fake.webhooks.get(TOKEN)?.secret_token, own, 'webhook set again, with the same secret');
  t.notOk(botRuntime(s.service.core).polling(c.body.id), 'polling stopped');
});

t.test('boot is refused when a webhook bot exists without the secret; the webhook route answers 401', async (t) => {
  const s = await startService({ SERVICE_PLUGINS: PLUGINS });
  t.teardown(() => s.stop());
  const now = new Date().toISOString();
  await s.service.core.db.run(
    `INSERT INTO bots (id, user_id, kind, name, token, mode, webhook_path_id, status, created_at, updated_at)
    VALUES ('01900000-0000-7000-8000-0000000000aa', ?, 'telegram', 'Old', ?, 'webhook', 'old-path-id', 'ok', ?, ?)`,
    [s.admin.id, TOKEN, now, now],
  );
  const err = await startBots(s.service.core).then(
    () => undefined,
    (e: unknown) => e,
  );
  t.ok(err instanceof ConfigurationError, 'a ConfigurationError refuses boot');
  t.match((err as Error).message, /SERVICE_MESSAGING_WEBHOOK_SECRET is required/);
  const r = await s.request('POST', '/api/bots/old-path-id/webhook', {
    body: { update_id: 1 },
    headers: { 'x-telegram-bot-api-secret-token': '' },
  });
  t.equal(r.status, 401, 'without a configured secret nothing is accepted');
});

t.test('a bot record can name its own Bot API server (self-hosted telegram-bot-api)', async (t) => {
  const fake = await new FakeTelegram()
    .addBot(TOKEN, { id: 777, username: 'herald_relay_bot' })
    .addChat({ id: 4242, type: 'private', username: 'ann' })
    .start();
  const s = await startService({ SERVICE_PLUGINS: PLUGINS });
  t.teardown(async () => {
    await s.stop();
    await fake.close();
  });
  const bad = await s.request('POST', '/api/bots', {
    token: s.admin.token,
    body: { name: 'X', token: TOKEN, mode: 'polling', api_root: 'ftp://nope' },
  });
  t.equal(bad.status, 422, 'api_root must be an http(s) URL');
  const c = await s.request('POST', '/api/bots', {
    token: s.admin.token,
    body: { name: 'Self-hosted', token: TOKEN, mode: 'polling', api_root: fake.url },
  });
  t.equal(c.status, 201, c.text);
  t.equal(c.body.api_root, fake.url);
  t.equal(c.body.username, 'herald_relay_bot', 'getMe went to the named server');
  const sink = await s.request('POST', '/api/targets', {
    token: s.admin.token,
    body: { kind: 'telegram', name: 'Ann', config: { bot_id: c.body.id, chat_id: '4242' }, locale: 'en' },
  });
  t.equal(sink.status, 201, sink.text);
  const r = await s.request('POST', `/api/targets/${sink.body.id}/test`, { token: s.admin.token });
  t.equal(r.body.ok, true, r.text);
  t.ok(
    fake.sent.some((m) => m.chatId === 4242 && /test/i.test(m.text)),
    "the target sends through the bot's server",
  );
});
