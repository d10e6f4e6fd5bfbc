import t from 'tap';
import { startService, startSink, TEST_PLUGINS } from '../helpers/service.ts';
import { settled } from '../helpers/settle.ts';

const FIRST_PARTY = [
  'provider-bridge-self',
  'provider-codehost',
  'provider-homeassistant',
  'provider-immich',
  'provider-nut',
  'provider-planka',
  'provider-webhook',
];

t.test('every event type of every first-party provider has an example valid against its payload schema', async (t) => {
  const s = await startService({
    SERVICE_PLUGINS: [...new Set([...TEST_PLUGINS.split(','), ...FIRST_PARTY.map((d) => `@herald/${d}`)])].join(','),
  });
  t.teardown(() => s.stop());
  const providers = [...s.service.core.plugins.plugins.values()].filter(
    (p) => p.kind === 'provider' && p.packageName.startsWith('@herald/'),
  );
  t.equal(providers.length, FIRST_PARTY.length, 'all first-party providers loaded');
  for (const p of providers) {
    const events = (p.def.manifest as { events?: Record<string, { example?: Record<string, unknown> }> }).events ?? {};
    t.ok(Object.keys(events).length > 0, `${p.id} declares events`);
    for (const [type, spec] of Object.entries(events)) {
      t.type(spec.example, 'object', `${p.id} ${type}: has an example`);
      t.equal(
        s.service.core.plugins.validateEvent(p.id, { type, payload: spec.example ?? {} }),
        undefined,
        `${p.id} ${type}: the example is valid`,
      );
    }
  }
});

t.test(
  'test events: through the pipeline to the linked targets, marked as tests, owner-isolated and rate-limited',
  async (t) => {
    const s = await startService();
    const sink = await startSink();
    const other = await startSink();
    t.teardown(async () => {
      await s.stop();
      await sink.close();
      await other.close();
    });
    const token = s.admin.token;
    const p = (
      await s.request('POST', '/api/providers', {
        token,
        body: { kind: 'example', name: 'Ex', config: { shared_token: 'sharedtoken1' } },
      })
    ).body;
    const tr1 = (await s.request('POST', '/api/trackers', { token, body: { provider_id: p.id, name: 'One' } })).body;
    const tr2 = (
      await s.request('POST', '/api/trackers', {
        token,
        body: { provider_id: p.id, name: 'Two', event_types: { thing_happened: false } },
      })
    ).body;
    const en = (
      await s.request('POST', '/api/targets', {
        token,
        body: { kind: 'recorder', name: 'EN', config: { url: sink.url }, locale: 'en' },
      })
    ).body;
    const ru = (
      await s.request('POST', '/api/targets', {
        token,
        body: { kind: 'recorder', name: 'RU', config: { url: other.url }, locale: 'ru' },
      })
    ).body;
    t.equal((await s.request('PUT', `/api/trackers/${tr1.id}/targets/${en.id}`, { token })).status < 300, true);
    t.equal((await s.request('PUT', `/api/trackers/${tr2.id}/targets/${ru.id}`, { token })).status < 300, true);

    // A tracker's test: only its own targets; the default type is the first one it passes on.
    const one = await s.request('POST', `/api/trackers/${tr1.id}/test-event`, { token });
    t.equal(one.status, 200, one.text);
    t.match(one.body, { event_type: 'thing_happened', test: true, deliveries: [{ target_id: en.id }] });
    t.equal(one.body.deliveries.length, 1, "only the tracker's target");
    const got = await sink.waitFor(1);
    t.equal(got.length, 1, 'the linked target received it');
    t.equal(
      got[0].body.title,
      '[Test] Thing: ',
      'the title carries the test marker (sample built from the schema: empty name)',
    );
    t.equal(got[0].body.test, true, 'the message says it is a test');
    t.equal(got[0].body.eventId, one.body.event_id);
    // Settled: every delivery of the test event is sent; it has none to the other tracker's target.
    t.same(
      (await settled(s, [one.body.event_id])).map((d) => [d.target_id, d.status]),
      [[en.id, 'sent']],
      'one delivery, sent',
    );
    t.equal(other.received.length, 0, "the other tracker's target got nothing");
    const logged = await s.request('GET', `/api/events/${one.body.event_id}`, { token });
    t.match(
      logged.body,
      { test: true, event_type: 'thing_happened', provider_id: p.id, tracker_ids: [tr1.id] },
      'the event log marks it as a test',
    );

    // thing_happened is off on tracker Two: its default is the next declared type; Russian marker.
    const two = await s.request('POST', `/api/trackers/${tr2.id}/test-event`, { token, body: {} });
    t.equal(two.body.event_type, 'alarm');
    const ruGot = await other.waitFor(1);
    t.equal(ruGot[0]?.body.title, '[Тест] ТРЕВОГА ', 'Russian target: Russian marker and template');

    // A provider's test: every tracker's targets (tracker rules still apply).
    const all = await s.request('POST', `/api/providers/${p.id}/test-event`, { token, body: { event_type: 'alarm' } });
    t.equal(all.status, 200, all.text);
    t.same(all.body.deliveries.map((d: any) => d.target_id).sort(), [en.id, ru.id].sort(), "both trackers' targets");
    await sink.waitFor(2);
    await other.waitFor(2);
    t.equal(sink.received[1]?.body.title, '[Test] ALARM ');
    t.equal(other.received[1]?.body.title, '[Тест] ТРЕВОГА ');

    // The self-monitoring provider (first party) sends its own example.
    const self = (await s.request('GET', '/api/providers', { token })).body.providers.find(
      (x: any) => x.kind === 'bridge_self',
    );
    const selfTr = (await s.request('POST', '/api/trackers', { token, body: { provider_id: self.id, name: 'Self' } }))
      .body;
    await s.request('PUT', `/api/trackers/${selfTr.id}/targets/${en.id}`, { token });
    const selfTest = await s.request('POST', `/api/trackers/${selfTr.id}/test-event`, {
      token,
      body: { event_type: 'bridge_self_target_failures' },
    });
    t.equal(selfTest.status, 200, selfTest.text);
    await sink.waitFor(3);
    t.equal(
      sink.received[2]?.body.title,
      '[Test] Target unreachable: Family chat',
      "the plugin's example payload is rendered",
    );

    // Ordinary events are not tests.
    const hook = await s.request('POST', new URL(p.webhook_url).pathname, {
      headers: { 'x-example-token': 'sharedtoken1' },
      body: { type: 'thing_happened', payload: { name: 'real' } },
    });
    t.ok(hook.status < 300, `webhook accepted (${hook.status})`);
    const events = (await s.request('GET', `/api/events?provider_id=${p.id}&event_type=thing_happened`, { token })).body
      .events;
    t.same(
      events.map((e: any) => e.test),
      [false, true],
      'the event from the source has test: false, the test event true',
    );
    await sink.waitFor(4);
    t.equal(sink.received[3]?.body.title, 'Thing: real', 'no marker on a real event');
    t.notOk(sink.received[3]?.body.test, 'not a test message');

    // Problems: an undeclared type, someone else's provider or tracker.
    const bad = await s.request('POST', `/api/trackers/${tr1.id}/test-event`, { token, body: { event_type: 'nope' } });
    t.equal(bad.status, 422);
    t.match(bad.body, { code: 'unknown_event_type', params: { event_type: 'nope', kind: 'example' } });
    t.equal(
      (await s.request('POST', `/api/trackers/${tr1.id}/test-event`, { token, body: { extra: 1 } })).status,
      422,
      'unknown body fields refused',
    );
    const stranger = await s.user();
    t.equal(
      (await s.request('POST', `/api/trackers/${tr1.id}/test-event`, { token: stranger.token })).status,
      404,
      "another user's tracker: 404",
    );
    t.equal(
      (await s.request('POST', `/api/providers/${p.id}/test-event`, { token: stranger.token })).status,
      404,
      "another user's provider: 404",
    );
    t.equal((await s.request('POST', `/api/providers/${p.id}/test-event`)).status, 401, 'no token');

    // Rate limit: ten a minute per user (four used above).
    s.clock.set(new Date());
    let status = 0;
    let n = 0;
    for (; n < 10; n++) {
      const r = await s.request('POST', `/api/providers/${p.id}/test-event`, {
        token,
        body: { event_type: 'stale_thing' },
      });
      status = r.status;
      if (r.status === 429) {
        t.match(r.body, { code: 'test_event_throttled', params: { limit: 10 } });
        t.ok(Number(r.headers.get('retry-after')) >= 1, 'Retry-After');
        break;
      }
    }
    t.equal(status, 429, 'throttled within the minute');
    t.equal(n, 6, 'after ten in the minute');
    const strangerP = (
      await s.request('POST', '/api/providers', {
        token: stranger.token,
        body: { kind: 'example', name: 'Mine', config: { shared_token: 'sharedtoken2' } },
      })
    ).body;
    t.equal(
      (await s.request('POST', `/api/providers/${strangerP.id}/test-event`, { token: stranger.token })).status,
      200,
      'another user has a budget of their own',
    );
    s.clock.advance(61_000);
    t.equal(
      (await s.request('POST', `/api/providers/${p.id}/test-event`, { token, body: { event_type: 'stale_thing' } }))
        .status,
      200,
      'a minute later it works again',
    );
  },
);
