import http from 'node:http';
import t from 'tap';
import { startService, startSink, type TestService } from '../helpers/service.ts';

async function selfTarget(s: TestService, url: string) {
  const providers = await s.request('GET', '/api/providers', { token: s.admin.token });
  const self = providers.body.providers.find((p: any) => p.kind === 'bridge_self');
  const trackers = await s.request('GET', '/api/trackers', { token: s.admin.token });
  const tracker = trackers.body.trackers.find((x: any) => x.provider_id === self.id);
  const tg = await s.request('POST', '/api/targets', {
    token: s.admin.token,
    body: { kind: 'recorder', name: 'Ops', config: { url }, locale: 'en' },
  });
  await s.request('PUT', `/api/trackers/${tracker.id}/targets/${tg.body.id}`, { token: s.admin.token });
  return tg.body;
}

t.test('consecutive poll failures raise bridge_self_poll_failures at the threshold and reset', async (t) => {
  const s = await startService();
  const ops = await startSink();
  let answer = 500;
  const feed = http.createServer((_req, res) => {
    res.writeHead(answer, { 'content-type': 'application/json' });
    res.end(answer === 200 ? '[]' : 'down');
  });
  await new Promise<void>((r) => feed.listen(0, '127.0.0.1', r));
  t.teardown(async () => {
    await s.stop();
    await ops.close();
    feed.closeAllConnections();
    feed.close();
  });
  await selfTarget(s, ops.url);
  const p = await s.request('POST', '/api/providers', {
    token: s.admin.token,
    body: {
      kind: 'example',
      name: 'Feed',
      config: { shared_token: 'sharedtoken1', poll_url: `http://127.0.0.1:${(feed.address() as any).port}/` },
    },
  });
  const tr = await s.request('POST', '/api/trackers', {
    token: s.admin.token,
    body: { provider_id: p.body.id, name: 'Feed tracker' },
  });
  const host = s.service.core.plugins;
  const relay = s.service.core.services.get('relay') as any;
  // the example plugin is a webhook kind that also polls when asked: drive polls by hand
  const entry = host.runningProvider(p.body.id)!;
  const poll = async () => {
    await (host as any).pollOnce({
      ...entry,
      abort: new AbortController(),
      failures: 0,
      log: s.service.core.logs.get('t'),
    });
    await relay.tick();
  };
  await poll();
  await poll();
  t.equal(ops.received.length, 0, 'below the threshold');
  const tracker = await s.service.core.db.get('SELECT consecutive_poll_failures FROM trackers WHERE id = ?', [
    tr.body.id,
  ]);
  t.equal(tracker!.consecutive_poll_failures, 2);
  await poll();
  t.equal(ops.received.length, 1, 'raised at 3');
  t.match(ops.received[0].body.title, /Polling keeps failing: Feed tracker/);
  t.equal(
    (await s.service.core.db.get('SELECT consecutive_poll_failures FROM trackers WHERE id = ?', [tr.body.id]))!
      .consecutive_poll_failures,
    0,
    'counter reset after emission',
  );
  const m = await s.request('GET', '/api/metrics');
  t.match(m.text, /service_provider_poll_failures_total\{provider_type="example"\} 3/);
  answer = 200;
  await poll();
  t.equal(
    (await s.service.core.db.get('SELECT last_poll_error FROM trackers WHERE id = ?', [tr.body.id]))!.last_poll_error,
    null,
    'success clears',
  );
});

t.test('deferred backlog: raised once at the threshold, re-armed below it', async (t) => {
  const s = await startService();
  const ops = await startSink();
  const sink = await startSink();
  t.teardown(async () => {
    await s.stop();
    await ops.close();
    await sink.close();
  });
  await selfTarget(s, ops.url);
  await s.request('PATCH', '/api/self-monitoring', { token: s.admin.token, body: { deferred_backlog_threshold: 3 } });
  s.clock.set('2026-05-01T23:30:00Z');
  const p = await s.request('POST', '/api/providers', {
    token: s.admin.token,
    body: { kind: 'example', name: 'Ex', config: { shared_token: 'sharedtoken1' } },
  });
  const tr = await s.request('POST', '/api/trackers', {
    token: s.admin.token,
    body: { provider_id: p.body.id, name: 'Night', quiet_hours: { start: '22:00', end: '06:00', timezone: 'UTC' } },
  });
  const tg = await s.request('POST', '/api/targets', {
    token: s.admin.token,
    body: { kind: 'recorder', name: 'Rec', config: { url: sink.url }, locale: 'en' },
  });
  await s.request('PUT', `/api/trackers/${tr.body.id}/targets/${tg.body.id}`, { token: s.admin.token });
  const relay = s.service.core.services.get('relay') as any;
  const hook = new URL(p.body.webhook_url).pathname;
  const send = (name: string) =>
    s.request('POST', hook, {
      headers: { 'x-example-token': 'sharedtoken1' },
      body: { type: 'thing_happened', payload: { name } },
    });
  for (const n of ['a', 'b', 'c', 'd', 'e']) await send(n);
  await relay.tick();
  const backlog = () => ops.received.filter((r) => /piling up/.test(r.body.title)).length;
  t.equal(backlog(), 1, 'raised once although the count kept growing');
  t.equal((await s.request('GET', '/api/self-monitoring', { token: s.admin.token })).body.backlog_latched, true);
  s.clock.set('2026-05-02T06:00:01Z');
  await relay.tick();
  t.equal(sink.received.length, 5, 'released');
  t.equal(
    (await s.request('GET', '/api/self-monitoring', { token: s.admin.token })).body.backlog_latched,
    false,
    're-armed below the threshold',
  );
  s.clock.set('2026-05-02T23:00:00Z');
  for (const n of ['f', 'g', 'h']) await send(n);
  await relay.tick();
  t.equal(backlog(), 2, 'raised again after re-arming');
});

t.test(
  'deferred backlog: raised at exactly the threshold, re-armed at threshold − 1 while deliveries are still deferred',
  async (t) => {
    const s = await startService();
    const ops = await startSink();
    const early = await startSink();
    const late = await startSink();
    t.teardown(async () => {
      await s.stop();
      await ops.close();
      await early.close();
      await late.close();
    });
    const token = s.admin.token;
    await selfTarget(s, ops.url);
    await s.request('PATCH', '/api/self-monitoring', { token, body: { deferred_backlog_threshold: 3 } });
    s.clock.set('2026-05-01T23:30:00Z');
    // Two providers whose trackers' quiet hours end an hour apart, so the backlog shrinks without emptying.
    const chain = async (name: string, end: string, url: string) => {
      const p = (
        await s.request('POST', '/api/providers', {
          token,
          body: { kind: 'example', name, config: { shared_token: 'sharedtoken1' } },
        })
      ).body;
      const tr = (
        await s.request('POST', '/api/trackers', {
          token,
          body: { provider_id: p.id, name, quiet_hours: { start: '22:00', end, timezone: 'UTC' } },
        })
      ).body;
      const tg = (
        await s.request('POST', '/api/targets', {
          token,
          body: { kind: 'recorder', name, config: { url }, locale: 'en' },
        })
      ).body;
      await s.request('PUT', `/api/trackers/${tr.id}/targets/${tg.id}`, { token });
      const hook = new URL(p.webhook_url).pathname;
      return async (n: string) => {
        const r = await s.request('POST', hook, {
          headers: { 'x-example-token': 'sharedtoken1' },
          body: { type: 'thing_happened', payload: { name: n } },
        });
        if (r.status !== 202) throw new Error(`webhook: ${r.status} ${r.text}`);
      };
    };
    const toSix = await chain('Until six', '06:00', early.url);
    const toSeven = await chain('Until seven', '07:00', late.url);
    const relay = s.service.core.services.get('relay') as any;
    const alerts = () => ops.received.filter((r) => /piling up/.test(r.body.title));
    const state = async () => {
      const self = (await s.request('GET', '/api/self-monitoring', { token })).body;
      const deferred = (await s.request('GET', '/api/deferred?limit=50', { token })).body.deferred;
      return { latched: self.backlog_latched, deferred: deferred.length };
    };

    await toSix('a');
    await toSeven('b');
    await relay.tick();
    t.same(await state(), { latched: false, deferred: 2 }, 'threshold − 1 deferred: not latched');
    t.equal(alerts().length, 0, 'no alert below the threshold');
    await toSeven('c');
    await relay.tick();
    t.same(await state(), { latched: true, deferred: 3 });
    t.equal(alerts().length, 1, 'raised when the count reaches exactly the threshold');

    s.clock.set('2026-05-02T06:00:01Z');
    await relay.tick();
    t.equal(early.received.length, 1, "the six o'clock tracker released its delivery");
    t.equal(late.received.length, 0, "the seven o'clock one still holds two");
    t.same(await state(), { latched: false, deferred: 2 }, 're-armed at threshold − 1 with deliveries still deferred');
    await toSeven('d');
    await relay.tick();
    t.same(await state(), { latched: true, deferred: 3 });
    t.equal(alerts().length, 2, 'raised again when the count reaches the threshold again');
  },
);

t.test('retention deletes finished events older than the limit; 0 disables', async (t) => {
  const s = await startService({ SERVICE_EVENT_LOG_RETENTION_DAYS: '30' });
  t.teardown(() => s.stop());
  const { applyRetention } = await import('../../core/src/relay/feature.ts');
  const db = s.service.core.db;
  const self = await db.get<{ id: string }>(`SELECT id FROM providers WHERE kind = 'bridge_self'`);
  const ins = (id: string, created: string, status: string) =>
    db.run(
      'INSERT INTO event_log (id, user_id, provider_id, provider_kind, event_type, severity, payload, ' +
        `dispatch_status, occurred_at, created_at) VALUES (?, ?, ?, 'bridge_self', 'x', 'info', '{}', ?, ?, ?)`,
      [id, s.admin.id, self!.id, status, created, created],
    );
  await ins('00000000-0000-7000-8000-000000000001', '2020-01-01T00:00:00.000Z', 'dispatched');
  await ins('00000000-0000-7000-8000-000000000002', '2020-01-01T00:00:00.000Z', 'deferred');
  await ins('00000000-0000-7000-8000-000000000003', new Date().toISOString(), 'dispatched');
  t.equal(await applyRetention(s.service.core), 1);
  const left = (await db.all('SELECT id FROM event_log ORDER BY id')).map((r) => r.id);
  t.same(
    left,
    ['00000000-0000-7000-8000-000000000002', '00000000-0000-7000-8000-000000000003'],
    'old finished row gone; unfinished work kept',
  );
  (s.service.core.config as any).eventLogRetentionDays = 0;
  await ins('00000000-0000-7000-8000-000000000004', '2020-01-01T00:00:00.000Z', 'dispatched');
  t.equal(await applyRetention(s.service.core), 0, 'disabled');
});

t.test('actions: message and digest run from the scheduler once per slot and record their outcome', async (t) => {
  const s = await startService();
  const sink = await startSink();
  t.teardown(async () => {
    await s.stop();
    await sink.close();
  });
  const tg = await s.request('POST', '/api/targets', {
    token: s.admin.token,
    body: { kind: 'recorder', name: 'Rec', config: { url: sink.url }, locale: 'en' },
  });
  const p = await s.request('POST', '/api/providers', {
    token: s.admin.token,
    body: { kind: 'example', name: 'Ex', config: { shared_token: 'sharedtoken1' } },
  });
  const tr = await s.request('POST', '/api/trackers', {
    token: s.admin.token,
    body: { provider_id: p.body.id, name: 'Tr' },
  });
  await s.request('PUT', `/api/trackers/${tr.body.id}/targets/${tg.body.id}`, { token: s.admin.token });
  const hook = new URL(p.body.webhook_url).pathname;
  await s.request('POST', hook, {
    headers: { 'x-example-token': 'sharedtoken1' },
    body: { type: 'alarm', payload: { name: 'one' } },
  });
  const relay = s.service.core.services.get('relay') as any;
  await relay.tick();
  const msg = await s.request('POST', '/api/actions', {
    token: s.admin.token,
    body: {
      name: 'Morning',
      kind: 'message',
      schedule: '0 8 * * *',
      config: { target_ids: [tg.body.id], title: 'Good morning', body: 'Today is {{date}}' },
    },
  });
  t.equal(msg.status, 201, msg.text);
  const dig = await s.request('POST', '/api/actions', {
    token: s.admin.token,
    body: { name: 'Digest', kind: 'digest', schedule: '*/5 * * * *', config: { tracker_id: tr.body.id } },
  });
  t.equal(dig.status, 201, dig.text);
  // make both due now and let the scheduler's job run them
  await s.service.core.db.run('UPDATE actions SET next_run_at = ?, created_at = ?', [
    '2000-01-01T00:00:00.000Z',
    '2000-01-01T00:00:00.000Z',
  ]);
  await s.service.core.jobs.runNow('actions');
  await s.service.core.jobs.runNow('actions');
  await relay.tick();
  const titles = sink.received.map((r) => r.body.title);
  t.ok(titles.includes('Good morning'), 'message sent');
  t.equal(
    titles.filter((x: string) => /^Digest: Tr \(1 events\)/.test(x)).length,
    1,
    'digest of the tracker, sent once',
  );
  const d = sink.received.find((r) => /^Digest/.test(r.body.title));
  t.match(d.body.plainBody, /ALARM one/);
  const a = await s.request('GET', `/api/actions/${msg.body.id}`, { token: s.admin.token });
  t.equal(a.body.last_status, 'ok');
  t.ok(a.body.next_run_at > new Date().toISOString(), 'next run scheduled');
});
