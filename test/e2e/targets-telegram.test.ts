/**
 * End to end through the real service: example webhook → tracker → Telegram target → a fake
 * Bot API server. The bot is registered with `POST /api/bots` naming the fake as its own Bot API
 * server (`api_root`), so getMe, the polling loop and the target's sends all go to the fake.
 */
import t from 'tap';
import { FakeTelegram } from '../../plugins/target-telegram/test/fakes/telegram.ts';
import { startService } from '../helpers/service.ts';
import { metric, plugins, until } from './support.ts';
import { gap, pipeline } from './targets-support.ts';

const TOKEN = '7000001:AAHerald-e2e-fake-token_0123456789';
const CHAT = -1001234567890;

t.test(
  'telegram: HTML delivery, long bodies split, retry_after honoured, a rejected token fails without retry',
  async (t) => {
    const tg = await new FakeTelegram().start();
    tg.addBot(TOKEN, { id: 7000001, username: 'herald_e2e_bot' });
    tg.addChat({ id: CHAT, type: 'supergroup', title: 'Ops' });
    const s = await startService({ SERVICE_PLUGINS: plugins('herald-plugin-example', '@herald/target-telegram') });
    t.teardown(async () => {
      await s.stop();
      await tg.close();
    });

    const bot = await s.request('POST', '/api/bots', {
      token: s.admin.token,
      body: { name: 'Herald', token: TOKEN, mode: 'polling', api_root: tg.url },
    });
    t.equal(bot.status, 201, bot.text);
    t.equal(bot.body.username, 'herald_e2e_bot', "getMe answered by the bot's own API server");
    t.equal(bot.body.bot_id, '7000001');
    t.equal(bot.body.token, '********');
    // The polling loop holds one long getUpdates open; failures injected below then hit the sends.
    await until('the polling loop', () => tg.calls.some((c) => c.method === 'getUpdates'));

    // No api_root on the target: it sends through its bot's server.
    const p = await pipeline(s, {
      kind: 'telegram',
      name: 'TG',
      config: { bot_id: bot.body.id, chat_id: String(CHAT) },
    });
    const sends = () => tg.calls.filter((c) => c.method === 'sendMessage').length;

    const e1 = await p.fire('<b>door</b> & co');
    await p.tick();
    t.equal(tg.sent.length, 1);
    t.equal(tg.sent[0].params.parse_mode, 'HTML');
    t.match(tg.sent[0].raw, /^<b>Thing: &lt;b&gt;door&lt;\/b&gt; &amp; co<\/b>\n/, 'bold title, payload escaped');
    t.match(tg.sent[0].text, /^Thing: <b>door<\/b> & co\n/, 'what the chat shows');
    t.equal((await p.outcome(e1)).event.dispatch_status, 'dispatched');

    const words = Array.from({ length: 1100 }, (_, i) => `w${i}`).join(' ');
    const e2 = await p.fire('long', { note: words });
    await p.tick();
    const parts = tg.sent.slice(1);
    t.equal(parts.length, 2, 'a body over 4096 characters goes in two messages');
    t.ok(parts.every((m) => m.text.length <= 4096));
    t.match(parts[0].text, /^Thing: long\nlong happened \(w0 w1 /);
    t.match(parts[1].text, /w1099\)$/, 'in order, nothing lost');
    t.equal((await p.outcome(e2)).delivery.status, 'sent');

    const t0 = '2026-04-01T12:00:00.000Z';
    s.clock.set(t0);
    tg.rateLimitNext(7);
    const e3 = await p.fire('slow down');
    await p.tick();
    const limited = await p.outcome(e3);
    t.equal(limited.delivery.status, 'queued', 'requeued');
    t.equal(gap(t0, limited.delivery.next_attempt_at), 7000, 'after exactly retry_after seconds');
    t.equal(Number(limited.delivery.last_status_code), 429);
    const before = sends();
    s.clock.set('2026-04-01T12:00:06.500Z');
    await p.tick();
    t.equal(sends(), before, 'not tried again before retry_after');
    s.clock.set('2026-04-01T12:00:07.000Z');
    await p.tick();
    t.equal((await p.outcome(e3)).delivery.status, 'sent', 'sent once retry_after passed');
    t.match(tg.sent.at(-1)!.text, /^Thing: slow down/);

    tg.failNext(401, 'Unauthorized');
    const e4 = await p.fire('revoked');
    await p.tick();
    const failed = await p.outcome(e4);
    t.equal(failed.event.dispatch_status, 'failed');
    t.equal(failed.delivery.status, 'failed');
    t.match(
      failed.event.details.targets[0].error,
      /401 Unauthorized \(the bot token was rejected\)/,
      'a permanent reason',
    );
    t.notMatch(JSON.stringify(failed.event), /AAHerald-e2e-fake-token/, 'the token is masked');
    const afterFail = sends();
    s.clock.set('2026-04-01T14:00:00.000Z');
    await p.tick();
    t.equal(sends(), afterFail, 'not retried');
    t.equal(Number((await p.outcome(e4)).delivery.attempts), 1);
    t.equal(await metric(s, 'service_target_send_failures_total', '{target_type="telegram",status_code="429"}'), 1);
    t.equal(
      await metric(s, 'service_target_send_failures_total', '{target_type="telegram",status_code="401"}'),
      1,
      'the rejection is counted under its HTTP status',
    );
    t.notMatch(s.logText(), /AAHerald-e2e-fake-token/, 'nor does it reach the log');
  },
);
