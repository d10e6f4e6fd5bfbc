/**
 * `GET /api/live` through the real service: hints about an event posted to a webhook, its delivery and the webhook
 * log reach the owner's stream and never another user's; a failed send's retry comes with its due time; a stream that
 * reconnects with `Last-Event-ID` gets the hints it missed, or `reset` when they are not held any more; the per-user
 * limit of streams, sign-out and shutdown end streams. Runs in both database passes.
 */
// The keep-alive, and with it the re-check of each stream's session, comes every 300 ms here instead of 15 s.
process.env.HERALD_SSE_KEEPALIVE_MS = '300';

import t from 'tap';
import type { LiveBus } from '../../core/src/live/bus.ts';
import { MAX_PER_USER } from '../../core/src/live/routes.ts';
import { type LiveClient, openLive } from '../helpers/live.ts';
import { startService, startSink, type TestService } from '../helpers/service.ts';
import { waitFor } from '../helpers/wait.ts';

t.setTimeout(90_000);

async function source(s: TestService, token: string, name: string, targetUrl: string) {
  const p = (
    await s.request('POST', '/api/providers', {
      token,
      body: { kind: 'example', name, config: { shared_token: 'sharedtoken1' } },
    })
  ).body;
  const tr = (await s.request('POST', '/api/trackers', { token, body: { provider_id: p.id, name: `${name} tracker` } }))
    .body;
  const tg = (
    await s.request('POST', '/api/targets', {
      token,
      body: { kind: 'recorder', name: `${name} sink`, config: { url: targetUrl }, locale: 'en' },
    })
  ).body;
  if ((await s.request('PUT', `/api/trackers/${tr.id}/targets/${tg.id}`, { token })).status >= 300)
    throw new Error('link failed');
  const post = async (name: string) => {
    const res = await fetch(p.webhook_url.replace(/^https?:\/\/[^/]+/, s.url), {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-example-token': 'sharedtoken1' },
      body: JSON.stringify({ type: 'alarm', payload: { name } }),
    });
    const body = await res.json();
    if (res.status !== 202) throw new Error(`webhook answered ${res.status}: ${JSON.stringify(body)}`);
    return body.event_ids[0] as string;
  };
  return { id: p.id as string, post };
}

const is =
  (event: string, f: (d: any) => boolean = () => true) =>
  (m: { event: string; data: any }) =>
    m.event === event && f(m.data);

t.test('live hints', async (t) => {
  const s = await startService();
  const sinkA = await startSink();
  const sinkB = await startSink();
  const open: LiveClient[] = [];
  const live = async (token: string, o?: Parameters<typeof openLive>[2]) => {
    const c = await openLive(s.url, token, o);
    open.push(c);
    return c;
  };
  t.teardown(async () => {
    for (const c of open) c.close();
    await s.stop();
    await sinkA.close();
    await sinkB.close();
  });
  const a = s.admin;
  const b = await s.user();
  const srcA = await source(s, a.token, 'Alpha', sinkA.url);
  const srcB = await source(s, b.token, 'Beta', sinkB.url);

  const la = await live(a.token);
  const lb = await live(b.token);
  t.equal(la.status, 200);
  await la.next(is('ready'));
  await lb.next(is('ready'));

  await t.test('an event posted to the webhook reaches its owner, and only its owner', async (t) => {
    const id = await srcA.post('smoke');
    const logged = await la.next(is('event', (d) => d.id === id));
    t.equal(logged.data.provider_id, srcA.id, 'the hint names the provider');
    t.ok(logged.id, 'each message has an id');
    await la.next(is('webhook_log', (d) => d.provider_id === srcA.id));
    const sent = await la.next(is('delivery', (d) => d.event_id === id && d.status === 'sent'));
    t.equal(sent.data.next_attempt_at, null);
    await la.next(is('event', (d) => d.id === id && d.dispatch_status === 'dispatched'));

    // B's own event comes after A's on the same bus: had A's hints gone to B, they would be there before it.
    const own = await srcB.post('own');
    await lb.next(is('event', (d) => d.id === own));
    const leaked = lb.messages.filter((m) => JSON.stringify(m.data).match(new RegExp(`${id}|${srcA.id}`)));
    t.same(leaked, [], 'no hint about A reached B');
    t.notOk(
      la.messages.some((m) => m.data?.id === own || m.data?.provider_id === srcB.id),
      'and none about B reached A',
    );
  });

  await t.test('a failed send says when the next attempt is due', async (t) => {
    sinkA.respond(503);
    t.teardown(() => sinkA.respond(200));
    const before = Date.now();
    const id = await srcA.post('flaky');
    const retry = await la.next(is('delivery', (d) => d.event_id === id));
    t.equal(retry.data.status, 'queued', 'the delivery waits for another attempt');
    t.equal(retry.data.attempts, 1);
    t.ok(Date.parse(retry.data.next_attempt_at) > before, 'due later');
    const events = await s.request('GET', '/api/events', { token: a.token });
    const d = events.body.events.find((e: any) => e.id === id).deliveries[0];
    t.equal(d.next_attempt_at, retry.data.next_attempt_at, 'the event log shows the same due time');
  });

  await t.test('a reconnect with Last-Event-ID gets the hints it missed', async (t) => {
    const first = await live(a.token);
    await first.next(is('ready'));
    const last = first.messages.at(-1)!.id!;
    first.close();
    const one = await srcA.post('missed one');
    const two = await srcA.post('missed two');
    // The second hint is published once its write is committed: by then the first is held too.
    await la.next(is('event', (d) => d.id === two));
    const again = await live(a.token, { lastEventId: last });
    const ready = await again.next(is('ready'));
    const ids = again.messages.filter(is('event')).map((m) => m.data.id);
    t.ok(ids.includes(one) && ids.includes(two), 'both missed events are replayed');
    t.ok(ready.data.replayed >= 2, 'before ready, which counts them');
    t.notOk(again.messages.some(is('reset')), 'no reset was needed');
    const other = await live(b.token, { lastEventId: last });
    await other.next(is('ready'));
    t.notOk(
      other.messages.some((m) => m.data?.id === one || m.data?.id === two),
      "another user resuming from the same id gets none of A's hints",
    );
  });

  await t.test('a reset when the missed hints are not held', async (t) => {
    const foreign = await live(a.token, { lastEventId: 'deadbeef-1' });
    await foreign.next(is('reset'));
    t.notOk(foreign.messages.some(is('ready')), 'an id of another replica or boot: reset instead of ready');
    const quiet = await live(a.token);
    await quiet.next(is('ready'));
    const last = quiet.messages.at(-1)!.id!;
    quiet.close();
    const bus = s.service.core.services.get('live') as LiveBus;
    for (let i = 0; i < 300; i++) bus.publish(a.id, { kind: 'deferred' });
    const late = await live(a.token, { lastEventId: last });
    const reset = await late.next(is('reset'));
    t.ok(reset.id, 'the reset carries an id to resume from next time');
    const after = await live(a.token, { lastEventId: reset.id });
    const ready = await after.next(is('ready'));
    // A hint published since the reset (an earlier test's retry, say) is new and replayed; nothing before it is.
    const replayed = after.messages.slice(0, after.messages.indexOf(ready));
    const seq = (id: string | undefined) => Number(id?.slice(id.lastIndexOf('-') + 1));
    t.equal(ready.data.replayed, replayed.length, 'ready counts what came before it');
    t.ok(
      replayed.every((m) => seq(m.id) > seq(reset.id)),
      `resuming from the reset replays nothing old (${replayed.map((m) => `${m.event} ${m.id}`).join(', ') || 'none'})`,
    );
  });

  await t.test('streams per user are limited', async (t) => {
    const bus = s.service.core.services.get('live') as LiveBus;
    const already = bus.count(b.id);
    t.ok(already > 0, 'B has streams open already');
    const mine: LiveClient[] = [];
    for (;;) {
      const c = await live(b.token);
      if (c.status !== 200) {
        t.equal(c.status, 429, 'past the limit: 429');
        t.equal(c.problem.code, 'live_streams_exceeded');
        t.match(c.problem.detail, /live streams/);
        break;
      }
      mine.push(c);
    }
    t.equal(mine.length + already, MAX_PER_USER, `${MAX_PER_USER} streams of one user are open at once`);
    const other = await live(a.token);
    t.equal(other.status, 200, "another user's streams do not count");
    mine[0]!.close();
    // The service frees the slot when it sees the close: tried for up to 15 s, not 40 times 50 ms (2 s, which a
    // loaded machine could outlast).
    let reopened: LiveClient | undefined;
    await waitFor(
      'a slot to be free again',
      async () => (reopened = await live(b.token)).status === 200,
      15_000,
      50,
    ).catch(() => undefined);
    t.equal(reopened?.status, 200, 'once one closes, one more may open');
    for (const c of mine) c.close();
  });

  await t.test('a stream needs a session and ends with it', async (t) => {
    const anon = await fetch(`${s.url}/api/live`);
    t.equal(anon.status, 401);
    const login = await s.request('POST', '/api/auth/login', {
      body: { email: b.email, password: 'user password 1' },
    });
    const token = login.body.access_token as string;
    const c = await live(token);
    await c.next(is('ready'));
    t.equal((await s.request('POST', '/api/auth/logout', { token })).status, 204);
    await c.ended;
    t.pass('the signed-out session lost its stream');
  });

  await t.test('shutdown ends the streams at once', async (t) => {
    const c = await live(a.token);
    await c.next(is('ready'));
    const started = Date.now();
    await s.stop();
    await c.ended;
    t.ok(Date.now() - started < 4000, 'the stop did not wait for the grace period');
  });
});
