/**
 * Two services in one process on one PostgreSQL database: what one replica changes, the other
 * follows (provider instances, bot polling loops), and leader-only work moves when the leader stops.
 * Always runs on PostgreSQL, whatever HERALD_TEST_DB says.
 */

import crypto from 'node:crypto';
import { createTelegramBotDriver } from '@herald/target-telegram';
import t from 'tap';
import { botRuntime } from '../../core/src/relay/bots/index.ts';
import { FakeTelegram } from '../../plugins/target-telegram/test/fakes/telegram.ts';
import { postgresDatabaseUrl, startService, TEST_PLUGINS } from '../helpers/service.ts';
import { until } from './cluster.ts';

const TOKEN = '777:AAF-relay_bot_token_for_tests_abcdef';
const OTHER = '778:AAF-other_bot_token_for_tests_abcdef';

t.test('changes made through one replica reach the other; leader-only loops follow the leader', async (t) => {
  const fake = await new FakeTelegram()
    .addBot(TOKEN, { id: 777, username: 'herald_relay_bot' })
    .addBot(OTHER, { id: 778, username: 'other_bot' })
    .start();
  const env = {
    SERVICE_DATABASE_URL: await postgresDatabaseUrl(),
    SERVICE_SECRET_KEY: crypto.randomBytes(32).toString('hex'),
    SERVICE_PLUGINS: `${TEST_PLUGINS},@herald/target-telegram`,
  };
  const a = await startService(env);
  const b = await startService(env, { setup: false });
  for (const s of [a, b])
    (s.service.core.plugins.target('telegram')!.def as { botDriver?: unknown }).botDriver = createTelegramBotDriver({
      apiRoot: fake.url,
    });
  t.teardown(async () => {
    await b.stop();
    await a.stop();
    await fake.close();
  });
  t.equal(a.service.core.jobs.isLeader(), true, 'the first replica leads');
  t.equal(b.service.core.jobs.isLeader(), false, 'the second follows');
  const token = a.admin.token;

  // A webhook provider created through the leader takes webhooks at the follower at once.
  const prov = await a.request('POST', '/api/providers', {
    token,
    body: { kind: 'example', name: 'Ex', config: { shared_token: 'sharedtoken1' } },
  });
  const hook = new URL(prov.body.webhook_url).pathname;
  const post = (tok: string) =>
    b.request('POST', hook, { headers: { 'x-example-token': tok }, body: { type: 'alarm', payload: { name: 'x' } } });
  t.equal((await post('sharedtoken1')).status, 202, 'the follower starts the instance from the record on first use');
  // Its configuration changed through the leader applies at the follower's next webhook.
  const patched = await a.request('PATCH', `/api/providers/${prov.body.id}`, {
    token,
    body: { config: { shared_token: 'sharedtoken2' } },
  });
  t.equal(patched.status, 200);
  t.equal((await post('sharedtoken1')).status, 401, 'the old secret is refused by the follower');
  t.equal((await post('sharedtoken2')).status, 202, 'the new one accepted');
  // Deleted through the leader: the follower stops its instance within seconds.
  t.equal((await a.request('DELETE', `/api/providers/${prov.body.id}`, { token })).status, 204);
  await until(
    () => !b.service.core.plugins.runningProvider(prov.body.id),
    8000,
    'the follower to stop the deleted provider',
  );
  t.equal((await post('sharedtoken2')).status, 404, 'and its webhook address is gone everywhere');

  // A polling bot created through the follower polls on the leader only.
  const bot = await b.request('POST', '/api/bots', { token, body: { name: 'Main', token: TOKEN, mode: 'polling' } });
  t.equal(bot.status, 201);
  t.equal(botRuntime(b.service.core).polling(bot.body.id), false, 'the follower does not poll');
  await until(() => botRuntime(a.service.core).polling(bot.body.id), 8000, 'the leader to start polling');
  t.pass('the leader picked the new bot up from the database');
  const other = await b.request('POST', '/api/bots', { token, body: { name: 'Other', token: OTHER, mode: 'polling' } });
  await until(() => botRuntime(a.service.core).polling(other.body.id), 8000, 'the leader to start the second loop');
  t.equal((await b.request('DELETE', `/api/bots/${other.body.id}`, { token })).status, 204);
  await until(() => !botRuntime(a.service.core).polling(other.body.id), 8000, 'the leader to stop the deleted bot');
  t.pass('a bot deleted through the follower stops polling on the leader');

  // The leader goes away: the follower takes the lead and the loop with it.
  await a.stop();
  await until(() => b.service.core.jobs.isLeader(), 5000, 'the follower to take the lead');
  await until(() => botRuntime(b.service.core).polling(bot.body.id), 5000, 'the loop to move');
  t.pass('leadership and the polling loop moved to the remaining replica');
});
