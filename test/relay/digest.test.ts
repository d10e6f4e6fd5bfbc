/**
 * A digest at the end of quiet hours, through the real service with its controllable clock:
 * 40 deferred events of 3 types from 2 providers go out, when the window ends, as ONE message per
 * linked target — a chat webhook (Slack format, loopback sink, English), a Telegram chat (fake Bot
 * API, Russian) and a small-limit target that forces the digest into parts — grouped, counted,
 * critical items first. A critical event during the window is sent at once. Two dispatchers on one
 * database build each digest once (two services on one PostgreSQL database in the PostgreSQL pass).
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { Dispatcher } from '../../core/src/relay/pipeline/dispatcher.ts';
import { FakeTelegram } from '../../plugins/target-telegram/test/fakes/telegram.ts';
import { startService, startSink, TEST_DB, TEST_PLUGINS, type TestService, testSecretKey } from '../helpers/service.ts';
import { settled } from '../helpers/settle.ts';
import { waitFor } from '../helpers/wait.ts';

const split = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/limits/split');
const PLUGINS = [
  TEST_PLUGINS,
  '@herald/provider-webhook',
  '@herald/target-chat-webhook',
  '@herald/target-telegram',
  split,
].join(',');
const TOKEN = '7000002:AAHerald-digest-fake-token_0123456789';
const CHAT = -1009876543210;
const hookHeaders = { 'x-example-token': 'sharedtoken1' };
const WINDOW = { start: '23:00', end: '07:00', timezone: 'Europe/Moscow' };

async function ok(p: Promise<{ status: number; body: any; text: string }>, what: string, status = 201) {
  const r = await p;
  if (r.status !== status) throw new Error(`${what}: ${r.status} ${r.text}`);
  return r.body;
}

/** Two example providers, each with a digest tracker; returns a way to fire events at each. */
async function providers(s: TestService) {
  const token = s.admin.token;
  const make = async (name: string, policies: Record<string, string>) => {
    const p = await ok(
      s.request('POST', '/api/providers', {
        token,
        body: { kind: 'example', name, config: { shared_token: 'sharedtoken1' } },
      }),
      'provider',
    );
    const tr = await ok(
      s.request('POST', '/api/trackers', {
        token,
        body: {
          provider_id: p.id,
          name: `${name} tracker`,
          quiet_hours: WINDOW,
          quiet_policies: policies,
          quiet_release: 'digest',
        },
      }),
      'tracker',
    );
    const hook = `/api/hooks/${p.webhook_url.split('/api/hooks/')[1]}`;
    const fire = async (type: string, name: string) => {
      const r = await s.request('POST', hook, { headers: hookHeaders, body: { type, payload: { name } } });
      if (r.status !== 202) throw new Error(`webhook: ${r.status} ${r.text}`);
      return r.body.event_ids[0] as string;
    };
    return { provider: p, tracker: tr, fire };
  };
  // Alpha defers its alarms on purpose (the tracker's own policy), so the digest holds critical items.
  return { alpha: await make('Alpha', { alarm: 'defer' }), beta: await make('Beta', { stale_thing: 'defer' }) };
}

const link = (s: TestService, trackerId: string, targetId: string) =>
  ok(s.request('PUT', `/api/trackers/${trackerId}/targets/${targetId}`, { token: s.admin.token }), 'link', 200);

t.test('40 deferred events become one digest per target when quiet hours end', async (t) => {
  const tg = await new FakeTelegram().start();
  tg.addBot(TOKEN, { id: 7000002, username: 'herald_digest_bot' });
  tg.addChat({ id: CHAT, type: 'supergroup', title: 'Ops' });
  const chat = await startSink();
  const small = await startSink();
  const s = await startService({ SERVICE_PLUGINS: PLUGINS });
  t.teardown(async () => {
    await s.stop();
    await tg.close();
    await chat.close();
    await small.close();
  });
  const relay = s.service.core.services.get('relay') as { tick(): Promise<void> };
  const token = s.admin.token;

  // The form's setting is validated and saved.
  const { alpha, beta } = await providers(s);
  t.equal(alpha.tracker.quiet_release, 'digest');
  const bad = await s.request('PATCH', `/api/trackers/${alpha.tracker.id}`, {
    token,
    body: { quiet_release: 'weekly' },
  });
  t.equal(bad.status, 422, 'an unknown release mode is refused');
  t.equal(bad.body.errors[0].path, 'body/quiet_release');
  const plain = await ok(
    s.request('POST', '/api/trackers', { token, body: { provider_id: alpha.provider.id, name: 'Plain' } }),
    'tracker',
  );
  t.equal(plain.quiet_release, 'each', 'one by one unless asked');
  await ok(s.request('DELETE', `/api/trackers/${plain.id}`, { token }), 'delete', 204);

  const bot = await ok(
    s.request('POST', '/api/bots', {
      token,
      body: { name: 'Herald', token: TOKEN, mode: 'polling', api_root: tg.url },
    }),
    'bot',
  );
  const slack = await ok(
    s.request('POST', '/api/targets', {
      token,
      body: { kind: 'chat_webhook', name: 'Slack', locale: 'en', config: { format: 'slack', url: chat.url } },
    }),
    'slack target',
  );
  const telegram = await ok(
    s.request('POST', '/api/targets', {
      token,
      body: { kind: 'telegram', name: 'Телеграм', locale: 'ru', config: { bot_id: bot.id, chat_id: String(CHAT) } },
    }),
    'telegram target',
  );
  const tiny = await ok(
    s.request('POST', '/api/targets', {
      token,
      body: { kind: 'limits_split', name: 'Tiny', locale: 'en', config: { url: small.url } },
    }),
    'small target',
  );
  for (const tr of [alpha.tracker, beta.tracker])
    for (const tg2 of [slack, telegram, tiny]) await link(s, tr.id, tg2.id);

  s.clock.set('2026-03-10T20:30:00Z'); // 23:30 in Moscow: quiet
  const ids: string[] = [];
  for (let i = 1; i <= 15; i++) ids.push(await alpha.fire('thing_happened', `a${i}`));
  for (let i = 1; i <= 12; i++) ids.push(await beta.fire('stale_thing', `s${i}`));
  for (let i = 1; i <= 3; i++) ids.push(await alpha.fire('alarm', `fire${i}`));
  for (let i = 1; i <= 10; i++) ids.push(await beta.fire('thing_happened', `b${i}`));
  t.equal(ids.length, 40);

  // Critical still bypasses quiet hours: Beta names no policy for alarms.
  const now = await beta.fire('alarm', 'now');
  await relay.tick();
  // Settled: nothing queued or sending, so a deferred event sent by mistake would be counted here.
  await settled(s);
  t.equal(chat.received.length, 1, 'only the critical event went out during the window');
  t.match(chat.received[0].body.text, /ALARM now/);
  t.equal(tg.sent.length, 1);
  t.match(tg.sent[0]!.text, /ТРЕВОГА now/);
  t.equal((await s.request('GET', `/api/events/${now}`, { token })).body.dispatch_status, 'dispatched');
  t.equal((await s.request('GET', `/api/events/${ids[0]}`, { token })).body.dispatch_status, 'deferred');
  const deferred = await s.request('GET', '/api/deferred?limit=200', { token });
  t.equal(deferred.body.deferred.length, 120, '40 events × 3 targets wait');

  s.clock.set('2026-03-11T03:00:00Z'); // 06:00 Moscow: still quiet
  await relay.tick();
  await settled(s);
  t.equal(chat.received.length, 1, 'nothing released before the window ends');

  s.clock.set('2026-03-11T04:00:01Z'); // 07:00:01 Moscow: the window ended
  await relay.tick();
  await relay.tick();
  // The service's own dispatcher loop runs too: wait for whichever pass sends and records them.
  await chat.waitFor(2);
  await small.waitFor(3);
  await waitFor(
    'the last event dispatched and the digests sent',
    async () =>
      (await s.request('GET', `/api/events/${ids[39]}`, { token })).body.dispatch_status === 'dispatched' &&
      tg.sent.length >= 2,
  );
  // Settled: no delivery of any event (digests included) can still be sent, so a second digest would be here by now.
  await settled(s);
  t.equal(chat.received.length, 2, 'the chat got ONE more message: the digest');
  const digest = String(chat.received[1].body.text);
  t.match(digest, /^\*Quiet hours digest: 40 notifications\*\n/, 'title with the total, in English');
  const order = [
    'Alpha · alarm — 3',
    'Alpha · thing_happened — 15',
    'Beta · stale_thing — 12',
    'Beta · thing_happened — 10',
  ].map((h) => digest.indexOf(h));
  t.ok(
    order.every((i) => i >= 0),
    'one group per provider and event type, counted',
  );
  t.same(
    [...order].sort((a, b) => a - b),
    order,
    'critical group first, then by provider and type',
  );
  t.match(
    digest,
    /‼ Alpha · alarm — 3\n• ALARM fire1\n• ALARM fire2\n• ALARM fire3\n/,
    'critical items marked, each its one-line title',
  );
  for (const n of ['a1', 'a15', 'b10']) t.match(digest, new RegExp(`• Thing: ${n}(\\n|$)`));
  t.match(digest, /• Stale s12/);

  t.equal(tg.sent.length, 2, 'Telegram got one digest');
  const ru = tg.sent[1]!.text;
  t.match(ru, /^Сводка за тихие часы: 40 уведомлений\n/, 'Russian title with the right plural form');
  t.match(ru, /‼ Alpha · alarm — 3\n• ТРЕВОГА fire1/);
  t.match(ru, /• Событие: b10/);
  t.notMatch(ru, /Thing:|Quiet hours/, 'nothing English in the Russian digest');

  t.match(small.received[0].body.title, /ALARM now/, 'the small target got the critical event during the window');
  const parts = small.received.slice(1).map((r) => r.body);
  t.ok(parts.length > 1, `the small-limit target got the digest in ${parts.length} parts`);
  t.ok(
    parts.every((p) => p.body.length <= 100),
    'each part within its limit',
  );
  t.same(
    parts.map((p) => p.part?.count),
    parts.map(() => parts.length),
    'parts of one message',
  );
  t.ok(
    parts.every((p) => p.eventId === parts[0].eventId),
    'all parts of one digest',
  );
  const whole = parts.map((p) => String(p.body).replace(/\n\n\(part \d+ of \d+\)$/, '')).join('');
  t.match(whole, /alarm — 3/);
  t.match(whole, /Thing: b10/);

  // The events that went in it: dispatched, each delivery sent in the digest and linked to it.
  const ev = (await s.request('GET', `/api/events/${ids[0]}`, { token })).body;
  t.equal(ev.dispatch_status, 'dispatched');
  t.equal(ev.deliveries.length, 3);
  for (const d of ev.deliveries) {
    t.equal(d.status, 'sent');
    t.ok(d.digest_event_id, 'linked to its digest');
  }
  const digests = (await s.request('GET', '/api/events?event_type=quiet_hours_digest', { token })).body.events;
  t.equal(digests.length, 3, 'one digest event per target');
  t.ok(
    digests.every(
      (d: any) => d.dispatch_status === 'dispatched' && d.severity === 'critical' && d.payload.total === 40,
    ),
  );
  t.ok(ev.deliveries.every((d: any) => digests.some((g: any) => g.id === d.digest_event_id)));
  t.equal((await s.request('GET', '/api/deferred', { token })).body.deferred.length, 0, 'nothing left deferred');

  // Nothing is sent twice on later passes.
  await relay.tick();
  t.equal(chat.received.length, 2);
  t.equal(tg.sent.length, 2);
});

t.test('a digest that fails is retried as one unit; a permanent failure fails the events in it', async (t) => {
  const sink = await startSink();
  const s = await startService({ SERVICE_PLUGINS: PLUGINS });
  t.teardown(async () => {
    await s.stop();
    await sink.close();
  });
  const relay = s.service.core.services.get('relay') as { tick(): Promise<void> };
  const token = s.admin.token;
  const { alpha } = await providers(s);
  const target = await ok(
    s.request('POST', '/api/targets', {
      token,
      body: { kind: 'recorder', name: 'Rec', locale: 'en', config: { url: sink.url } },
    }),
    'target',
  );
  await link(s, alpha.tracker.id, target.id);
  s.clock.set('2026-03-10T20:30:00Z');
  const ids = [await alpha.fire('thing_happened', 'x1'), await alpha.fire('thing_happened', 'x2')];
  sink.respond(503);
  s.clock.set('2026-03-11T04:00:01Z');
  await relay.tick();
  const mid = (await s.request('GET', `/api/events/${ids[0]}`, { token })).body;
  t.equal(mid.dispatch_status, 'pending', 'waiting for its digest to be retried');
  t.equal(mid.deliveries[0].status, 'in_digest');
  const digestId = mid.deliveries[0].digest_event_id;
  t.equal(
    (await s.request('GET', `/api/events/${digestId}`, { token })).body.deliveries[0].status,
    'queued',
    'the digest is retried',
  );
  sink.respond(200);
  s.clock.set('2026-03-11T04:10:00Z');
  await relay.tick();
  await settled(s);
  t.equal(sink.received.length, 1, 'one message for both');
  t.match(sink.received[0].body.title, /Quiet hours digest: 2 notifications/);
  for (const id of ids)
    t.equal((await s.request('GET', `/api/events/${id}`, { token })).body.dispatch_status, 'dispatched');

  // The next night the target refuses for good.
  s.clock.set('2026-03-11T20:30:00Z');
  const later = await alpha.fire('thing_happened', 'x3');
  sink.respond(400);
  s.clock.set('2026-03-12T04:00:01Z');
  await relay.tick();
  const failed = (await s.request('GET', `/api/events/${later}`, { token })).body;
  t.equal(failed.dispatch_status, 'failed');
  t.match(failed.deliveries[0].last_error, /quiet-hours digest failed/);
  const single = await s.request('GET', `/api/events/${failed.deliveries[0].digest_event_id}`, { token });
  t.match(single.body.message, /Quiet hours digest: 1 notification$/, 'singular in the event log message');

  // Resending the failed digest (a new delivery id) sends the same items, and they are sent after all.
  sink.respond(200);
  const resent = await s.request('POST', `/api/events/${single.body.id}/resend`, { token, body: {} });
  t.equal(resent.status, 202, resent.text);
  await relay.tick();
  t.equal(sink.received.length, 2);
  t.match(sink.received[1].body.body, /Thing: x3/, 'the resent digest lists its item');
  const after = (await s.request('GET', `/api/events/${later}`, { token })).body;
  t.equal(after.dispatch_status, 'dispatched');
  t.equal(after.deliveries[0].status, 'sent');
  t.equal(after.deliveries[0].digest_event_id, single.body.id);
});

t.test('two dispatchers build each digest once', async (t) => {
  const sink = await startSink();
  const s = await startService({ SERVICE_PLUGINS: PLUGINS });
  let second: TestService | undefined;
  t.teardown(async () => {
    await second?.stop();
    await s.stop();
    await sink.close();
  });
  const token = s.admin.token;
  const { alpha, beta } = await providers(s);
  const target = await ok(
    s.request('POST', '/api/targets', {
      token,
      body: { kind: 'recorder', name: 'Rec', locale: 'en', config: { url: sink.url } },
    }),
    'target',
  );
  await link(s, alpha.tracker.id, target.id);
  await link(s, beta.tracker.id, target.id);
  s.clock.set('2026-03-10T20:30:00Z');
  for (let i = 0; i < 30; i++) await (i % 2 ? alpha : beta).fire('thing_happened', `n${i}`);
  s.clock.set('2026-03-11T04:00:01Z');
  const core = s.service.core;
  const relay = core.services.get('relay') as {
    catalog: any;
    monitor: any;
    dispatcher: Dispatcher;
    tick(): Promise<void>;
  };
  if (TEST_DB === 'postgresql') {
    // A second replica on the same database, its dispatcher running on its own.
    const url = core.config.databaseUrl as string;
    // Its clock is set before its dispatcher starts (the real date is past the window too).
    second = await startService(
      { SERVICE_PLUGINS: PLUGINS, SERVICE_DATABASE_URL: url, SERVICE_SECRET_KEY: testSecretKey(s.dataDir) },
      {
        setup: false,
        beforeStart: async (c) => {
          (c.clock as unknown as { set(d: string): void }).set('2026-03-11T04:00:01Z');
        },
      },
    );
    const other = second.service.core.services.get('relay') as { tick(): Promise<void> };
    await Promise.all([relay.tick(), other.tick(), relay.tick(), other.tick()]);
  } else {
    // SQLite: one file, one writer; two dispatchers of the service race for the same window.
    const twin = new Dispatcher(core, relay.catalog, relay.monitor);
    await Promise.all([relay.dispatcher.releaseDue(), twin.releaseDue(), relay.dispatcher.releaseDue()]);
    await relay.tick();
  }
  await sink.waitFor(1, 10_000);
  // Settled: every delivery (on either replica) recorded as sent or in its digest, so a second digest would be here by
  // now.
  await settled(s);
  t.equal(sink.received.length, 1, 'one digest sent');
  t.match(
    sink.received[0].body.title,
    /Quiet hours digest: 30 notifications/,
    'holding every deferred event of both trackers',
  );
  const rows = await core.db.all<{ id: string }>(`SELECT id FROM event_log WHERE event_type = 'quiet_hours_digest'`);
  t.equal(rows.length, 1, 'one digest event recorded');
  const left = await core.db.get<{ n: number }>(
    `SELECT COUNT(*) AS n FROM deliveries WHERE digest_id IS NULL AND status <> 'sent' AND event_id <> ?`,
    [rows[0]!.id],
  );
  t.equal(Number(left!.n), 0, 'every delivery went in it');
});

t.test(
  'a critical event of a deferrable type still bypasses quiet hours (generic webhook, severity from the payload)',
  async (t) => {
    const sink = await startSink();
    const s = await startService({ SERVICE_PLUGINS: PLUGINS });
    t.teardown(async () => {
      await s.stop();
      await sink.close();
    });
    const relay = s.service.core.services.get('relay') as { tick(): Promise<void> };
    const token = s.admin.token;
    const p = await ok(
      s.request('POST', '/api/providers', {
        token,
        body: {
          kind: 'webhook',
          name: 'Alerts',
          auth_mode: 'none',
          acknowledge_unauthenticated: true,
          config: { mapping: { title: 'title', severity: 'level' } },
        },
      }),
      'provider',
    );
    const tr = await ok(
      s.request('POST', '/api/trackers', {
        token,
        body: { provider_id: p.id, name: 'Alerts tracker', quiet_hours: WINDOW, quiet_release: 'digest' },
      }),
      'tracker',
    );
    const target = await ok(
      s.request('POST', '/api/targets', {
        token,
        body: { kind: 'recorder', name: 'Rec', locale: 'en', config: { url: sink.url } },
      }),
      'target',
    );
    await link(s, tr.id, target.id);
    s.clock.set('2026-03-10T20:30:00Z');
    const post = async (body: unknown) => {
      const r = await fetch(p.webhook_url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      t.equal(r.status, 202);
      return ((await r.json()) as { event_ids: string[] }).event_ids[0]!;
    };
    const critical = await post({ title: 'disk full', level: 'critical' });
    const info = await post({ title: 'backup done', level: 'info' });
    await relay.tick();
    await settled(s);
    t.equal(sink.received.length, 1, 'the critical one went out during the window');
    t.match(sink.received[0].body.title, /disk full/);
    t.equal((await s.request('GET', `/api/events/${critical}`, { token })).body.dispatch_status, 'dispatched');
    t.equal(
      (await s.request('GET', `/api/events/${info}`, { token })).body.dispatch_status,
      'deferred',
      'the info one waits',
    );
    s.clock.set('2026-03-11T04:00:01Z');
    await relay.tick();
    await sink.waitFor(2);
    await settled(s);
    t.equal(sink.received.length, 2);
    t.match(sink.received[1].body.title, /Quiet hours digest: 1 notification$/);
    t.match(sink.received[1].body.body, /Alerts · .+ — 1\n• backup done/);
    t.notMatch(sink.received[1].body.body, /disk full/, 'not sent twice');
  },
);
