/**
 * Live hints across replicas: two Herald processes on one PostgreSQL database. A stream open on one replica gets the
 * hints of an event posted to a webhook on the other, and of its delivery sent by whichever replica claimed it, and a
 * stream of another user on either replica gets none of them. Always runs on PostgreSQL, whatever HERALD_TEST_DB says.
 */

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { type LiveClient, openLive } from '../helpers/live.ts';
import { postgresDatabaseUrl } from '../helpers/service.ts';
import { call, type Replica, startRecordingSink, startReplicas, stopReplicas } from './cluster.ts';

t.setTimeout(120_000);

const dbUrl = await postgresDatabaseUrl();
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-live-'));
const sink = await startRecordingSink(0);
const replicas: Replica[] = await startReplicas(2, {
  SERVICE_DATABASE_URL: dbUrl,
  SERVICE_DATA_DIR: dataDir,
  SERVICE_PLUGINS: '@herald/provider-bridge-self,herald-plugin-example,herald-target-recorder',
});
const streams: LiveClient[] = [];
t.teardown(async () => {
  for (const s of streams) s.close();
  if (!t.passing())
    for (const r of replicas) t.comment(`replica ${r.index} log tail:\n${r.logs.slice(-25).join('\n')}`);
  await stopReplicas(replicas);
  await sink.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});
const [a, b] = replicas as [Replica, Replica];

t.test('a hint raised on one replica reaches a stream on the other, for its owner only', async (t) => {
  const setup = await call(a, 'POST', '/api/setup', {
    body: { email: 'admin@example.test', password: 'replica admin password' },
  });
  const token = setup.body.access_token as string;
  t.equal(
    (
      await call(a, 'POST', '/api/v1/admin/users', {
        token,
        body: { email: 'u@example.test', password: 'user password 1' },
      })
    ).status,
    201,
  );
  const other = (
    await call(b, 'POST', '/api/auth/login', { body: { email: 'u@example.test', password: 'user password 1' } })
  ).body.access_token as string;
  const prov = await call(a, 'POST', '/api/providers', {
    token,
    body: { kind: 'example', name: 'Ex', config: { shared_token: 'sharedtoken1' } },
  });
  const tg = await call(a, 'POST', '/api/targets', {
    token,
    body: { kind: 'recorder', name: 'Rec', config: { url: sink.url }, locale: 'en' },
  });
  const tr = await call(a, 'POST', '/api/trackers', { token, body: { provider_id: prov.body.id, name: 'Tr' } });
  t.equal((await call(a, 'PUT', `/api/trackers/${tr.body.id}/targets/${tg.body.id}`, { token })).status, 200);

  const mine = await openLive(a.url, token);
  const theirs = await openLive(b.url, other);
  streams.push(mine, theirs);
  await mine.next((m) => m.event === 'ready');
  await theirs.next((m) => m.event === 'ready');

  const posted = await call(b, 'POST', new URL(prov.body.webhook_url).pathname, {
    body: { type: 'alarm', payload: { name: 'across' } },
    headers: { 'x-example-token': 'sharedtoken1' },
  });
  t.equal(posted.status, 202, 'the event is posted to replica 1');
  const id = posted.body.event_ids[0] as string;
  const started = Date.now();
  const logged = await mine.next((m) => m.event === 'event' && m.data.id === id, 10_000);
  t.ok(Date.now() - started < 2000, 'its hint reaches the stream on replica 0 within 2 s');
  t.equal(logged.data.provider_id, prov.body.id);
  await mine.next((m) => m.event === 'webhook_log' && m.data.provider_id === prov.body.id, 10_000);
  await mine.next((m) => m.event === 'delivery' && m.data.event_id === id && m.data.status === 'sent', 10_000);
  await mine.next((m) => m.event === 'event' && m.data.id === id && m.data.dispatch_status === 'dispatched', 10_000);
  t.pass('so do the hints of its delivery, whichever replica sent it');

  // The other user's own event comes after: had the admin's hints gone to that stream, they would be there first.
  const own = await call(b, 'POST', '/api/providers', {
    token: other,
    body: { kind: 'example', name: 'Mine', config: { shared_token: 'sharedtoken2' } },
  });
  await call(a, 'POST', new URL(own.body.webhook_url).pathname, {
    body: { type: 'alarm', payload: { name: 'own' } },
    headers: { 'x-example-token': 'sharedtoken2' },
  });
  await theirs.next((m) => m.event === 'webhook_log' && m.data.provider_id === own.body.id, 10_000);
  t.notOk(
    theirs.messages.some((m) => m.data?.id === id || m.data?.event_id === id || m.data?.provider_id === prov.body.id),
    "the other user's stream got none of the admin's hints",
  );
});
