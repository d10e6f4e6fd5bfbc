/**
 * The core refuses a replayed webhook delivery itself (plugin contract 1.4.0): a plugin returns its
 * replay key and checks nothing. Through the real service, on either database: a redelivered
 * single-event delivery, a no-event one (the code host's ping, an ignored event) and a
 * several-event one are answered 409 `replayed` and write no event; a key only plugin_store holds
 * (as the retention prune leaves it) refuses a delivery that now yields an event (the check inside
 * the event's write); an expired key lets a delivery through; a delivery whose events carried no
 * change is still refused for a held key.
 */

import crypto from 'node:crypto';
import { readFileSync } from 'node:fs';
import t from 'tap';
import {
  EXAMPLE_HOOK_HEADERS,
  exampleChain,
  githubHookHeaders,
  startService,
  startSink,
  TEST_PLUGINS,
  type TestService,
} from '../helpers/service.ts';

const SECRET = 'webhook-replay-secret-0123456789';
const fixture = (name: string) =>
  readFileSync(new URL(`../../plugins/provider-codehost/test-fixtures/github/${name}.json`, import.meta.url), 'utf8');

/** A GitHub delivery of `raw` as event `event`, signed, with the delivery id `id`. */
const github = (event: string, raw: string, id: string) => ({
  raw,
  headers: githubHookHeaders(SECRET, raw, event, id),
});

const count = async (s: TestService, sql: string, params: unknown[]) =>
  Number((await s.service.core.db.get<{ n: unknown }>(sql, params as never[]))?.n ?? 0);
const eventsOf = (s: TestService, providerId: string) =>
  count(s, 'SELECT COUNT(*) AS n FROM event_log WHERE provider_id = ?', [providerId]);

t.test('the core refuses replayed webhook deliveries', async (t) => {
  const s = await startService({ SERVICE_PLUGINS: `${TEST_PLUGINS},@herald/provider-codehost` });
  const sink = await startSink();
  t.teardown(async () => {
    await s.stop();
    await sink.close();
  });
  const token = s.admin.token;
  const ex = await exampleChain(s, sink.url);
  const code = (
    await s.request('POST', '/api/providers', {
      token,
      body: { kind: 'codehost', name: 'Repo', config: { host: 'github', webhook_secret: SECRET } },
    })
  ).body;
  const tr = (await s.request('POST', '/api/trackers', { token, body: { provider_id: code.id, name: 'Repo' } })).body;
  await s.request('PUT', `/api/trackers/${tr.id}/targets/${ex.target.id}`, { token });
  const codeHook = new URL(code.webhook_url).pathname;
  const send = (d: { raw: string; headers: Record<string, string> }) => s.request('POST', codeHook, d);
  const sendEx = (body: Record<string, unknown>) => s.request('POST', ex.hook, { body, headers: EXAMPLE_HOOK_HEADERS });
  /** A delivery of the example plugin that yields two events. */
  const twoEvents = (delivery: string) => ({
    type: 'thing_happened',
    payload: { name: 'a' },
    also: [{ type: 'alarm', payload: { name: 'b' } }],
    delivery,
  });
  /** A key as plugin_store holds it after the prune copied it off a deleted event (value 1). */
  const plant = (providerId: string, key: string, expiresAt: string | null) =>
    s.service.core.db.run('INSERT INTO plugin_store (instance_id, key, value, expires_at) VALUES (?, ?, ?, ?)', [
      providerId,
      key,
      '1',
      expiresAt,
    ]);

  await t.test('a redelivered single-event delivery: 409 and no second event', async (t) => {
    const d = github('push', fixture('push'), crypto.randomUUID());
    const first = await send(d);
    t.equal(first.status, 202, first.text);
    const before = await eventsOf(s, code.id);
    const again = await send(d);
    t.equal(again.status, 409, again.text);
    t.equal(again.body.code, 'replayed');
    t.match(again.body.detail, /already processed/);
    t.equal(await eventsOf(s, code.id), before, 'no second event');
    const log = await s.request('GET', `/api/providers/${code.id}/webhook-log`, { token });
    t.same(
      log.body.entries.slice(0, 2).map((e: { status_code: number }) => e.status_code),
      [409, 202],
      'the refusal is in the webhook log',
    );
  });

  await t.test('a redelivered no-event delivery (ping, an ignored event): 409', async (t) => {
    const before = await eventsOf(s, code.id);
    for (const [event, raw] of [
      ['ping', fixture('ping')],
      ['star', '{"action":"created"}'],
    ] as const) {
      const d = github(event, raw, crypto.randomUUID());
      const first = await send(d);
      t.equal(first.status, 200, `${event}: ${first.text}`);
      const again = await send(d);
      t.equal(again.status, 409, `${event} again: ${again.text}`);
      t.equal(again.body.code, 'replayed');
      t.match(again.body.detail, /already processed/);
    }
    t.equal(await eventsOf(s, code.id), before, 'no event recorded');
  });

  await t.test('a redelivered several-event delivery: 409 before the first of its events', async (t) => {
    const body = {
      type: 'thing_happened',
      payload: { name: 'one' },
      also: [
        { type: 'thing_happened', payload: { name: 'two' } },
        { type: 'alarm', payload: { name: 'three' } },
      ],
      delivery: crypto.randomUUID(),
    };
    const first = await sendEx(body);
    t.equal(first.status, 202, first.text);
    t.equal(first.body.event_ids.length, 3);
    const before = await eventsOf(s, ex.provider.id);
    const again = await sendEx(body);
    t.equal(again.status, 409, again.text);
    t.equal(again.body.code, 'replayed');
    t.equal(await eventsOf(s, ex.provider.id), before, 'none of its events written again');
    const other = await sendEx({ ...body, delivery: crypto.randomUUID() });
    t.equal(other.status, 202, 'another delivery id passes');
  });

  await t.test('a key only plugin_store holds refuses a delivery that now yields an event', async (t) => {
    const id = crypto.randomUUID();
    await plant(code.id, `delivery:${id}`, new Date(Date.now() + 86_400_000).toISOString());
    const before = await eventsOf(s, code.id);
    const r = await send(github('push', fixture('push'), id));
    t.equal(r.status, 409, r.text);
    t.equal(r.body.code, 'replayed');
    t.equal(await eventsOf(s, code.id), before, 'no event');
    // The same on a delivery of several events, and with a key that never expires.
    const delivery = crypto.randomUUID();
    await plant(ex.provider.id, `delivery:${delivery}`, null);
    const exBefore = await eventsOf(s, ex.provider.id);
    const several = await sendEx(twoEvents(delivery));
    t.equal(several.status, 409, several.text);
    const one = await sendEx({ type: 'thing_happened', payload: { name: 'a' }, delivery });
    t.equal(one.status, 409, one.text);
    t.equal(await eventsOf(s, ex.provider.id), exBefore, 'no event');
  });

  await t.test('an expired key lets the delivery through', async (t) => {
    const past = new Date(Date.now() - 1000).toISOString();
    const id = crypto.randomUUID();
    await plant(code.id, `delivery:${id}`, past);
    const r = await send(github('push', fixture('push'), id));
    t.equal(r.status, 202, r.text);
    const delivery = crypto.randomUUID();
    await plant(ex.provider.id, `delivery:${delivery}`, past);
    const several = await sendEx(twoEvents(delivery));
    t.equal(several.status, 202, several.text);
    t.equal(several.body.event_ids.length, 2);
    // The key a delivery held moves to the event that took it: a redelivery of that one is refused.
    t.equal((await sendEx({ type: 'thing_happened', payload: { name: 'a' }, delivery })).status, 409);
  });

  await t.test('events that carried no change: a held key is still refused (409, not 200)', async (t) => {
    // Nothing in the pipeline records no event for a valid one today; the relay is made to, as a rule that drops an
    // event carrying no change would.
    const relay = s.service.core.services.get('relay') as { ingestWith: (...a: unknown[]) => Promise<unknown> };
    const ingestWith = relay.ingestWith;
    relay.ingestWith = async () => ({ eventIds: [], queued: false, deferredUsers: [], handed: [] });
    t.teardown(() => {
      relay.ingestWith = ingestWith;
    });
    const body = { type: 'thing_happened', payload: { name: 'same' }, delivery: crypto.randomUUID() };
    const first = await sendEx(body);
    t.equal(first.status, 200, first.text);
    t.same(first.body.event_ids, []);
    const again = await sendEx(body);
    t.equal(again.status, 409, again.text);
    t.equal(again.body.code, 'replayed');
  });
});
