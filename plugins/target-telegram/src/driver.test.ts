import { errorCode } from '@herald/plugin-api';
import { captureLogger, createTestHost } from '@herald/plugin-api/testing';
import t from 'tap';
import { FakeTelegram } from '../test/fakes/telegram.ts';
import { clipText, createTelegramBotDriver, nextOffset, parseUpdate, SECRET_HEADER, verifyWebhook } from './driver.ts';
import plugin from './index.ts';

const TOKEN = '777:AAF-driver_token_for_tests_abcdefghijk';

async function setup(t: { teardown(fn: () => unknown): void }) {
  const fake = await new FakeTelegram()
    .addBot(TOKEN, { id: 777, username: 'HeraldBot' })
    .addChat({ id: -100500, type: 'supergroup', title: 'Forum', isForum: true, topics: [3] })
    .start();
  const host = createTestHost();
  t.teardown(async () => {
    await fake.close();
    await (host.http as { close?: () => Promise<void> }).close?.();
  });
  const ctx = { http: host.http, log: captureLogger() };
  return { fake, ctx, driver: createTelegramBotDriver({ apiRoot: fake.url }), signal: AbortSignal.timeout(10_000) };
}

const startMessage = (text: string) => ({
  message: {
    message_id: 5,
    date: 1767225600,
    text,
    from: { id: 9, is_bot: false, first_name: 'Ann' },
    chat: { id: -100500, type: 'supergroup', title: 'Forum', is_forum: true },
    message_thread_id: 3,
    is_topic_message: true,
    entities: [{ type: 'bot_command', offset: 0, length: text.split(' ')[0].length }],
  },
});

t.test('the plugin exposes its bot driver', async (t) => {
  t.type(plugin.botDriver?.getMe, 'function');
  t.equal(plugin.manifest.limits?.maxMessageLength, 4096);
});

t.test('getMe returns the bot id and username', async (t) => {
  const { driver, ctx, signal } = await setup(t);
  t.same(await driver.getMe(ctx, TOKEN, signal), { botId: '777', username: 'HeraldBot' });
});

t.test('getMe with a revoked token is AuthFailedError without the token in the message', async (t) => {
  const { driver, ctx, signal } = await setup(t);
  const bad = '777:AAF-revoked_token_000000000000000000';
  await t.rejects(driver.getMe(ctx, bad, signal), { code: 'AUTH_FAILED' });
  try {
    await driver.getMe(ctx, bad, signal);
  } catch (err) {
    t.notMatch((err as Error).message, 'revoked_token');
  }
});

t.test('setWebhook sends the secret token and the update kinds; deleteWebhook clears it', async (t) => {
  const { fake, driver, ctx, signal } = await setup(t);
  await driver.setWebhook(ctx, TOKEN, 'https://herald.example/hooks/bot/abc', 'S3cret_token-1', signal);
  t.same(fake.webhooks.get(TOKEN), {
    url: 'https://herald.example/hooks/bot/abc',
    secret_token: 'S3cret_token-1',
    allowed_updates: ['message', 'channel_post', 'my_chat_member'],
  });
  // While a webhook is set, Telegram refuses getUpdates with 409: a permanent error for the caller.
  const err = await driver.getUpdates(ctx, TOKEN, 0, 0, signal).catch((e) => e);
  t.equal(errorCode(err), 'PERMANENT_SEND');
  t.equal(err.statusCode, 409);
  await driver.deleteWebhook(ctx, TOKEN, signal);
  t.notOk(fake.webhooks.has(TOKEN));
  await t.rejects(
    driver.setWebhook(ctx, TOKEN, 'http://plain.example/hook', 'x', signal),
    /HTTPS URL must be provided/,
  );
});

t.test('getUpdates long-polls and honours the offset', async (t) => {
  const { fake, driver, ctx, signal } = await setup(t);
  const first = fake.pushUpdate(TOKEN, startMessage('/start@HeraldBot hello'));
  let updates = (await driver.getUpdates(ctx, TOKEN, 0, 0, signal)) as { update_id: number }[];
  t.same(
    updates.map((u) => u.update_id),
    [first],
  );
  // Long polling: the request waits until an update arrives. The update is pushed once the call waits (a fixed
  // 100 ms could come before the call reached the fake, and the wait would not be exercised).
  const polling = driver.getUpdates(ctx, TOKEN, first + 1, 5, signal);
  const deadline = Date.now() + 4000;
  while (fake.longPolls === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  t.equal(fake.longPolls, 1, 'the call waits for an update');
  fake.pushUpdate(TOKEN, startMessage('/help'));
  updates = (await polling) as { update_id: number }[];
  t.same(
    updates.map((u) => u.update_id),
    [first + 1],
    'the confirmed update is gone, the new one arrived',
  );
  const call = fake.calls.at(-1)!;
  t.equal(call.params.timeout, 5);
  t.same(call.params.allowed_updates, ['message', 'channel_post', 'my_chat_member']);
  t.same(await driver.getUpdates(ctx, TOKEN, first + 2, 0, signal), []);
});

t.test('parseUpdate reads a /start command in a forum topic', async (t) => {
  const parsed = parseUpdate({ update_id: 10, ...startMessage('/start@HeraldBot hello') });
  t.same(parsed, {
    updateId: 10,
    chat: { chatId: '-100500', type: 'supergroup', title: 'Forum', username: undefined, threadId: 3, isForum: true },
    text: '/start@HeraldBot hello',
    command: 'start',
  });
});

t.test('parseUpdate reads private chats, channel posts and membership changes', async (t) => {
  const priv = parseUpdate({
    update_id: 1,
    message: {
      message_id: 1,
      date: 0,
      text: 'hi',
      chat: { id: 9, type: 'private', first_name: 'Ann', last_name: 'Lee', username: 'ann' },
    },
  });
  t.same(priv?.chat, {
    chatId: '9',
    type: 'private',
    title: 'Ann Lee',
    username: 'ann',
    threadId: undefined,
    isForum: undefined,
  });
  t.equal(priv?.command, undefined);
  const post = parseUpdate({
    update_id: 2,
    channel_post: {
      message_id: 1,
      date: 0,
      text: '/status',
      chat: { id: -1009, type: 'channel', title: 'News', username: 'news' },
    },
  });
  t.equal(post?.chat?.type, 'channel');
  t.equal(post?.command, 'status');
  const member = parseUpdate({
    update_id: 3,
    my_chat_member: { chat: { id: -5, type: 'group', title: 'G' }, date: 0, old_chat_member: {}, new_chat_member: {} },
  });
  t.same(member, {
    updateId: 3,
    chat: { chatId: '-5', type: 'group', title: 'G', username: undefined, threadId: undefined, isForum: undefined },
  });
  const edited = parseUpdate({
    update_id: 4,
    edited_message: { message_id: 1, date: 0, text: 'fixed', chat: { id: 9, type: 'private' } },
  });
  t.equal(edited?.text, 'fixed');
  t.same(parseUpdate({ update_id: 5, callback_query: {} }), { updateId: 5 });
  t.equal(parseUpdate('junk'), null);
  t.equal(parseUpdate({ message: {} }), null);
});

t.test('reply posts plain text into the chat and its topic', async (t) => {
  const { fake, driver, ctx, signal } = await setup(t);
  const chat = parseUpdate({ update_id: 10, ...startMessage('/start') })!.chat!;
  await driver.reply(ctx, TOKEN, chat, 'Linked <this> chat & topic', signal);
  const [m] = fake.sent;
  t.equal(m.chatId, -100500);
  t.equal(m.params.message_thread_id, 3);
  t.equal(m.text, 'Linked <this> chat & topic');
  t.notOk('parse_mode' in m.params);
});

t.test('clipText keeps replies within the limit without splitting a surrogate pair', async (t) => {
  t.equal(clipText('short'), 'short');
  const clipped = clipText('a'.repeat(4094) + '😀😀');
  t.ok(clipped.length <= 4096);
  t.notMatch(clipped, /[\uD800-\uDBFF]…$/);
});

t.test('verifyWebhook accepts only the secret given to setWebhook, in its header', async (t) => {
  const req = (headers: Record<string, string | undefined>) => ({ headers, rawBody: Buffer.from('{}'), body: {} });
  const secret = 'S3cret_token-1234567';
  t.equal(verifyWebhook(req({ [SECRET_HEADER]: secret }), secret), true);
  t.equal(SECRET_HEADER, 'x-telegram-bot-api-secret-token');
  t.equal(verifyWebhook(req({}), secret), false, 'no header');
  t.equal(verifyWebhook(req({ [SECRET_HEADER]: 'wrong' }), secret), false, 'wrong secret');
  t.equal(verifyWebhook(req({ [SECRET_HEADER]: `${secret}x` }), secret), false, 'longer secret');
  t.equal(verifyWebhook(req({ [SECRET_HEADER]: secret.slice(0, -1) }), secret), false, 'shorter secret');
  t.equal(verifyWebhook(req({ [SECRET_HEADER]: '' }), ''), false, 'an empty secret never matches');
  t.equal(verifyWebhook(req({ authorization: secret }), secret), false, "only Telegram's header counts");
  t.equal(createTelegramBotDriver().verifyWebhook, verifyWebhook);
});

t.test('nextOffset confirms an update by its update_id plus one and never goes back', async (t) => {
  t.equal(nextOffset({ update_id: 41 }, 0), 42);
  t.equal(nextOffset({ update_id: 41 }, 41), 42);
  t.equal(nextOffset({ update_id: 40 }, 42), 42, 'an older update keeps the offset');
  t.equal(nextOffset({ message: {} }, 7), 7, 'no update_id');
  t.equal(nextOffset({ update_id: '41' }, 7), 7, 'a non-numeric id');
  t.equal(nextOffset(null, 7), 7);
  t.equal(createTelegramBotDriver().nextOffset, nextOffset);
});
