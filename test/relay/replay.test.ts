/**
 * Replay from the event log through the real service: a dry run renders the first messages per
 * target with TODAY's templates in the target's language and queues nothing; a replay goes through
 * the durable queue to a target the event never had (a new delivery) and to one it had (a new
 * attempt, like a resend), reaches each sink once, and is recorded in the event's history with
 * who did it. Foreign targets and events are 404s, a disabled target a 409, and one request takes
 * at most 500 events.
 */
import t from 'tap';
import { newId } from '../../core/src/http/ids.ts';
import { providerRowFrom } from '../../core/src/plugins/host.ts';
import type { ProviderDbRow } from '../../core/src/relay/definitions/provider.ts';
import { startService, startSink, type TestService } from '../helpers/service.ts';
import { settled } from '../helpers/settle.ts';

type Relay = { ingest(p: unknown, e: unknown): Promise<string[]>; tick(): Promise<void> };

const target = async (s: TestService, token: string, name: string, url: string, locale: 'en' | 'ru') => {
  const r = await s.request('POST', '/api/targets', {
    token,
    body: { kind: 'recorder', name, config: { url }, locale },
  });
  if (r.status !== 201) throw new Error(`target: ${r.status} ${r.text}`);
  return r.body as { id: string };
};

t.test('replay from the event log', async (t) => {
  const s = await startService();
  const old = await startSink();
  const fresh = await startSink();
  t.teardown(async () => {
    await s.stop();
    await old.close();
    await fresh.close();
  });
  const token = s.admin.token;
  const relay = s.service.core.services.get('relay') as Relay;
  const tick = () => relay.tick();
  const tOld = await target(s, token, 'Old sink', old.url, 'en');
  const tNew = await target(s, token, 'New sink', fresh.url, 'ru');
  const p = (
    await s.request('POST', '/api/providers', {
      token,
      body: { kind: 'example', name: 'Source', config: { shared_token: 'sharedtoken1' } },
    })
  ).body;
  const tr = (await s.request('POST', '/api/trackers', { token, body: { provider_id: p.id, name: 'Source tracker' } }))
    .body;
  t.equal((await s.request('PUT', `/api/trackers/${tr.id}/targets/${tOld.id}`, { token })).status < 300, true);
  const row = await s.service.core.db.get<ProviderDbRow>('SELECT * FROM providers WHERE id = ?', [p.id]);
  const emit = async (type: string, payload: Record<string, unknown>) =>
    (await relay.ingest(providerRowFrom(row!), { type, payload }))[0]!;

  const first = await emit('alarm', { name: 'one' });
  const second = await emit('thing_happened', { name: 'two' });
  await tick();
  await old.waitFor(2);
  t.same(
    old.received.map((r) => r.body.title),
    ['ALARM one', 'Thing: two'],
    'the events went to the linked target when they happened',
  );

  // Today's template, saved after the events: the replay renders with it, not with what was sent then.
  const at = new Date().toISOString();
  await s.service.core.db.run(
    'INSERT INTO templates (id, user_id, event_type, locale, title, body, created_at, updated_at) VALUES (?, ?, ' +
      '?, ?, ?, ?, ?, ?)',
    [newId(), s.admin.id, 'alarm', 'ru', 'НОВОЕ {{name}}', 'новый текст {{name}}', at, at],
  );

  await t.test("a dry run renders today's text in the target's language and queues nothing", async (t) => {
    const r = await s.request('POST', '/api/events/replay', {
      token,
      body: { event_ids: [second, first], target_ids: [tNew.id], dry_run: true },
    });
    t.equal(r.status, 200, r.text);
    t.equal(r.body.dry_run, true);
    t.equal(r.body.events, 2);
    t.equal(r.body.targets.length, 1);
    t.match(r.body.targets[0], { target_id: tNew.id, target_name: 'New sink', locale: 'ru', format: 'html' });
    t.match(
      r.body.targets[0].messages,
      [
        { event_id: first, event_type: 'alarm', plain_title: 'НОВОЕ one', plain_body: 'новый текст one' },
        { event_id: second, event_type: 'thing_happened', plain_title: 'Событие: two', plain_body: 'Произошло two' },
      ],
      "oldest first, the user's new template for alarm, the default Russian one otherwise",
    );
    const en = await s.request('POST', '/api/events/replay', {
      token,
      body: { event_ids: [first], target_ids: [tOld.id], dry_run: true },
    });
    t.equal(en.body.targets[0].messages[0].plain_title, 'ALARM one', 'an English target gets the English template');
    const queued = await s.service.core.db.all('SELECT id FROM deliveries WHERE target_id = ?', [tNew.id]);
    t.same(queued, [], 'nothing queued');
    await tick();
    t.equal(fresh.received.length, 0, 'nothing sent');
    const filtered = await s.request('POST', '/api/events/replay', {
      token,
      body: { filter: { event_type: 'alarm', provider_id: p.id }, target_ids: [tNew.id], dry_run: true },
    });
    t.equal(filtered.status, 200, filtered.text);
    t.equal(filtered.body.events, 1, 'by filter');
    t.same(
      filtered.body.targets[0].messages.map((m: any) => m.event_id),
      [first],
    );
  });

  await t.test('a replay to a new target reaches it once, through the queue, recorded with who did it', async (t) => {
    const r = await s.request('POST', '/api/events/replay', {
      token,
      body: { event_ids: [first, second], target_ids: [tNew.id] },
    });
    t.equal(r.status, 202, r.text);
    t.match(r.body, { dry_run: false, events: 2, queued: 2, added: 2, replaced: 0, skipped: [] });
    const waiting = await s.service.core.db.all(
      `SELECT status FROM deliveries WHERE target_id = ? AND status = 'queued'`,
      [tNew.id],
    );
    t.ok(waiting.length <= 2, 'written to the deliveries queue');
    await tick();
    // Until both deliveries are recorded (sent only after the sink answered), not a fixed 300 ms: under load the
    // service marked them later, and a late duplicate would be counted below.
    await settled(s, [first, second]);
    t.equal(fresh.received.length, 2, 'each event reached the new sink once');
    t.same(
      fresh.received.map((x) => x.body.title),
      ['НОВОЕ one', 'Событие: two'],
      "rendered at send time with today's template, in Russian",
    );
    t.equal(old.received.length, 2, 'the old target was not sent to');
    const ev = (await s.request('GET', `/api/events/${first}`, { token })).body;
    const d = ev.deliveries.find((x: any) => x.target_id === tNew.id);
    t.match(d, { status: 'sent', attempts: 1 });
    t.equal(fresh.received[0].headers['idempotency-key'], d.id, "under the new delivery's id");
    t.equal(ev.dispatch_status, 'dispatched');
    t.match(ev.history, [
      {
        action: 'replay',
        actor_id: s.admin.id,
        actor_email: s.admin.email,
        target_id: tNew.id,
        target_name: 'New sink',
        delivery_id: d.id,
        previous_delivery_id: null,
        previous: { status: 'none' },
      },
    ]);
    t.match(ev.history[0].at, /^\d{4}-/);
  });

  await t.test('a replay to a target the event had is a new attempt of that delivery', async (t) => {
    const before = (await s.request('GET', `/api/events/${first}`, { token })).body.deliveries.find(
      (x: any) => x.target_id === tOld.id,
    );
    const r = await s.request('POST', '/api/events/replay', {
      token,
      body: { event_ids: [first], target_ids: [tOld.id] },
    });
    t.equal(r.status, 202, r.text);
    t.match(r.body, { queued: 1, added: 0, replaced: 1 });
    await tick();
    await settled(s, [first]);
    t.equal(old.received.length, 3, 'sent once more');
    t.equal(old.received[2].body.title, 'ALARM one');
    const ev = (await s.request('GET', `/api/events/${first}`, { token })).body;
    const after = ev.deliveries.find((x: any) => x.target_id === tOld.id);
    t.not(after.id, before.id, 'under a new delivery id');
    t.equal(ev.deliveries.length, 2, 'still one delivery per target');
    t.match(ev.history.at(-1), {
      action: 'replay',
      actor_email: s.admin.email,
      target_id: tOld.id,
      delivery_id: after.id,
      previous_delivery_id: before.id,
      previous: { status: 'sent', attempts: 1 },
    });
  });

  await t.test('refusals: foreign and disabled targets, foreign events, no selection, nothing matching', async (t) => {
    const other = await s.user();
    const otherSink = await target(s, other.token, 'Theirs', fresh.url, 'en');
    const foreign = await s.request('POST', '/api/events/replay', {
      token,
      body: { event_ids: [first], target_ids: [otherSink.id] },
    });
    t.equal(foreign.status, 404, "another user's target is not found");
    t.equal(foreign.body.code, 'not_found');
    const mixed = await s.request('POST', '/api/events/replay', {
      token,
      body: { event_ids: [first], target_ids: [tNew.id, otherSink.id], dry_run: true },
    });
    t.equal(mixed.status, 404, "even among the caller's own, and in a dry run");
    const theirs = await s.request('POST', '/api/events/replay', {
      token: other.token,
      body: { event_ids: [first], target_ids: [otherSink.id], dry_run: true },
    });
    t.equal(theirs.status, 404, "another user's event is not found");
    const filterOnly = await s.request('POST', '/api/events/replay', {
      token: other.token,
      body: { filter: {}, target_ids: [otherSink.id], dry_run: true },
    });
    t.equal(filterOnly.status, 200);
    t.equal(filterOnly.body.events, 0, "a filter sees only the caller's events");
    const nothing = await s.request('POST', '/api/events/replay', {
      token: other.token,
      body: { filter: {}, target_ids: [otherSink.id] },
    });
    t.equal(nothing.status, 409);
    t.equal(nothing.body.code, 'nothing_to_replay');
    const none = await s.request('POST', '/api/events/replay', { token, body: { target_ids: [tNew.id] } });
    t.equal(none.status, 422);
    t.equal(none.body.code, 'replay_no_selection');
    const bogus = await s.request('POST', '/api/events/replay', {
      token,
      body: { filter: { dispatch_status: 'bogus' }, target_ids: [tNew.id], dry_run: true },
    });
    t.equal(bogus.status, 422, 'the filter takes the dispatch statuses the event log has');
    t.equal((await s.request('PATCH', `/api/targets/${tNew.id}`, { token, body: { enabled: false } })).status, 200);
    const off = await s.request('POST', '/api/events/replay', {
      token,
      body: { event_ids: [first], target_ids: [tNew.id] },
    });
    t.equal(off.status, 409);
    t.equal(off.body.code, 'target_disabled');
    t.same(off.body.params, { target: 'New sink' });
    t.equal((await s.request('PATCH', `/api/targets/${tNew.id}`, { token, body: { enabled: true } })).status, 200);
    t.equal(
      (await s.request('POST', '/api/events/replay', { body: { event_ids: [first], target_ids: [tNew.id] } })).status,
      401,
    );
    await tick();
    t.equal(fresh.received.length, 2, 'no refused request sent anything');
  });

  await t.test('at most 500 events per request', async (t) => {
    const ids = Array.from({ length: 501 }, () => newId());
    const many = await s.request('POST', '/api/events/replay', {
      token,
      body: { event_ids: ids, target_ids: [tNew.id], dry_run: true },
    });
    t.equal(many.status, 422, 'more than 500 ids is refused by the schema');
    const at = new Date(Date.now() - 3600_000).toISOString();
    await s.service.core.db.tx(async (q) => {
      for (const id of ids) {
        await q.run(
          'INSERT INTO event_log (id, user_id, provider_id, provider_kind, event_type, severity, payload, ' +
            `dispatch_status, occurred_at, created_at)
          VALUES (?, ?, ?, 'example', 'stale_thing', 'info', ?, 'dropped', ?, ?)`,
          [id, s.admin.id, p.id, { name: 'bulk' }, at, at],
        );
      }
    });
    const r = await s.request('POST', '/api/events/replay', {
      token,
      body: { filter: { event_type: 'stale_thing' }, target_ids: [tNew.id] },
    });
    t.equal(r.status, 422, r.text);
    t.equal(r.body.code, 'replay_over_limit');
    t.same(r.body.params, { count: 501, limit: 500 });
    const narrow = await s.request('POST', '/api/events/replay', {
      token,
      body: {
        filter: { event_type: 'stale_thing', since: new Date(Date.now() - 60_000).toISOString() },
        target_ids: [tNew.id],
        dry_run: true,
      },
    });
    t.equal(narrow.body.events, 0, 'a narrower time range takes none of them');
    const onlyIds = await s.request('POST', '/api/events/replay', {
      token,
      body: { event_ids: ids.slice(0, 3), filter: { event_type: 'stale_thing' }, target_ids: [tNew.id], dry_run: true },
    });
    t.equal(onlyIds.body.events, 3, 'ids and a filter together: the events matching both');
    t.equal(onlyIds.body.targets[0].messages[0].plain_title, 'Устарело bulk');
    const queued = await s.service.core.db.get<{ n: number }>(
      `SELECT COUNT(*) AS n FROM deliveries WHERE event_id IN (${ids
        .slice(0, 3)
        .map(() => '?')
        .join(',')})`,
      ids.slice(0, 3),
    );
    t.equal(Number(queued!.n), 0, 'the refused and dry requests queued nothing');
  });
});
