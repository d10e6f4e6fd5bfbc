/**
 * Messages that follow the state, end to end: a NUT UPS (fake upsd) goes on battery, then back on
 * line; the targets that can edit update the message they sent (Telegram `editMessageText`, a
 * Matrix `m.replace`, a Discord webhook message edit), email replies in the thread of the first
 * mail, Slack posts an "Update to" message. The service restarts between the two events: the
 * message references are durable. A failed edit (the message was deleted) falls back to a reply;
 * a retryable failure retries the edit itself; `update_messages: false` on a target sends anew.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { startFakeNut } from '../../plugins/provider-nut/test/fakes/nut.ts';
import { ChatWebhookSink } from '../../plugins/target-chat-webhook/test/fakes/chat-webhook-sink.ts';
import { FakeSmtp } from '../../plugins/target-email/test/fakes/smtp.ts';
import { FakeHomeserver } from '../../plugins/target-matrix/test/fakes/matrix.ts';
import { FakeTelegram } from '../../plugins/target-telegram/test/fakes/telegram.ts';
import { startService, type TestService } from '../helpers/service.ts';
import { create, link, plugins, relayOf } from './support.ts';

const TG_TOKEN = '7000002:AAHerald-updates-fake-token_012345';
const CHAT = -1009876543210;
const MX_USER = '@herald:example.org';
const MX_ROOM = '!ops:example.org';
const MX_TOKEN = 'syt_aGVyYWxk_updatesToken_0001';

const ENV = {
  SERVICE_PLUGINS: plugins(
    '@herald/provider-nut',
    '@herald/target-telegram',
    '@herald/target-matrix',
    '@herald/target-email',
    '@herald/target-chat-webhook',
  ),
};

/** The header value of a raw mail (first occurrence, unfolded). */
const header = (raw: string, name: string): string | undefined => {
  const head = raw.split(/\r?\n\r?\n/)[0]!.replace(/\r?\n[ \t]+/g, ' ');
  return new RegExp(`^${name}:\\s*(.*)$`, 'im').exec(head)?.[1]?.trim();
};

t.test(
  'a UPS on battery then on line: edited on Telegram, Matrix and Discord, a threaded reply by email, an update ' +
    'post on Slack; across a restart',
  async (t) => {
    const nut = await startFakeNut({
      ups: 'rack',
      vars: { 'ups.status': 'OL', 'battery.charge': '100', 'battery.runtime': '3600' },
    });
    const tg = await new FakeTelegram().start();
    tg.addBot(TG_TOKEN, { id: 7000002, username: 'herald_updates_bot' });
    tg.addChat({ id: CHAT, type: 'supergroup', title: 'Ops' });
    const hs = await new FakeHomeserver().start();
    hs.addUser(MX_USER, MX_TOKEN, [MX_ROOM]);
    const smtp = await new FakeSmtp({ noStartTls: true }).start();
    const sink = await new ChatWebhookSink().start();
    // Our own data folder, kept across the restart (the helper removes only the ones it made).
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-updates-'));
    let s: TestService = await startService(ENV, { dataDir });
    let token = s.admin.token;
    t.teardown(async () => {
      await s.stop();
      await Promise.all([tg.close(), hs.close(), smtp.close(), sink.close(), nut.close()]);
      fs.rmSync(dataDir, { recursive: true, force: true });
    });

    const bot = await s.request('POST', '/api/bots', {
      token,
      body: { name: 'Herald', token: TG_TOKEN, mode: 'polling', api_root: tg.url },
    });
    t.equal(bot.status, 201, bot.text);
    const targets = {
      telegram: await create(s, '/api/targets', {
        kind: 'telegram',
        name: 'TG',
        locale: 'en',
        config: { bot_id: bot.body.id, chat_id: String(CHAT) },
      }),
      matrix: await create(s, '/api/targets', {
        kind: 'matrix',
        name: 'Room',
        locale: 'en',
        config: { homeserver_url: hs.url, access_token: MX_TOKEN, room_id: MX_ROOM },
      }),
      email: await create(s, '/api/targets', {
        kind: 'email',
        name: 'Mail',
        locale: 'en',
        config: {
          host: '127.0.0.1',
          port: smtp.port,
          security: 'none',
          from: 'Herald <herald@example.org>',
          to: ['ops@example.org'],
        },
      }),
      discord: await create(s, '/api/targets', {
        kind: 'chat_webhook',
        name: 'Discord',
        locale: 'en',
        config: { format: 'discord', url: sink.url('discord') },
      }),
      slack: await create(s, '/api/targets', {
        kind: 'chat_webhook',
        name: 'Slack',
        locale: 'ru',
        config: { format: 'slack', url: sink.url('slack') },
      }),
    };
    t.equal(targets.telegram.update_messages, true, 'following is on by default');
    const provider = await create(s, '/api/providers', {
      kind: 'nut',
      name: 'Rack UPS',
      enabled: false,
      config: { host: '127.0.0.1', port: nut.port, ups_name: 'rack' },
    });
    const tracker = await create(s, '/api/trackers', { provider_id: provider.id, name: 'UPS' });
    for (const target of Object.values(targets)) await link(s, tracker.id, target.id);
    t.equal(
      (await s.request('PATCH', `/api/providers/${provider.id}`, { token, body: { enabled: true } })).status,
      200,
    );

    const poll = async (status: string) => {
      nut.vars['ups.status'] = status;
      await s.service.core.plugins.pollOnce(provider.id);
      await relayOf(s).tick();
    };
    const lastEvent = async (type: string) => {
      const r = await s.request('GET', `/api/events?event_type=${type}&limit=1`, { token });
      return r.body.events[0];
    };
    const modes = (ev: any) => Object.fromEntries(ev.deliveries.map((d: any) => [d.target_name, d.send_mode]));

    await poll('OL');
    await poll('OB DISCHRG');
    const onBattery = await lastEvent('ups_on_battery');
    t.equal(onBattery.dispatch_status, 'dispatched', JSON.stringify(onBattery.deliveries));
    t.same(
      modes(onBattery),
      { TG: 'send', Room: 'send', Mail: 'send', Discord: 'send', Slack: 'send' },
      'the first event is a new message everywhere',
    );
    t.equal(tg.sent.length, 1);
    const tgMessage = tg.sent[0]!;
    t.match(tgMessage.text, /UPS rack is on battery/);
    t.equal(hs.events.length, 1);
    const mxFirst = hs.events[0]!;
    t.equal(smtp.received.length, 1);
    const firstMailId = header(smtp.received[0]!.raw, 'Message-ID');
    t.ok(firstMailId, 'the first mail has a Message-ID');
    const discordFirst = sink.received.find((r) => r.format === 'discord')!;
    t.equal(discordFirst.method, 'POST');
    const stored = await s.service.core.db.get<{ message_ref: string }>(
      'SELECT message_ref FROM deliveries WHERE target_id = ? AND event_id = ?',
      [targets.telegram.id, onBattery.id],
    );
    t.same(
      JSON.parse(stored!.message_ref),
      { chat_id: String(CHAT), message_id: tgMessage.messageId },
      'the sent message id is stored with the delivery',
    );

    // A restart between the two events: the index of sent messages is in the database.
    await s.stop();
    s = await startService(ENV, { dataDir, setup: false });
    token = (
      await s.request('POST', '/api/auth/login', {
        body: { email: 'admin@example.test', password: 'correct horse battery' },
      })
    ).body.access_token;

    await poll('OL CHRG');
    const online = await lastEvent('ups_online');
    t.equal(online.dispatch_status, 'dispatched', JSON.stringify(online.deliveries));
    t.same(
      modes(online),
      { TG: 'edit', Room: 'edit', Mail: 'reply', Discord: 'edit', Slack: 'reply' },
      'edited where the channel can, a reply elsewhere',
    );

    t.equal(tg.calls.filter((c) => c.method === 'sendMessage').length, 1, 'Telegram: no second message');
    t.equal(tg.edits.length, 1, 'Telegram: editMessageText');
    t.equal(tg.edits[0]!.messageId, tgMessage.messageId, 'of the message sent for the first event');
    t.equal(tg.edits[0]!.chatId, CHAT);
    t.match(tg.sent[0]!.text, /UPS rack: power is back/, 'the chat shows the new state');

    t.equal(hs.events.length, 2);
    const edit = hs.events[1]!;
    t.same(
      edit.content['m.relates_to'],
      { rel_type: 'm.replace', event_id: mxFirst.event_id },
      'Matrix: m.replace relating to the first event',
    );
    t.match(edit.content['m.new_content'].body, /UPS rack: power is back/);
    t.match(edit.content.body, /^\* /, 'with the fallback for clients without edits');

    t.equal(smtp.received.length, 2);
    t.equal(header(smtp.received[1]!.raw, 'In-Reply-To'), firstMailId, 'email: In-Reply-To the first mail');
    t.match(header(smtp.received[1]!.raw, 'References') ?? '', firstMailId!);

    const discordEdit = sink.received.filter((r) => r.format === 'discord').at(-1)!;
    t.equal(discordEdit.method, 'PATCH', 'Discord: the webhook message is edited');
    t.match(discordEdit.path, /\/messages\/\d+$/);
    t.equal([...sink.discordMessages.values()][0]!.edited, 1);
    const slackPosts = sink.received.filter((r) => r.format === 'slack');
    t.equal(slackPosts.length, 2, 'Slack: a second post');
    t.match(
      slackPosts[1]!.body.text,
      /^_Обновление к «ИБП rack работает от батареи»:_\n\*ИБП rack: питание восстановлено\*/,
      "that says which post it updates, in the target's language",
    );

    // A retryable failure of the edit retries the edit, not a new message.
    tg.failNext(502, 'Bad Gateway');
    await poll('OB DISCHRG');
    const again = await lastEvent('ups_on_battery');
    const tgDelivery = again.deliveries.find((d: any) => d.target_name === 'TG');
    t.equal(tgDelivery.status, 'queued', 'the failed edit waits for its retry');
    s.clock.advance(15 * 60_000);
    await relayOf(s).tick();
    t.equal(
      (await lastEvent('ups_on_battery')).deliveries.find((d: any) => d.target_name === 'TG').send_mode,
      'edit',
      'the retry edited',
    );
    t.equal(tg.calls.filter((c) => c.method === 'sendMessage').length, 1, 'still one message');
    t.equal(tg.edits.length, 2);
    t.equal(tg.edits[1]!.messageId, tgMessage.messageId);

    // The message was deleted in the chat: the edit fails for good, a reply goes out instead, and the
    // next state edits that reply.
    tg.deleteMessage(CHAT, tgMessage.messageId);
    await poll('OL');
    const afterDelete = await lastEvent('ups_online');
    t.equal(afterDelete.deliveries.find((d: any) => d.target_name === 'TG').send_mode, 'reply', 'fell back to a reply');
    const replyMsg = tg.sent.at(-1)!;
    t.same(replyMsg.params.reply_parameters, { message_id: tgMessage.messageId, allow_sending_without_reply: true });
    await poll('OB');
    t.equal(tg.edits.at(-1)!.messageId, replyMsg.messageId, 'later states edit the reply');

    // Following turned off on a target: new messages only.
    const off = await s.request('PATCH', `/api/targets/${targets.telegram.id}`, {
      token,
      body: { update_messages: false },
    });
    t.equal(off.status, 200, off.text);
    t.equal(off.body.update_messages, false);
    const sends = tg.calls.filter((c) => c.method === 'sendMessage').length;
    await poll('OL');
    t.equal(tg.calls.filter((c) => c.method === 'sendMessage').length, sends + 1, 'a new message');
    t.equal((await lastEvent('ups_online')).deliveries.find((d: any) => d.target_name === 'TG').send_mode, 'send');
  },
);
