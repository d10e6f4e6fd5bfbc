import http from 'node:http';
import { errorCode } from '@herald/plugin-api';
import { captureLogger, createTestHost } from '@herald/plugin-api/testing';
import t from 'tap';
import { FakeTelegram } from '../test/fakes/telegram.ts';
import { parseTelegramHtml } from '../test/fakes/telegram-html.ts';
import { createTelegramBotDriver } from './driver.ts';
import plugin from './index.ts';

const TOKEN = '123456:AAE-fake_token_for_tests_0123456789ab';
const BOT = { id: 'bot-1', token: TOKEN, botId: '123456', username: 'HeraldBot' };

async function setup(t: { teardown(fn: () => unknown): void }, config: Record<string, unknown> = {}) {
  const fake = await new FakeTelegram()
    .addBot(TOKEN, { id: 123456, username: 'HeraldBot' })
    .addChat({ id: -1001, type: 'supergroup', title: 'Ops' })
    .addChat({ id: -1002, type: 'supergroup', title: 'Forum', isForum: true, topics: [7] })
    .addChat({ id: 42, type: 'private', blocked: true })
    .start();
  const host = createTestHost();
  t.teardown(async () => {
    await fake.close();
    await (host.http as { close?: () => Promise<void> }).close?.();
  });
  const harness = await host.target(
    plugin,
    { bot_id: 'bot-1', chat_id: '-1001', api_root: fake.url, ...config },
    { bot: BOT },
  );
  return { fake, harness, ...harness };
}

/** Runs `fn` and returns what it threw. */
async function thrown(fn: () => Promise<unknown>): Promise<any> {
  try {
    await fn();
  } catch (err) {
    return err;
  }
  throw new Error('expected a failure');
}

t.test('sends HTML with the title in bold and the escaping preserved', async (t) => {
  const { fake, instance, message } = await setup(t);
  const res = await instance.send(message({ title: 'Disk &lt;sda&gt;', body: 'a &amp; b <i>now</i>' }), {
    signal: AbortSignal.timeout(5000),
    attempt: 1,
  });
  t.equal(fake.sent.length, 1);
  const [m] = fake.sent;
  t.equal(m.raw, '<b>Disk &lt;sda&gt;</b>\na &amp; b <i>now</i>');
  t.equal(m.text, 'Disk <sda>\na & b now');
  t.equal(m.params.parse_mode, 'HTML');
  t.equal(m.chatId, -1001);
  t.notOk('message_thread_id' in m.params);
  t.notOk('disable_notification' in m.params);
  t.same(
    res,
    { remoteId: String(m.messageId), detail: undefined, messageRef: { chat_id: '-1001', message_id: m.messageId } },
    'the message id to edit it later',
  );
});

t.test('an empty title leaves just the body', async (t) => {
  const { fake, instance, message } = await setup(t);
  await instance.send(message({ title: '', body: 'only body' }), { signal: AbortSignal.timeout(5000), attempt: 1 });
  t.equal(fake.sent[0].raw, 'only body');
});

t.test('a 10,000-character body goes out in ordered parts the API accepts', async (t) => {
  const { fake, instance, message, store } = await setup(t);
  const line = 'Line <b>bold &amp; <i>italic</i></b> text, padded to be long enough.\n';
  let body = '';
  while (parseTelegramHtml(body).text.length < 10_000) body += line;
  const res = await instance.send(message({ title: 'Report', body: `<blockquote>${body}</blockquote>` }), {
    signal: AbortSignal.timeout(5000),
    attempt: 1,
  });
  t.ok(fake.sent.length >= 3, `${fake.sent.length} parts`);
  for (const m of fake.sent) t.ok(m.text.length <= 4096, `part of ${m.text.length} visible chars`);
  t.ok(fake.sent[0].raw.startsWith('<b>Report</b>\n<blockquote>'));
  for (const m of fake.sent.slice(1)) t.ok(m.raw.startsWith('<blockquote>'), 'the quote is reopened');
  const ids = fake.sent.map((m) => m.messageId);
  t.same(
    ids,
    [...ids].sort((a, b) => a - b),
    'sent in order',
  );
  t.equal(res?.remoteId, ids.join(','));
  t.equal(store.data.size, 0, 'progress is forgotten once the delivery is complete');
});

t.test('a retry resumes after the parts already delivered', async (t) => {
  const { fake, instance, message, store } = await setup(t);
  const msg = message({ title: '', body: 'word '.repeat(2000) });
  fake.rateLimitNext(3, { after: 1 });
  const err = await thrown(() => instance.send(msg, { signal: AbortSignal.timeout(5000), attempt: 1 }));
  t.equal(errorCode(err), 'RATE_LIMITED');
  t.equal(fake.sent.length, 1, 'the first part went out before the 429');
  t.equal(store.data.size, 1, 'progress is remembered');
  await instance.send(msg, { signal: AbortSignal.timeout(5000), attempt: 2 });
  t.equal(fake.sent.length, 3, 'the retry sends only the two remaining parts');
  t.equal(
    fake.sent
      .map((m) => m.text)
      .join(' ')
      .replace(/\s+/g, ' ')
      .trim(),
    'word '.repeat(2000).trim(),
  );
});

t.test('forum topic, silent and link-preview flags reach the API', async (t) => {
  const { fake, instance, message } = await setup(t, {
    chat_id: '-1002',
    message_thread_id: 7,
    silent: true,
    disable_link_preview: true,
  });
  await instance.send(message(), { signal: AbortSignal.timeout(5000), attempt: 1 });
  const [m] = fake.sent;
  t.equal(m.chatId, -1002);
  t.equal(m.params.message_thread_id, 7);
  t.equal(m.params.disable_notification, true);
  t.same(m.params.link_preview_options, { is_disabled: true });
});

t.test('an unknown forum topic is a permanent failure', async (t) => {
  const { instance, message } = await setup(t, { chat_id: '-1002', message_thread_id: 99 });
  const err = await thrown(() => instance.send(message(), { signal: AbortSignal.timeout(5000), attempt: 1 }));
  t.equal(errorCode(err), 'PERMANENT_SEND');
  t.equal(err.statusCode, 400);
  t.match(err.message, /message thread not found/);
});

t.test('429 becomes RateLimitedError with retry_after in milliseconds', async (t) => {
  const { fake, instance, message } = await setup(t);
  fake.rateLimitNext(17);
  const err = await thrown(() => instance.send(message(), { signal: AbortSignal.timeout(5000), attempt: 1 }));
  t.equal(errorCode(err), 'RATE_LIMITED');
  t.equal(err.retryAfterMs, 17_000);
  t.match(err.message, /Too Many Requests: retry after 17/);
});

t.test('a rejected token is AuthFailedError and the token never shows', async (t) => {
  const { fake, instance, message } = await setup(t);
  fake.bots.clear();
  const err = await thrown(() => instance.send(message(), { signal: AbortSignal.timeout(5000), attempt: 1 }));
  t.equal(errorCode(err), 'AUTH_FAILED');
  t.match(err.message, /401 Unauthorized/);
  t.notMatch(String(err.message) + String(err.stack), TOKEN.split(':')[1]);
});

t.test('chat not found, bad entities and a blocked bot are permanent', async (t) => {
  const { instance, message } = await setup(t, { chat_id: '-999' });
  let err = await thrown(() => instance.send(message(), { signal: AbortSignal.timeout(5000), attempt: 1 }));
  t.equal(errorCode(err), 'PERMANENT_SEND');
  t.equal(err.statusCode, 400);
  t.match(err.message, /Bad Request: chat not found/);

  const other = await setup(t);
  err = await thrown(() =>
    other.instance.send(other.message({ body: '<p>a tag Telegram does not know</p>' }), {
      signal: AbortSignal.timeout(5000),
      attempt: 1,
    }),
  );
  t.equal(errorCode(err), 'PERMANENT_SEND');
  t.match(err.message, /can't parse entities: Unsupported start tag "p"/);

  const blocked = await setup(t, { chat_id: '42' });
  err = await thrown(() => blocked.instance.send(blocked.message(), { signal: AbortSignal.timeout(5000), attempt: 1 }));
  t.equal(errorCode(err), 'PERMANENT_SEND');
  t.equal(err.statusCode, 403);
});

t.test('5xx answers and network failures are retryable', async (t) => {
  const { fake, instance, message } = await setup(t);
  fake.failNext(502, 'Bad Gateway', { html: true });
  let err = await thrown(() => instance.send(message(), { signal: AbortSignal.timeout(5000), attempt: 1 }));
  t.equal(errorCode(err), 'RETRYABLE_SEND');
  t.equal(err.statusCode, 502);
  fake.failNext(500, 'Internal Server Error');
  err = await thrown(() => instance.send(message(), { signal: AbortSignal.timeout(5000), attempt: 1 }));
  t.equal(errorCode(err), 'RETRYABLE_SEND');
  t.equal(err.statusCode, 500);

  await fake.close();
  err = await thrown(() => instance.send(message(), { signal: AbortSignal.timeout(5000), attempt: 1 }));
  t.equal(errorCode(err), 'RETRYABLE_SEND');
  t.equal(err.statusCode, 0);
  t.notMatch(err.message, TOKEN.split(':')[1]);
});

t.test('a target without its bot is a configuration error', async (t) => {
  const host = createTestHost();
  t.teardown(() => (host.http as { close?: () => Promise<void> }).close?.());
  const { instance, message } = await host.target(plugin, { bot_id: 'gone', chat_id: '@channel_name' });
  t.throws(() => instance.start!(), { code: 'CONFIG' });
  const err = await thrown(() => instance.send(message(), { signal: AbortSignal.timeout(5000), attempt: 1 }));
  t.equal(errorCode(err), 'CONFIG');
});

t.test('config validation refuses a malformed chat id', async (t) => {
  const host = createTestHost();
  t.teardown(() => (host.http as { close?: () => Promise<void> }).close?.());
  await t.rejects(host.target(plugin, { bot_id: 'b', chat_id: 'not a chat' }), /chat_id/);
});

t.test('a redirecting api_root never gets the token to another origin: the redirect is refused', async (t) => {
  // The second origin records whatever reaches it; api_root answers every request with a redirect
  // there that keeps the path (and so the token), as a misconfigured proxy would.
  const reached: string[] = [];
  const second = http.createServer((req, res) => {
    reached.push(req.url!);
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true,"result":{}}');
  });
  const first = http.createServer((req, res) =>
    res.writeHead(307, { location: `http://127.0.0.1:${(second.address() as { port: number }).port}${req.url}` }).end(),
  );
  for (const s of [second, first]) await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  t.teardown(() => {
    for (const s of [first, second]) {
      s.closeAllConnections();
      s.close();
    }
  });
  const apiRoot = `http://127.0.0.1:${(first.address() as { port: number }).port}`;

  const host = createTestHost();
  const { instance, message } = await host.target(
    plugin,
    { bot_id: 'bot-1', chat_id: '-1001', api_root: apiRoot },
    { bot: BOT },
  );
  const err = await thrown(() => instance.send(message(), { signal: AbortSignal.timeout(5000), attempt: 1 }));
  t.equal(errorCode(err), 'PERMANENT_SEND', 'a redirect is a configuration problem, not worth retrying');
  t.match(err.message, /api_root redirects elsewhere/);
  t.notMatch(err.message, TOKEN, 'the token is not in the error');

  // The bot driver (getMe, polling, replies) goes through the same fetch.
  const driver = createTelegramBotDriver({ apiRoot });
  const driverErr = await thrown(() =>
    driver.getMe({ http: host.http, log: captureLogger() }, TOKEN, AbortSignal.timeout(5000)),
  );
  t.notMatch(driverErr.message, TOKEN);
  t.same(reached, [], 'the second origin never saw a request, so never the token');
});

t.test(
  'update: editMessageText on the earlier message; the same text again is done; a deleted message is permanent; ' +
    'too long or another chat is not supported',
  async (t) => {
    const { fake, instance, message } = await setup(t);
    const o = { signal: AbortSignal.timeout(5000), attempt: 1 };
    const first = await instance.send(message({ title: 'UPS on battery', body: 'Charge 80%' }), o);
    const previous = { messageRef: first!.messageRef!, deliveryId: 'd1', eventType: 'ups_on_battery' };
    const edited = await instance.update!(
      { previous, message: message({ deliveryId: 'd2', title: 'UPS back on line', body: 'Charge 81%' }) },
      o,
    );
    t.same(edited, { remoteId: String(fake.sent[0]!.messageId), messageRef: first!.messageRef });
    t.equal(fake.edits.length, 1);
    t.equal(fake.edits[0]!.raw, '<b>UPS back on line</b>\nCharge 81%');
    t.equal(fake.edits[0]!.params.parse_mode, 'HTML');
    t.equal(fake.sent.length, 1, 'no new message');

    const again = await instance.update!(
      { previous, message: message({ deliveryId: 'd2', title: 'UPS back on line', body: 'Charge 81%' }) },
      o,
    );
    t.match(again, { detail: 'already up to date' }, 'a retry after the edit went through is not a failure');

    t.equal(
      await instance.update!({ previous, message: message({ body: 'x '.repeat(3000) }) }, o),
      false,
      'a text needing two messages is not edited in',
    );
    t.equal(
      await instance.update!(
        { previous: { ...previous, messageRef: { chat_id: '-1002', message_id: 1 } }, message: message() },
        o,
      ),
      false,
      'a message in another chat than the configured one',
    );

    fake.deleteMessage(-1001, fake.sent[0]!.messageId);
    const err = await thrown(() => instance.update!({ previous, message: message({ body: 'gone' }) }, o));
    t.equal(errorCode(err), 'PERMANENT_SEND');
    t.match(err.message, /message to edit not found/);
  },
);

t.test('reply: a new message replying to the earlier one, sent even if that one is gone', async (t) => {
  const { fake, instance, message } = await setup(t);
  const o = { signal: AbortSignal.timeout(5000), attempt: 1 };
  const first = await instance.send(message({ title: 'Build failed' }), o);
  const previous = { messageRef: first!.messageRef!, deliveryId: 'd1', eventType: 'workflow_run_failed' };
  const r = await instance.reply!({ previous, message: message({ deliveryId: 'd2', title: 'Build failed again' }) }, o);
  t.equal(fake.sent.length, 2);
  t.same(fake.sent[1]!.params.reply_parameters, {
    message_id: fake.sent[0]!.messageId,
    allow_sending_without_reply: true,
  });
  t.same((r as { messageRef?: unknown }).messageRef, { chat_id: '-1001', message_id: fake.sent[1]!.messageId });
  fake.deleteMessage(-1001, fake.sent[0]!.messageId);
  await instance.reply!({ previous, message: message({ deliveryId: 'd3', title: 'And again' }) }, o);
  t.equal(fake.sent.at(-1)!.text, 'And again\nBody', 'still sent');
});
