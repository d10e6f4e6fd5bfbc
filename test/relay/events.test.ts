import t from 'tap';
import { providerRowFrom } from '../../core/src/plugins/host.ts';
import type { ProviderDbRow } from '../../core/src/relay/definitions/provider.ts';
import { startService, startSink, type TestService } from '../helpers/service.ts';

/** A quiet window around the present, in UTC, so deferrable events are deferred now. */
function windowAroundNow(): { start: string; end: string; timezone: string } {
  const hhmm = (ms: number) => new Date(ms).toISOString().slice(11, 16);
  return { start: hhmm(Date.now() - 3600_000), end: hhmm(Date.now() + 3600_000), timezone: 'UTC' };
}

async function chain(s: TestService, token: string, sinkUrl: string) {
  const p = (
    await s.request('POST', '/api/providers', {
      token,
      body: { kind: 'example', name: 'Ex', config: { shared_token: 'sharedtoken1' } },
    })
  ).body;
  const tr = (
    await s.request('POST', '/api/trackers', {
      token,
      body: { provider_id: p.id, name: 'Quiet', quiet_hours: windowAroundNow() },
    })
  ).body;
  const tg = (
    await s.request('POST', '/api/targets', {
      token,
      body: { kind: 'recorder', name: 'Sink', config: { url: sinkUrl }, locale: 'en' },
    })
  ).body;
  await s.request('PUT', `/api/trackers/${tr.id}/targets/${tg.id}`, { token });
  const row = await s.service.core.db.get<ProviderDbRow>('SELECT * FROM providers WHERE id = ?', [p.id]);
  const relay = s.service.core.services.get('relay') as {
    ingest(p: unknown, e: unknown): Promise<string[]>;
    tick(): Promise<void>;
  };
  const emit = (type: string, payload: Record<string, unknown>) =>
    relay.ingest(providerRowFrom(row!), { type, payload });
  return { p, tr, tg, emit, relay };
}

t.test('event log and deferred queue of the caller', async (t) => {
  const s = await startService();
  const sink = await startSink();
  t.teardown(async () => {
    await s.stop();
    await sink.close();
  });
  const token = s.admin.token;
  const c = await chain(s, token, sink.url);

  const [deferredId] = await c.emit('thing_happened', { name: 'door', api_key: 'abc-secret-123' });
  const [alarmId] = await c.emit('alarm', { name: 'smoke' });
  await sink.waitFor(1);
  await c.relay.tick();

  const all = await s.request('GET', '/api/events', { token });
  t.equal(all.status, 200);
  t.same(
    all.body.events.map((e: any) => e.id),
    [alarmId, deferredId],
    'newest first',
  );
  const deferred = all.body.events[1];
  t.match(deferred, {
    provider_id: c.p.id,
    provider_kind: 'example',
    event_type: 'thing_happened',
    dispatch_status: 'deferred',
    severity: 'info',
  });
  t.equal(deferred.payload.name, 'door');
  t.equal(deferred.payload.api_key, '[REDACTED]', 'sensitive payload fields redacted');
  t.notMatch(all.text, /abc-secret-123/);
  t.match(deferred.deliveries, [{ target_id: c.tg.id, status: 'deferred' }]);
  const alarm = all.body.events[0];
  t.equal(alarm.dispatch_status, 'dispatched', 'the send-in-quiet-hours type went out');
  t.match(alarm.deliveries, [{ target_id: c.tg.id, status: 'sent', attempts: 1, last_error: null }]);

  t.same(
    (await s.request('GET', '/api/events?event_type=alarm', { token })).body.events.map((e: any) => e.id),
    [alarmId],
    'filter by type',
  );
  t.same(
    (await s.request('GET', '/api/events?dispatch_status=deferred', { token })).body.events.map((e: any) => e.id),
    [deferredId],
    'filter by status',
  );
  const bogus = await s.request('GET', '/api/events?dispatch_status=bogus', { token });
  t.equal(bogus.status, 422, 'an unknown dispatch status is refused, not read as a filter matching nothing');
  t.match(bogus.body, { code: 'validation_failed', errors: [{ path: 'querystring/dispatch_status' }] });
  t.same(
    (await s.request('GET', `/api/events?provider_id=${c.p.id}&limit=1`, { token })).body.events.map((e: any) => e.id),
    [alarmId],
    'filter by provider, limit',
  );
  t.same(
    (await s.request('GET', `/api/events?before=${alarmId}`, { token })).body.events.map((e: any) => e.id),
    [deferredId],
    'before cursor',
  );
  const one = await s.request('GET', `/api/events/${deferredId}`, { token });
  t.equal(one.status, 200);
  t.equal(one.body.id, deferredId);
  t.equal(one.body.payload.api_key, '[REDACTED]');
  t.equal((await s.request('GET', '/api/events/01900000-0000-7000-8000-000000000000', { token })).status, 404);

  const q = await s.request('GET', '/api/deferred', { token });
  t.equal(q.status, 200);
  t.equal(q.body.deferred.length, 1);
  t.match(q.body.deferred[0], {
    event_id: deferredId,
    event_type: 'thing_happened',
    target_id: c.tg.id,
    target_name: 'Sink',
    tracker_id: c.tr.id,
    tracker_name: 'Quiet',
  });
  t.ok(Date.parse(q.body.deferred[0].release_at) > Date.now(), 'released when the window ends');
});

t.test('self-monitoring settings', async (t) => {
  const s = await startService();
  t.teardown(() => s.stop());
  const token = s.admin.token;
  const g = await s.request('GET', '/api/self-monitoring', { token });
  t.equal(g.status, 200);
  t.match(g.body, {
    poll_failure_threshold: 3,
    deferred_backlog_threshold: 100,
    target_failure_threshold: 5,
    track_poll_failures: true,
    track_deferred_backlog: true,
    track_target_failures: true,
    backlog_latched: false,
  });
  const p = await s.request('PATCH', '/api/self-monitoring', {
    token,
    body: { poll_failure_threshold: 7, target_failure_threshold: 100000, track_target_failures: false },
  });
  t.equal(p.status, 200);
  t.match(p.body, {
    poll_failure_threshold: 7,
    deferred_backlog_threshold: 100,
    target_failure_threshold: 100000,
    track_target_failures: false,
    track_poll_failures: true,
  });
  const row = await s.service.core.db.get(
    `SELECT poll_failure_threshold, track_target_failures FROM providers WHERE user_id = ? AND kind = 'bridge_self'`,
    [s.admin.id],
  );
  t.equal(Number(row!.poll_failure_threshold), 7, 'stored on the bridge_self row');
  for (const body of [
    { poll_failure_threshold: 0 },
    { deferred_backlog_threshold: 100001 },
    { target_failure_threshold: 1.5 },
    { poll_failure_threshold: '4' },
    { backlog_latched: true },
    { track_poll_failures: 'yes' },
    { surprise: 1 },
  ]) {
    t.equal(
      (await s.request('PATCH', '/api/self-monitoring', { token, body })).status,
      422,
      `refused: ${JSON.stringify(body)}`,
    );
  }
  t.equal(
    (await s.request('GET', '/api/self-monitoring', { token })).body.poll_failure_threshold,
    7,
    'refused updates changed nothing',
  );
  t.equal((await s.request('GET', '/api/self-monitoring')).status, 401);
});
