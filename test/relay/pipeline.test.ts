import t from 'tap';
import { startService, startSink, type TestService } from '../helpers/service.ts';

async function setupChain(s: TestService, token: string, sinkUrl: string, tracker: Record<string, unknown> = {}) {
  const p = await s.request('POST', '/api/providers', {
    token,
    body: { kind: 'example', name: 'Ex', config: { shared_token: 'sharedtoken1' } },
  });
  if (p.status !== 201) throw new Error(`provider: ${p.status} ${p.text}`);
  const tr = await s.request('POST', '/api/trackers', {
    token,
    body: { provider_id: p.body.id, name: 'Tr', ...tracker },
  });
  if (tr.status !== 201) throw new Error(`tracker: ${tr.status} ${tr.text}`);
  const tg = await s.request('POST', '/api/targets', {
    token,
    body: { kind: 'recorder', name: 'Rec', config: { url: sinkUrl }, locale: 'en' },
  });
  if (tg.status !== 201) throw new Error(`target: ${tg.status} ${tg.text}`);
  const l = await s.request('PUT', `/api/trackers/${tr.body.id}/targets/${tg.body.id}`, { token });
  if (l.status >= 300) throw new Error(`link: ${l.status} ${l.text}`);
  return {
    provider: p.body,
    tracker: tr.body,
    target: tg.body,
    hook: `/api/hooks/${p.body.webhook_url.split('/api/hooks/')[1]}`,
  };
}

const hookHeaders = { 'x-example-token': 'sharedtoken1' };

t.test('webhook → event_log → template → target, statuses and details', async (t) => {
  const s = await startService();
  const sink = await startSink();
  t.teardown(async () => {
    await s.stop();
    await sink.close();
  });
  const c = await setupChain(s, s.admin.token, sink.url);

  const bad = await s.request('POST', c.hook, { body: { type: 'thing_happened', payload: { name: 'x' } } });
  t.equal(bad.status, 401, 'unsigned webhook refused');
  t.match(bad.headers.get('content-type'), /problem\+json/);

  const r = await s.request('POST', c.hook, {
    headers: hookHeaders,
    body: { type: 'thing_happened', payload: { name: '<b>door</b>' }, note: 'token=abc123secret' },
  });
  t.equal(r.status, 202);
  t.equal(r.body.event_ids.length, 1);
  const got = await sink.waitFor(1);
  t.equal(got.length, 1, 'delivered once');
  t.equal(got[0].body.title, 'Thing: &lt;b&gt;door&lt;/b&gt;', 'escaped for html');
  t.notMatch(got[0].body.body, /abc123secret/, 'sensitive extras redacted');
  await (s.service.core.services.get('relay') as any).tick();
  const ev = await s.request('GET', `/api/events?provider_id=${c.provider.id}`, { token: s.admin.token });
  t.equal(ev.body.events[0].dispatch_status, 'dispatched');

  const invalid = await s.request('POST', c.hook, {
    headers: hookHeaders,
    body: { type: 'thing_happened', payload: { nope: 1 } },
  });
  t.equal(invalid.status, 422, 'payload that fails the declared schema');
  const unknown = await s.request('POST', c.hook, {
    headers: hookHeaders,
    body: { type: 'nope', payload: { name: 'x' } },
  });
  t.equal(unknown.status, 422, 'undeclared event type');
  const empty = await s.request('POST', c.hook, {
    headers: hookHeaders,
    body: { type: 'thing_happened', payload: { name: 'x', assets_added: [], assets_removed: [] } },
  });
  t.equal(
    empty.status,
    202,
    'the core has no rules about payload fields: a valid event is recorded (Immich itself emits no empty change)',
  );
  t.equal(empty.body.event_ids.length, 1);
  const log = await s.request('GET', `/api/providers/${c.provider.id}/webhook-log`, { token: s.admin.token });
  t.ok(log.body.webhook_log?.length ?? log.body.entries?.length ?? log.body.logs?.length, 'payload log rows written');
  t.notMatch(JSON.stringify(log.body), /abc123secret/, 'payload excerpts redacted');
});

t.test('disabled type drops, failures retry then fail, partial, metrics', async (t) => {
  const s = await startService();
  const sink = await startSink();
  const sink2 = await startSink();
  t.teardown(async () => {
    await s.stop();
    await sink.close();
    await sink2.close();
  });
  const c = await setupChain(s, s.admin.token, sink.url, { event_types: { stale_thing: false } });
  const relay = s.service.core.services.get('relay') as any;

  const dropped = await s.request('POST', c.hook, {
    headers: hookHeaders,
    body: { type: 'stale_thing', payload: { name: 'old' } },
  });
  t.equal(dropped.status, 202);
  const ev = await s.request('GET', `/api/events/${dropped.body.event_ids[0]}`, { token: s.admin.token });
  t.equal(ev.body.dispatch_status, 'dropped');
  t.match(JSON.stringify(ev.body.details), /disabled/);

  // second target answering 400: permanent failure → partial
  const tg2 = await s.request('POST', '/api/targets', {
    token: s.admin.token,
    body: { kind: 'recorder', name: 'Bad', config: { url: sink2.url }, locale: 'ru' },
  });
  await s.request('PUT', `/api/trackers/${c.tracker.id}/targets/${tg2.body.id}`, { token: s.admin.token });
  sink2.respond(400);
  const r = await s.request('POST', c.hook, {
    headers: hookHeaders,
    body: { type: 'alarm', payload: { name: 'fire' } },
  });
  await relay.tick();
  const ev2 = await s.request('GET', `/api/events/${r.body.event_ids[0]}`, { token: s.admin.token });
  t.equal(ev2.body.dispatch_status, 'partial', 'one target failed permanently');

  // 503 is retried; once the sink recovers the event is dispatched
  sink.respond(503);
  sink2.respond(200);
  const r3 = await s.request('POST', c.hook, {
    headers: hookHeaders,
    body: { type: 'alarm', payload: { name: 'again' } },
  });
  await relay.tick();
  const mid = await s.request('GET', `/api/events/${r3.body.event_ids[0]}`, { token: s.admin.token });
  t.equal(mid.body.dispatch_status, 'pending', 'retry scheduled');
  sink.respond(200);
  s.clock.set(new Date(Date.now() + 60_000));
  await relay.tick();
  const done = await s.request('GET', `/api/events/${r3.body.event_ids[0]}`, { token: s.admin.token });
  t.equal(done.body.dispatch_status, 'dispatched');
  t.equal(sink2.received.at(-1).body.title, 'ТРЕВОГА again', 'russian template for the ru target');

  const m = await s.request('GET', '/api/metrics');
  t.match(m.text, /service_target_send_failures_total\{target_type="recorder",status_code="503"\} 1/);
  t.match(m.text, /service_target_send_failures_total\{target_type="recorder",status_code="400"\} 1/);
  t.match(m.text, /service_event_log_total\{status="dropped",event_type="stale_thing"\} 1/);
  t.match(m.text, /service_dispatch_duration_seconds_count\{channel="recorder"\} \d+/);
});

t.test('quiet hours across midnight in a non-UTC zone with a controllable clock', async (t) => {
  const s = await startService();
  const sink = await startSink();
  t.teardown(async () => {
    await s.stop();
    await sink.close();
  });
  s.clock.set('2026-03-10T20:30:00Z'); // 23:30 in Moscow (UTC+3)
  const c = await setupChain(s, s.admin.token, sink.url, {
    quiet_hours: { start: '23:00', end: '07:00', timezone: 'Europe/Moscow' },
  });
  const relay = s.service.core.services.get('relay') as any;
  const d1 = await s.request('POST', c.hook, {
    headers: hookHeaders,
    body: { type: 'thing_happened', payload: { name: 'first' } },
  });
  const d2 = await s.request('POST', c.hook, {
    headers: hookHeaders,
    body: { type: 'thing_happened', payload: { name: 'second' } },
  });
  const st = await s.request('POST', c.hook, {
    headers: hookHeaders,
    body: { type: 'stale_thing', payload: { name: 'stale' } },
  });
  await s.request('POST', c.hook, { headers: hookHeaders, body: { type: 'alarm', payload: { name: 'now' } } });
  await relay.tick();
  t.same(
    sink.received.map((r) => r.body.title),
    ['ALARM now'],
    'critical type sent at once; deferrable held',
  );
  const get = async (id: string) => (await s.request('GET', `/api/events/${id}`, { token: s.admin.token })).body;
  t.equal((await get(d1.body.event_ids[0])).dispatch_status, 'deferred');
  t.equal((await get(st.body.event_ids[0])).dispatch_status, 'dropped');
  t.match(JSON.stringify((await get(st.body.event_ids[0])).details), /quiet hours/);
  const q = await s.request('GET', '/api/deferred', { token: s.admin.token });
  t.equal(q.body.deferred.length, 2, 'visible in the deferred queue');
  t.match((await s.request('GET', '/api/metrics')).text, /service_deferred_pending 2/);

  s.clock.set('2026-03-11T01:00:00Z'); // 04:00 Moscow, still quiet
  await relay.tick();
  t.equal(sink.received.length, 1);
  s.clock.set('2026-03-11T04:00:01Z'); // 07:00:01 Moscow
  await relay.tick();
  t.same(
    sink.received.map((r) => r.body.title),
    ['ALARM now', 'Thing: first', 'Thing: second'],
    'released in order when the window ends',
  );
  t.equal((await get(d2.body.event_ids[0])).dispatch_status, 'dispatched');
  t.match((await s.request('GET', '/api/metrics')).text, /service_deferred_pending 0/);
});

t.test('self-monitoring: target failures, backlog latch, bridge_self failures not counted', async (t) => {
  const s = await startService();
  const sink = await startSink();
  const selfSink = await startSink();
  t.teardown(async () => {
    await s.stop();
    await sink.close();
    await selfSink.close();
  });
  const relay = s.service.core.services.get('relay') as any;
  const c = await setupChain(s, s.admin.token, sink.url);
  await s.request('PATCH', '/api/self-monitoring', {
    token: s.admin.token,
    body: { target_failure_threshold: 2, deferred_backlog_threshold: 2 },
  });
  const providers = await s.request('GET', '/api/providers', { token: s.admin.token });
  const self = providers.body.providers.find((p: any) => p.kind === 'bridge_self');
  const selfTrackers = await s.request('GET', '/api/trackers', { token: s.admin.token });
  const selfTracker = selfTrackers.body.trackers.find((x: any) => x.provider_id === self.id);
  const st = await s.request('POST', '/api/targets', {
    token: s.admin.token,
    body: { kind: 'recorder', name: 'Self', config: { url: selfSink.url }, locale: 'en' },
  });
  await s.request('PUT', `/api/trackers/${selfTracker.id}/targets/${st.body.id}`, { token: s.admin.token });

  sink.respond(502);
  for (let i = 0; i < 2; i++)
    await s.request('POST', c.hook, { headers: hookHeaders, body: { type: 'alarm', payload: { name: `n${i}` } } });
  await relay.tick();
  await relay.tick();
  const titles = selfSink.received.map((r) => r.body.title);
  t.ok(
    titles.some((x: string) => /Target unreachable: Rec/.test(x)),
    'bridge_self_target_failures raised after 2 failures',
  );

  // the self target failing is never counted
  selfSink.respond(500);
  const before = (await s.service.core.db.get('SELECT consecutive_failures FROM targets WHERE id = ?', [st.body.id]))!
    .consecutive_failures;
  await relay.emitSelf(s.admin.id, 'deferredBacklog', { pending: 1, threshold: 1 });
  await relay.tick();
  const after = (await s.service.core.db.get('SELECT consecutive_failures FROM targets WHERE id = ?', [st.body.id]))!
    .consecutive_failures;
  t.equal(after, before, 'failures of bridge_self notifications are not counted');
});
