import t from 'tap';
import { providerRowFrom } from '../../core/src/plugins/host.ts';
import { startService, startSink } from '../helpers/service.ts';

t.test("a user never sees or touches another user's relay records", async (t) => {
  const s = await startService();
  const sink = await startSink();
  t.teardown(async () => {
    await s.stop();
    await sink.close();
  });
  const a = s.admin.token;
  const bUser = await s.user();
  const b = bUser.token;

  const p = (
    await s.request('POST', '/api/providers', {
      token: a,
      body: { kind: 'example', name: 'A-prov', config: { shared_token: 'sharedtoken1' } },
    })
  ).body;
  const tr = (await s.request('POST', '/api/trackers', { token: a, body: { provider_id: p.id, name: 'A-tracker' } }))
    .body;
  const tg = (
    await s.request('POST', '/api/targets', {
      token: a,
      body: { kind: 'recorder', name: 'A-target', config: { url: sink.url }, locale: 'en' },
    })
  ).body;
  await s.request('PUT', `/api/trackers/${tr.id}/targets/${tg.id}`, { token: a });
  const action = (
    await s.request('POST', '/api/actions', {
      token: a,
      body: { name: 'A-action', kind: 'digest', schedule: '0 8 * * *', config: { tracker_id: tr.id } },
    })
  ).body;
  const relay = s.service.core.services.get('relay') as { ingest(p: unknown, e: unknown): Promise<string[]> };
  const [eventId] = await relay.ingest(
    providerRowFrom((await s.service.core.db.get('SELECT * FROM providers WHERE id = ?', [p.id]))!),
    { type: 'alarm', payload: { name: 'x' } },
  );
  t.ok(p.id && tr.id && tg.id && action.id && eventId, 'A has one of everything');

  const notFound = async (method: string, path: string, body?: unknown) => {
    const r = await s.request(method, path, { token: b, body });
    t.equal(r.status, 404, `${method} ${path.replace(/[0-9a-f-]{36}/g, ':id')}`);
  };
  await notFound('GET', `/api/providers/${p.id}`);
  await notFound('PATCH', `/api/providers/${p.id}`, { name: 'mine' });
  await notFound('DELETE', `/api/providers/${p.id}`);
  await notFound('GET', `/api/providers/${p.id}/webhook-log`);
  await notFound('GET', `/api/trackers/${tr.id}`);
  await notFound('PATCH', `/api/trackers/${tr.id}`, { name: 'mine' });
  await notFound('DELETE', `/api/trackers/${tr.id}`);
  await notFound('GET', `/api/trackers/${tr.id}/targets`);
  await notFound('GET', `/api/targets/${tg.id}`);
  await notFound('PATCH', `/api/targets/${tg.id}`, { name: 'mine' });
  await notFound('DELETE', `/api/targets/${tg.id}`);
  await notFound('POST', `/api/targets/${tg.id}/test`);
  await notFound('GET', `/api/actions/${action.id}`);
  await notFound('PATCH', `/api/actions/${action.id}`, { name: 'mine' });
  await notFound('DELETE', `/api/actions/${action.id}`);
  await notFound('POST', `/api/actions/${action.id}/run`);
  await notFound('GET', `/api/events/${eventId}`);
  await notFound('POST', '/api/trackers', { provider_id: p.id, name: "on A's provider" });

  const bp = (
    await s.request('POST', '/api/providers', {
      token: b,
      body: { kind: 'example', name: 'B-prov', config: { shared_token: 'sharedtoken2' } },
    })
  ).body;
  const btr = (await s.request('POST', '/api/trackers', { token: b, body: { provider_id: bp.id, name: 'B-tracker' } }))
    .body;
  const btg = (
    await s.request('POST', '/api/targets', {
      token: b,
      body: { kind: 'recorder', name: 'B-target', config: { url: sink.url }, locale: 'en' },
    })
  ).body;
  await notFound('PUT', `/api/trackers/${btr.id}/targets/${tg.id}`);
  await notFound('PUT', `/api/trackers/${tr.id}/targets/${btg.id}`);
  await notFound('DELETE', `/api/trackers/${tr.id}/targets/${tg.id}`);
  await notFound('PATCH', `/api/trackers/${btr.id}`, { provider_id: p.id });
  const foreignDigest = await s.request('POST', '/api/actions', {
    token: b,
    body: { name: 'x', kind: 'digest', schedule: '0 8 * * *', config: { tracker_id: tr.id } },
  });
  t.equal(foreignDigest.status, 422, "a digest of another user's tracker");
  const foreignMessage = await s.request('POST', '/api/actions', {
    token: b,
    body: { name: 'x', kind: 'message', schedule: '0 8 * * *', config: { target_ids: [tg.id], title: 't', body: 'b' } },
  });
  t.equal(foreignMessage.status, 422, "a message to another user's target");

  const names = async (path: string, key: string) =>
    (await s.request('GET', path, { token: b })).body[key].map((x: any) => x.name ?? x.id);
  t.same(await names('/api/providers', 'providers'), ['B-prov', 'Self-monitoring'], "only B's providers");
  t.notOk((await names('/api/trackers', 'trackers')).includes('A-tracker'));
  t.same(await names('/api/targets', 'targets'), ['B-target']);
  t.same(await names('/api/actions', 'actions'), []);
  t.same(await names('/api/events', 'events'), []);
  t.same(await names(`/api/events?provider_id=${p.id}`, 'events'), [], "filtering by A's provider shows nothing");
  t.same(await names('/api/deferred', 'deferred'), []);
  const selfA = (await s.request('GET', '/api/self-monitoring', { token: a })).body;
  const selfB = (await s.request('GET', '/api/self-monitoring', { token: b })).body;
  t.not(selfA.provider_id, selfB.provider_id, 'each user has their own self-monitoring');
  await s.request('PATCH', '/api/self-monitoring', { token: b, body: { poll_failure_threshold: 9 } });
  t.equal(
    (await s.request('GET', '/api/self-monitoring', { token: a })).body.poll_failure_threshold,
    3,
    "B's change does not touch A",
  );

  t.equal((await s.request('GET', `/api/providers/${p.id}`, { token: a })).body.name, 'A-prov', "A's rows untouched");
  t.equal(
    (await s.request('GET', `/api/trackers/${tr.id}/targets`, { token: a })).body.targets.length,
    1,
    "A's link untouched",
  );
});
