/**
 * Rules the pipeline must keep, driven through the real service at their limits: retries give up
 * after exactly 8 attempts, a delivery uses its owner's template and never another user's (on the
 * direct-send path and through the queue), the configs of a kind whose plugin is no longer loaded
 * stay masked, and quiet hours end at their end minute.
 */
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { providerRowFrom } from '../../core/src/plugins/host.ts';
import { MAX_ATTEMPTS } from '../../core/src/relay/pipeline/dispatcher.ts';
import { ingestEvent } from '../../core/src/relay/pipeline/ingest.ts';
import { startService, startSink, type TestService } from '../helpers/service.ts';
import { settled } from '../helpers/settle.ts';
import { waitFor } from '../helpers/wait.ts';

const hookHeaders = { 'x-example-token': 'sharedtoken1' };

async function ok(p: Promise<{ status: number; body: any; text: string }>, what: string, status = 201) {
  const r = await p;
  if (r.status !== status) throw new Error(`${what}: ${r.status} ${r.text}`);
  return r.body;
}

/** An example provider → tracker → recorder target chain of one user; `fire` posts an event to its webhook. */
async function chain(s: TestService, token: string, url: string, tracker: Record<string, unknown> = {}) {
  const p = await ok(
    s.request('POST', '/api/providers', {
      token,
      body: { kind: 'example', name: 'Source', config: { shared_token: 'sharedtoken1' } },
    }),
    'provider',
  );
  const tr = await ok(
    s.request('POST', '/api/trackers', { token, body: { provider_id: p.id, name: 'Tracker', ...tracker } }),
    'tracker',
  );
  const tg = await ok(
    s.request('POST', '/api/targets', {
      token,
      body: { kind: 'recorder', name: 'Sink', config: { url }, locale: 'en' },
    }),
    'target',
  );
  await ok(s.request('PUT', `/api/trackers/${tr.id}/targets/${tg.id}`, { token }), 'link', 200);
  const fire = async (name: string, type = 'thing_happened') => {
    const r = await ok(
      s.request('POST', new URL(p.webhook_url).pathname, { headers: hookHeaders, body: { type, payload: { name } } }),
      'webhook',
      202,
    );
    return r.event_ids[0] as string;
  };
  return { provider: p, tracker: tr, target: tg, fire };
}

t.test(
  'a failing target is tried exactly 8 times along the backoff, then the delivery fails with the reason',
  async (t) => {
    let requests = 0;
    const failing = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        requests++;
        res.writeHead(500).end('down');
      });
    });
    await new Promise<void>((r) => failing.listen(0, '127.0.0.1', r));
    const s = await startService();
    t.teardown(async () => {
      await s.stop();
      failing.closeAllConnections();
      failing.close();
    });
    t.equal(MAX_ATTEMPTS, 8);
    s.clock.set('2026-02-01T12:00:00.000Z');
    const c = await chain(s, s.admin.token, `http://127.0.0.1:${(failing.address() as { port: number }).port}/`);
    const relay = s.service.core.services.get('relay') as { tick(): Promise<void> };
    const db = s.service.core.db;
    const row = async () =>
      (await db.get<{
        status: string;
        attempts: number;
        next_attempt_at: string;
        last_error: string | null;
        last_status_code: number | null;
      }>('SELECT status, attempts, next_attempt_at, last_error, last_status_code FROM deliveries WHERE event_id = ?', [
        eventId,
      ]))!;
    /** Waits (up to 15 s, not 500 rounds of some 10 ms) until the delivery's try `n` is recorded, ticking the relay. */
    const tried = (n: number) =>
      waitFor(`attempt ${n} to be recorded`, async () => {
        const r = await row();
        if (Number(r.attempts) === n && r.status !== 'sending') return r;
        await relay.tick();
        return undefined;
      });

    const eventId = await c.fire('down');
    let r = await tried(1);
    for (let n = 2; n <= MAX_ATTEMPTS; n++) {
      t.match(
        r,
        { status: 'queued', last_error: 'sink answered 500', last_status_code: 500 },
        `after attempt ${n - 1}: queued for a retry`,
      );
      const delay = Date.parse(r.next_attempt_at) - s.clock.now().getTime();
      const base = 2000 * 2 ** (n - 2);
      t.ok(
        delay >= base / 2 && delay <= base,
        `backoff after attempt ${n - 1}: ${delay} ms within ${base / 2}–${base}`,
      );
      s.clock.set(new Date(Date.parse(r.next_attempt_at) - 1));
      await relay.tick();
      t.equal(Number((await row()).attempts), n - 1, `1 ms before it is due, attempt ${n} has not started`);
      s.clock.set(r.next_attempt_at);
      r = await tried(n);
    }
    t.match(
      r,
      { status: 'failed', last_error: 'gave up after 8 attempts: sink answered 500', last_status_code: 500 },
      'failed after the 8th attempt, saying why',
    );
    t.equal(requests, 8, 'the target was asked exactly 8 times');
    const ev = await ok(s.request('GET', `/api/events/${eventId}`, { token: s.admin.token }), 'event', 200);
    t.equal(ev.dispatch_status, 'failed');
    t.match(ev.deliveries, [{ status: 'failed', last_error: 'gave up after 8 attempts: sink answered 500' }]);
    s.clock.advance(86_400_000);
    await settled(s, [eventId]);
    t.equal(requests, 8, 'a day later nothing more was tried');
    t.equal(Number((await row()).attempts), 8);
  },
);

t.test(
  "a delivery uses its owner's template, never another user's for the same type and language, on the direct path " +
    'and through the queue',
  async (t) => {
    // Counts the in-process dispatcher's claims, to prove which path each delivery took.
    const s = await startService({ SERVICE_DISPATCH_THREAD: 'false' });
    const sinkA = await startSink();
    const sinkB = await startSink();
    t.teardown(async () => {
      await s.stop();
      await sinkA.close();
      await sinkB.close();
    });
    const a = await s.user();
    const b = await s.user();
    const chainA = await chain(s, a.token, sinkA.url);
    const chainB = await chain(s, b.token, sinkB.url);
    await ok(
      s.request('PUT', '/api/templates/thing_happened/en', {
        token: b.token,
        body: { title: 'B only: {{name}}', body: "B's own body" },
      }),
      'template of B',
      200,
    );
    const relay = s.service.core.services.get('relay') as any;
    let claimed = 0;
    const claim = relay.dispatcher.claim.bind(relay.dispatcher);
    relay.dispatcher.claim = async () => {
      const rows = await claim();
      claimed += rows.length;
      return rows;
    };

    const first = await chainA.fire('one');
    await settled(s, [first]);
    t.equal(claimed, 0, 'sent from ingest, without a claim');
    t.equal(sinkA.received.length, 1);
    t.equal(sinkA.received[0].body.title, 'Thing: one', "A has no template of its own: the default, not B's");
    t.equal(sinkA.received[0].body.body, 'one happened ()');
    const second = await chainB.fire('two');
    await settled(s, [second]);
    t.equal(sinkB.received[0].body.title, 'B only: two', 'B gets its own');

    await ok(
      s.request('PUT', '/api/templates/thing_happened/en', {
        token: a.token,
        body: { title: 'A only: {{name}}', body: "A's own body" },
      }),
      'template of A',
      200,
    );
    const third = await chainA.fire('three');
    const fourth = await chainB.fire('four');
    await settled(s, [third, fourth]);
    t.equal(claimed, 0, 'still the direct path');
    t.equal(sinkA.received[1].body.title, 'A only: three', 'each user their own template');
    t.equal(sinkB.received[1].body.title, 'B only: four');

    // Through the queue (written unclaimed, sent by a claim): the batch's template lookup is per owner too.
    await ok(s.request('DELETE', '/api/templates/thing_happened/en', { token: a.token }), "delete A's template", 204);
    const core = s.service.core as any;
    const provA = providerRowFrom((await core.db.get('SELECT * FROM providers WHERE id = ?', [chainA.provider.id]))!);
    const provB = providerRowFrom((await core.db.get('SELECT * FROM providers WHERE id = ?', [chainB.provider.id]))!);
    const queuedA = await ingestEvent(core, provA, { type: 'thing_happened', payload: { name: 'five' } });
    const queuedB = await ingestEvent(core, provB, { type: 'thing_happened', payload: { name: 'six' } });
    t.equal(queuedA.handed.length + queuedB.handed.length, 0, 'written to the queue');
    await settled(s, [...queuedA.eventIds, ...queuedB.eventIds]);
    t.equal(claimed, 2, 'both went through a claim, in one batch or two');
    t.equal(sinkA.received[2].body.title, 'Thing: five', "A's template deleted: the default again, not B's");
    t.equal(sinkB.received[2].body.title, 'B only: six');
    t.equal(sinkA.received.length, 3);
    t.equal(sinkB.received.length, 3);
  },
);

t.test('the configs of providers, trackers and targets whose plugin is no longer loaded stay masked', async (t) => {
  const sink = await startSink();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-test-'));
  const s = await startService({}, { dataDir });
  t.teardown(async () => {
    await sink.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });
  const token = s.admin.token;
  const p = await ok(
    s.request('POST', '/api/providers', {
      token,
      body: { kind: 'example', name: 'Gone', config: { shared_token: 'sharedtoken-gone-1', label: 'kept label' } },
    }),
    'provider',
  );
  const tr = await ok(
    s.request('POST', '/api/trackers', {
      token,
      body: {
        provider_id: p.id,
        name: 'Gone tracker',
        config: { tag: 'kept tag', access_key: 'tracker-access-key-1' },
      },
    }),
    'tracker',
  );
  const tg = await ok(
    s.request('POST', '/api/targets', {
      token,
      body: {
        kind: 'recorder',
        name: 'Gone target',
        config: { url: sink.url, api_token: 'recorder-api-token-1' },
        locale: 'en',
      },
    }),
    'target',
  );
  t.match(
    tr,
    { config: { tag: 'kept tag', access_key: '********' }, secrets_set: ['access_key'] },
    'masked while the plugin is loaded',
  );
  const stored = await s.service.core.db.get<{ config: string }>('SELECT config FROM trackers WHERE id = ?', [tr.id]);
  t.match(stored!.config, /"access_key":"enc:v1:/, 'the tracker secret is sealed at rest');
  await s.stop();

  // The same data folder with neither plugin loaded.
  const again = await startService({ SERVICE_PLUGINS: '@herald/provider-bridge-self' }, { dataDir, setup: false });
  t.teardown(() => again.stop());
  const admin = (
    await ok(
      again.request('POST', '/api/auth/login', { body: { email: s.admin.email, password: 'correct horse battery' } }),
      'login',
      200,
    )
  ).access_token as string;
  const get = async (path: string) => {
    const r = await again.request('GET', path, { token: admin });
    t.equal(r.status, 200, `GET ${path}`);
    t.notMatch(r.text, /enc:v1:/, `GET ${path}: no sealed value`);
    t.notMatch(r.text, /sharedtoken-gone-1|tracker-access-key-1|recorder-api-token-1/, `GET ${path}: no secret`);
    return r.body;
  };
  const provider = await get(`/api/providers/${p.id}`);
  t.match(
    provider,
    { plugin_enabled: false, config: { label: 'kept label', shared_token: '[REDACTED]' } },
    'provider: masked, the rest shown',
  );
  t.match(
    (await get('/api/providers')).providers.find((x: any) => x.id === p.id),
    { plugin_enabled: false, config: { shared_token: '[REDACTED]' } },
  );
  const tracker = await get(`/api/trackers/${tr.id}`);
  t.match(
    tracker,
    { config: { tag: 'kept tag', access_key: '[REDACTED]' } },
    'tracker: its sealed secret masked although its name says nothing',
  );
  t.match(
    (await get('/api/trackers')).trackers.find((x: any) => x.id === tr.id),
    { config: { access_key: '[REDACTED]' } },
  );
  const target = await get(`/api/targets/${tg.id}`);
  t.match(
    target,
    { plugin_enabled: false, config: { url: sink.url, api_token: '[REDACTED]' } },
    'target: masked, the rest shown',
  );
  t.match(
    (await get('/api/targets')).targets.find((x: any) => x.id === tg.id),
    { plugin_enabled: false, config: { api_token: '[REDACTED]' } },
  );
});

t.test('quiet hours through the pipeline: deferred at the last quiet minute, sent at the end minute', async (t) => {
  const sink = await startSink();
  const s = await startService();
  t.teardown(async () => {
    await s.stop();
    await sink.close();
  });
  const c = await chain(s, s.admin.token, sink.url, {
    quiet_hours: { start: '22:00', end: '07:00', timezone: 'Europe/Moscow' },
  });
  const status = async (id: string) =>
    (await ok(s.request('GET', `/api/events/${id}`, { token: s.admin.token }), 'event', 200)).dispatch_status;

  s.clock.set('2026-03-11T03:59:59Z'); // 06:59:59 in Moscow
  const last = await c.fire('last quiet minute');
  t.equal(await status(last), 'deferred', '06:59:59: deferred');
  s.clock.set('2026-03-11T04:00:00Z'); // 07:00:00
  const first = await c.fire('first free minute');
  const deliveries = await settled(s, [last, first]);
  t.same(
    deliveries.map((d) => d.status),
    ['sent', 'sent'],
    'at 07:00 the new event is sent and the deferred one released',
  );
  t.same(sink.received.map((r) => r.body.title).sort(), ['Thing: first free minute', 'Thing: last quiet minute']);

  await ok(
    s.request('PATCH', `/api/trackers/${c.tracker.id}`, {
      token: s.admin.token,
      body: { quiet_hours: { start: '12:00', end: '13:30', timezone: 'Europe/Moscow' } },
    }),
    'daytime window',
    200,
  );
  s.clock.set('2026-03-11T10:29:59Z'); // 13:29:59
  const lastDay = await c.fire('last daytime quiet minute');
  t.equal(await status(lastDay), 'deferred', '13:29:59: deferred');
  s.clock.set('2026-03-11T10:30:00Z'); // 13:30:00
  const firstDay = await c.fire('first daytime free minute');
  t.same(
    (await settled(s, [lastDay, firstDay])).map((d) => d.status),
    ['sent', 'sent'],
    '13:30: sent',
  );
  t.equal(sink.received.length, 4);
});
