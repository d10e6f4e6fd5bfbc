/**
 * Every webhook-mode bot proves its deliveries with a secret of its own, derived from
 * SERVICE_MESSAGING_WEBHOOK_SECRET (the key) and its webhook path: what one user's bot service is
 * given opens no other bot, and the key itself is never sent anywhere. Webhooks registered with the
 * shared value before the upgrade keep working until they are registered again with the bot's own
 * secret, which the service does at boot and then periodically; a changed key is handled the same way.
 */

import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { newId, randomToken } from '../../core/src/http/ids.ts';
import { botWebhookSecret, webhookKeyId } from '../../core/src/relay/bots/webhook-secret.ts';
import { FakeTelegram } from '../../plugins/target-telegram/test/fakes/telegram.ts';
import { startService, TEST_PLUGINS, type TestService } from '../helpers/service.ts';
import { waitFor } from '../helpers/wait.ts';

const PLUGINS = `${TEST_PLUGINS},@herald/target-telegram`;
const KEY = 'shared-webhook-key-0123456789';
const PUBLIC = 'https://herald.example.test';
const TOKEN_A = '801:AAF-alice_bot_token_for_tests_abcdefgh';
const TOKEN_B = '802:AAF-mallory_bot_token_for_tests_abcdef';
const HEADER = 'x-telegram-bot-api-secret-token';

/** Waits (up to 15 s) until `fn` answers a truthy value, and returns it. */
const until = <T>(fn: () => T | Promise<T>) => waitFor("the bot's webhook state", fn);

const start = (chatId: number) => ({
  message: {
    message_id: 1,
    date: 1767225600,
    chat: { id: chatId, type: 'private', username: 'ann' },
    from: { id: 9, is_bot: false, first_name: 'Ann' },
    text: '/start',
  },
});
const deliver = (s: TestService, pathId: string, secret: string, updateId = 1) =>
  s.request('POST', `/api/bots/${pathId}/webhook`, {
    body: { update_id: updateId, ...start(4242) },
    headers: { [HEADER]: secret },
  });
const pathOf = (hook: { url: string } | undefined) => new URL(hook!.url).pathname.split('/')[3]!;

t.test(
  "each bot gets its own secret: user B never receives one that opens user A's bot, nor the shared key",
  async (t) => {
    const fakeA = await new FakeTelegram()
      .addBot(TOKEN_A, { id: 801, username: 'alice_bot' })
      .addChat({ id: 4242, type: 'private', username: 'ann' })
      .start();
    // User B points their bot at a Bot API server of their own, so B sees everything their bot is given.
    const fakeB = await new FakeTelegram()
      .addBot(TOKEN_B, { id: 802, username: 'mallory_bot' })
      .addChat({ id: 4242, type: 'private', username: 'ann' })
      .start();
    const s = await startService({
      SERVICE_PLUGINS: PLUGINS,
      SERVICE_MESSAGING_WEBHOOK_SECRET: KEY,
      SERVICE_PUBLIC_URL: PUBLIC,
    });
    t.teardown(async () => {
      await s.stop();
      await fakeA.close();
      await fakeB.close();
    });
    const db = s.service.core.db;
    const userA = await s.user();
    const userB = await s.user();

    const a = await s.request('POST', '/api/bots', {
      token: userA.token,
      body: { name: 'A', token: TOKEN_A, mode: 'webhook', api_root: fakeA.url },
    });
    const b = await s.request('POST', '/api/bots', {
      token: userB.token,
      body: { name: 'B', token: TOKEN_B, mode: 'webhook', api_root: fakeB.url },
    });
    t.equal(a.status, 201, a.text);
    t.equal(b.status, 201, b.text);
    const hookA = fakeA.webhooks.get(TOKEN_A)!;
    const hookB = fakeB.webhooks.get(TOKEN_B)!;
    const [pathA, pathB] = [pathOf(hookA), pathOf(hookB)];
    const [secretA, secretB] = [hookA.secret_token!, hookB.secret_token!];
    t.not(pathA, pathB);
    t.not(secretA, secretB, 'two bots, two secrets');
    for (const secret of [secretA, secretB]) {
      t.match(secret, /^[A-Za-z0-9_-]{1,256}$/, 'within the alphabet and length Telegram allows');
      t.not(secret, KEY, 'not the shared key');
    }

    // Everything B holds, tried on A's bot (B would not even know A's path id).
    t.equal((await deliver(s, pathA, secretB)).status, 401, "B's secret does not open A's bot");
    t.equal((await deliver(s, pathA, KEY)).status, 401, 'neither does the shared key');
    t.equal((await deliver(s, pathA, secretB.slice(0, -1))).status, 401);
    t.equal(
      Number((await db.get('SELECT COUNT(*) AS n FROM bot_chats WHERE bot_id = ?', [a.body.id]))!.n),
      0,
      "nothing reached A's bot",
    );
    t.equal((await deliver(s, pathB, secretA)).status, 401, "nor A's secret B's bot");
    t.equal((await deliver(s, pathA, secretA)).status, 200, "A's own secret opens A's bot");
    t.equal((await deliver(s, pathB, secretB)).status, 200, "B's own secret opens B's bot");
    t.ok(await db.get('SELECT 1 AS x FROM bot_chats WHERE bot_id = ? AND chat_id = ?', [a.body.id, '4242']));

    // B re-registers as often as they like (edit, back and forth between modes): always their own secret.
    t.equal(
      (await s.request('PATCH', `/api/bots/${b.body.id}`, { token: userB.token, body: { mode: 'polling' } })).status,
      200,
    );
    t.equal(
      (await s.request('PATCH', `/api/bots/${b.body.id}`, { token: userB.token, body: { mode: 'webhook' } })).status,
      200,
    );
    t.equal(fakeB.webhooks.get(TOKEN_B)?.secret_token, secretB, 'the same secret again');

    // The key never leaves the service: not to either bot service, not in an answer, not in the log.
    const sent = JSON.stringify([fakeA.calls, fakeB.calls]);
    t.ok(fakeA.calls.some((c) => c.method === 'setWebhook') && fakeB.calls.some((c) => c.method === 'setWebhook'));
    t.notOk(sent.includes(KEY), 'no bot service was sent the key');
    const answers = JSON.stringify([
      (await s.request('GET', '/api/bots', { token: userA.token })).body,
      (await s.request('GET', '/api/bots', { token: userB.token })).body,
    ]);
    for (const secret of [KEY, secretA, secretB, pathA, pathB])
      t.notOk(answers.includes(secret), 'the API shows neither the key, the secrets nor the paths');
    for (const secret of [KEY, secretA, secretB])
      t.notOk(s.logText().includes(secret), 'the log holds neither the key nor the secrets');
  },
);

t.test(
  "webhooks registered with the shared value keep working after the upgrade, then move to the bot's own secret",
  async (t) => {
    const fake = await new FakeTelegram()
      .addBot(TOKEN_A, { id: 801, username: 'alice_bot' })
      .addChat({ id: 4242, type: 'private', username: 'ann' })
      .start();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-bot-upgrade-'));
    const env = {
      SERVICE_PLUGINS: PLUGINS,
      SERVICE_MESSAGING_WEBHOOK_SECRET: KEY,
      SERVICE_PUBLIC_URL: PUBLIC,
      SERVICE_SECRET_KEY: crypto.randomBytes(32).toString('hex'),
    };
    let s = await startService(env, { dataDir: dir });
    t.teardown(async () => {
      await s.stop();
      await fake.close();
      fs.rmSync(dir, { recursive: true, force: true });
    });
    const boot = async (extra: Record<string, string> = {}) => {
      await s.stop();
      s = await startService({ ...env, ...extra }, { dataDir: dir, setup: false });
      return s;
    };

    // The database and the bot service as the previous release left them: a webhook bot whose
    // webhook carries the shared value, a polling bot, and no webhook_key_id column yet.
    const now = new Date().toISOString();
    const hooked = newId();
    const pathId = randomToken();
    const insert = (id: string, token: string, mode: string, status: string, p: string) =>
      s.service.core.db.run(
        'INSERT INTO bots (id, user_id, kind, name, token, mode, webhook_path_id, api_root, status, created_at, ' +
          `updated_at) VALUES (?, ?, 'telegram', ?, ?, ?, ?, ?, ?, ?, ?)`,
        [id, s.admin.id, mode, token, mode, p, fake.url, status, now, now],
      );
    await insert(hooked, TOKEN_A, 'webhook', 'ok', pathId);
    const polling = newId();
    await insert(polling, '803:AAF-revoked_polling_token_for_tests_ab', 'polling', 'auth_failed', randomToken());
    fake.webhooks.set(TOKEN_A, { url: `${PUBLIC}/api/bots/${pathId}/webhook`, secret_token: KEY });
    await s.service.core.db.run('ALTER TABLE bots DROP COLUMN webhook_key_id');
    await s.service.core.db.run('DELETE FROM schema_migrations WHERE id = ?', ['0007_bot_webhook_secret']);

    // The upgrade: the migration marks the webhook as registered with the shared value. The bot
    // service is down at boot, so the registration with the bot's own secret fails for now.
    fake.failNext(502, 'Bad Gateway');
    s = await boot();
    const db = () => s.service.core.db;
    const row = () => db().get('SELECT * FROM bots WHERE id = ?', [hooked]);
    await until(async () => (await row())?.status === 'pending');
    t.equal(
      (await row())!.webhook_key_id,
      'shared',
      'the migration marks the webhook as registered with the shared value',
    );
    t.equal(
      (await db().get('SELECT webhook_key_id FROM bots WHERE id = ?', [polling]))!.webhook_key_id,
      null,
      'a polling bot has no webhook',
    );
    t.equal(
      fake.webhooks.get(TOKEN_A)?.secret_token,
      KEY,
      'the bot service still proves deliveries with the shared value',
    );
    const during = await deliver(s, pathId, KEY);
    t.equal(during.status, 200, `deliveries keep working meanwhile: ${during.text}`);
    t.ok(await db().get('SELECT 1 AS x FROM bot_chats WHERE bot_id = ?', [hooked]), 'and are recorded');
    const own = botWebhookSecret(KEY, pathId);
    t.equal((await deliver(s, pathId, own, 2)).status, 200, "the bot's own secret is accepted too");

    // The periodic job (it runs on the leader every ten minutes) catches up once the service answers.
    await s.service.core.jobs.runNow('bot-webhooks');
    t.equal(fake.webhooks.get(TOKEN_A)?.secret_token, own, "registered again with the bot's own secret");
    t.equal(fake.webhooks.get(TOKEN_A)?.url, `${PUBLIC}/api/bots/${pathId}/webhook`, 'at the same address');
    t.match(await row(), { status: 'ok', webhook_key_id: webhookKeyId(KEY) });
    t.equal((await deliver(s, pathId, KEY, 3)).status, 401, 'from then on the shared value proves nothing');
    t.equal((await deliver(s, pathId, own, 4)).status, 200);
    t.ok(
      fake.calls.filter((c) => c.method === 'setWebhook').every((c) => c.params.secret_token !== KEY),
      'the key was never sent',
    );

    // The operator changes the key: at boot every webhook is registered again with a secret under the new one.
    const KEY2 = 'another-webhook-key-9876543210';
    s = await boot({ SERVICE_MESSAGING_WEBHOOK_SECRET: KEY2 });
    const renewed = botWebhookSecret(KEY2, pathId);
    await until(() => fake.webhooks.get(TOKEN_A)?.secret_token === renewed);
    await until(async () => (await row())?.webhook_key_id === webhookKeyId(KEY2));
    t.equal((await deliver(s, pathId, renewed, 5)).status, 200, 'the secret under the new key works');
    t.equal((await deliver(s, pathId, own, 6)).status, 401, 'the one under the old key does not');
    t.equal((await deliver(s, pathId, KEY2, 7)).status, 401, 'nor the new key itself');
    t.notOk(JSON.stringify(fake.calls).includes(KEY2), 'the new key was never sent either');
  },
);
