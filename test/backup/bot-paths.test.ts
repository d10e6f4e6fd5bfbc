/**
 * A bot's webhook path is a routing secret (its webhook secret derives from it): `exclude` backups
 * leave it out and list it in `secrets_omitted`. A restore takes it from the matching bot here, or
 * generates a new one and says so in the summary; the bot's webhook is then registered at the new
 * address with the secret of the new path.
 */

import crypto from 'node:crypto';
import type { Test } from 'tap';
import t from 'tap';
import { botWebhookSecret, webhookKeyId } from '../../core/src/relay/bots/webhook-secret.ts';
import type { BotDbRow } from '../../core/src/relay/definitions/bot.ts';
import { FakeTelegram } from '../../plugins/target-telegram/test/fakes/telegram.ts';
import { TEST_PLUGINS, type TestService, unsealed } from '../helpers/service.ts';
import { waitFor } from '../helpers/wait.ts';
import { exportNow, servicesWith, upload } from './support.ts';

const KEY = 'shared-webhook-key-0123456789';
const TOKEN = '801:AAF-alice_bot_token_for_tests_abcdefgh';
const env = {
  SERVICE_PLUGINS: `${TEST_PLUGINS},@herald/target-telegram`,
  SERVICE_MESSAGING_WEBHOOK_SECRET: KEY,
  SERVICE_PUBLIC_URL: 'https://herald.example.test',
  SERVICE_SECRET_KEY: crypto.randomBytes(32).toString('hex'),
};
const { boot, reboot } = servicesWith(env);

const deliver = (s: TestService, pathId: string, secret: string) =>
  s.request('POST', `/api/bots/${pathId}/webhook`, {
    body: {
      update_id: 1,
      message: { message_id: 1, date: 1767225600, chat: { id: 4242, type: 'private' }, text: '/start' },
    },
    headers: { 'x-telegram-bot-api-secret-token': secret },
  });

/** A service with one webhook-mode bot, the fake Bot API it talks to, and the bot's webhook path. */
async function withBot(t: Test) {
  const fake = await new FakeTelegram()
    .addBot(TOKEN, { id: 801, username: 'alice_bot' })
    .addChat({ id: 4242, type: 'private', username: 'ann' })
    .start();
  t.teardown(() => fake.close());
  const s = await boot(t);
  const bot = await s.request('POST', '/api/bots', {
    token: s.admin.token,
    body: { name: 'Hooked', token: TOKEN, mode: 'webhook', api_root: fake.url },
  });
  t.equal(bot.status, 201, bot.text);
  const pathId = new URL(fake.webhooks.get(TOKEN)!.url).pathname.split('/')[3]!;
  return { s, fake, botId: bot.body.id as string, pathId };
}

t.test('exclude backups leave the webhook path out; include backups keep it', async (t) => {
  const { s, botId, pathId } = await withBot(t);
  t.teardown(() => s.stop());
  const ex = await exportNow(s, 'exclude');
  const bot = ex.configuration.bots.find((b: any) => b.id === botId);
  t.notOk('webhook_path_id' in bot);
  t.same(bot.secrets_omitted, ['/token', '/webhook_path_id']);
  t.notMatch(JSON.stringify(ex), pathId, 'the path appears nowhere in the file');
  t.equal((await exportNow(s, 'include')).configuration.bots.find((b: any) => b.id === botId).webhook_path_id, pathId);
});

t.test('restored where the bot exists: the stored path is kept, nothing to report', async (t) => {
  let { s, fake, botId, pathId } = await withBot(t);
  t.teardown(() => s.stop());
  const backup = JSON.stringify(await exportNow(s, 'exclude'));
  await s.request('PATCH', `/api/bots/${botId}`, { token: s.admin.token, body: { name: 'Renamed' } });
  const r = await upload(s.url, s.admin.token, backup, 'conflict_mode=overwrite');
  t.equal(r.status, 201, r.text);
  t.match(r.body.summary.counts.bots, { replaced: 1 });
  t.same(r.body.summary.warnings, [], 'no new path to report');
  const registrations = () => fake.calls.filter((c) => c.method === 'setWebhook').length;
  const before = registrations();
  s = await reboot(t, s);
  const restored = (await s.service.core.db.get<BotDbRow>('SELECT * FROM bots WHERE id = ?', [botId]))!;
  t.match(restored, { name: 'Hooked', webhook_path_id: pathId });
  t.equal(unsealed(s, restored.token), TOKEN, 'the stored token is kept, sealed');
  // Restored records start `pending`: the runtime checks the bot again and registers its webhook.
  await waitFor(
    'the restored bot to be registered again and checked',
    async () =>
      registrations() > before &&
      (await s.service.core.db.get<Pick<BotDbRow, 'status'>>('SELECT status FROM bots WHERE id = ?', [botId]))!
        .status === 'ok',
  );
  const secret = botWebhookSecret(KEY, pathId);
  t.equal(fake.webhooks.get(TOKEN)?.secret_token, secret, 'the same address and secret');
  t.equal((await deliver(s, pathId, secret)).status, 200);
});

t.test('restored into another service: a new path, reported, and the webhook registered there', async (t) => {
  const src = await withBot(t);
  const backup = JSON.stringify(await exportNow(src.s, 'exclude'));
  await src.s.stop();
  const { fake, botId, pathId: oldPath } = src;
  const oldSecret = fake.webhooks.get(TOKEN)!.secret_token!;

  let s = await boot(t);
  t.teardown(() => s.stop());
  const r = await upload(s.url, s.admin.token, backup, 'conflict_mode=overwrite');
  t.equal(r.status, 201, r.text);
  t.match(r.body.summary.counts.bots, { created: 1 });
  t.match(r.body.summary.warnings, [
    `bot "Hooked" (${botId}) gets a new webhook path, since the backup leaves webhook paths out; its webhook is ` +
      'registered at the new address once the bot runs',
  ]);
  t.match(
    r.body.summary.disabled,
    [{ table: 'bots', id: botId, reason: 'secret missing from backup' }],
    'and it waits for its token',
  );
  s = await reboot(t, s);
  const row = (await s.service.core.db.get<BotDbRow>('SELECT * FROM bots WHERE id = ?', [botId]))!;
  t.match(row.webhook_path_id, /^[A-Za-z0-9_-]{40,}$/);
  t.not(row.webhook_path_id, oldPath, 'a new path');
  t.match(row, { status: 'auth_failed', webhook_key_id: null });

  // The owner gives the token back (and the bot's API server, which backups do not carry): the
  // webhook is registered at the new path with that path's secret.
  const fixed = await s.request('PATCH', `/api/bots/${botId}`, {
    token: s.admin.token,
    body: { token: TOKEN, api_root: fake.url },
  });
  t.equal(fixed.status, 200, fixed.text);
  t.equal(fixed.body.status, 'ok');
  const hook = fake.webhooks.get(TOKEN)!;
  t.equal(hook.url, `https://herald.example.test/api/bots/${row.webhook_path_id}/webhook`);
  t.equal(hook.secret_token, botWebhookSecret(KEY, row.webhook_path_id));
  t.equal(
    (await s.service.core.db.get<Pick<BotDbRow, 'webhook_key_id'>>('SELECT webhook_key_id FROM bots WHERE id = ?', [
      botId,
    ]))!.webhook_key_id,
    webhookKeyId(KEY),
  );
  t.equal((await deliver(s, row.webhook_path_id, hook.secret_token!)).status, 200);
  t.equal((await deliver(s, row.webhook_path_id, oldSecret)).status, 401, "the old path's secret opens nothing here");
  t.equal((await deliver(s, oldPath, oldSecret)).status, 404, 'the old path is gone');
});
