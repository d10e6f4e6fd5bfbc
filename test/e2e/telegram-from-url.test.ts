/**
 * An Apprise `tgram://{bot_token}/{chat_id}` URL becomes a Telegram target that sends through the
 * caller's bot with that token: the one already registered (here against a fake Bot API server),
 * never another user's bot with the same token.
 */
import t from 'tap';
import { FakeTelegram } from '../../plugins/target-telegram/test/fakes/telegram.ts';
import { startService } from '../helpers/service.ts';
import { plugins } from './support.ts';

const TOKEN = '7000002:AAHerald-from-url-token_0123456789';

t.test("tgram:// uses the caller's bot with that token and the target sends through it", async (t) => {
  const tg = await new FakeTelegram().start();
  tg.addBot(TOKEN, { id: 7000002, username: 'herald_url_bot' });
  tg.addChat({ id: -1009876543210, type: 'supergroup', title: 'Lab' });
  const s = await startService({ SERVICE_PLUGINS: plugins('herald-plugin-example', '@herald/target-telegram') });
  t.teardown(async () => {
    await s.stop();
    await tg.close();
  });
  const token = s.admin.token;
  const bot = await s.request('POST', '/api/bots', {
    token,
    body: { name: 'Herald', token: TOKEN, mode: 'polling', api_root: tg.url },
  });
  t.equal(bot.status, 201, bot.text);

  const parsed = await s.request('POST', '/api/targets/parse-url', {
    token,
    body: { url: `tgram://${TOKEN}/-1009876543210` },
  });
  t.same(
    parsed.body.config,
    { chat_id: '-1009876543210', bot_id: bot.body.id },
    'the form is filled with the registered bot',
  );

  const made = await s.request('POST', '/api/targets/from-url', {
    token,
    body: { url: `tgram://${TOKEN}/-1009876543210`, locale: 'ru' },
  });
  t.equal(made.status, 201, made.text);
  t.match(made.body, { kind: 'telegram', locale: 'ru', config: { bot_id: bot.body.id, chat_id: '-1009876543210' } });
  t.equal((await s.request('GET', '/api/bots', { token })).body.bots.length, 1, 'no second bot record');

  const test = await s.request('POST', `/api/targets/${made.body.id}/test`, { token });
  t.equal(test.status, 200, test.text);
  t.equal(tg.sent.length, 1, 'the test message went through the fake Bot API');
  t.equal(String(tg.sent[0].params.chat_id), '-1009876543210');

  // Another user with the same URL does not get the first user's bot.
  const other = await s.user();
  const theirs = await s.request('POST', '/api/targets/parse-url', {
    token: other.token,
    body: { url: `tgram://${TOKEN}/1` },
  });
  t.equal(theirs.body.config.bot_id, undefined, 'a bot of another user is never used');
});
