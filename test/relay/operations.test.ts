/**
 * Relay operations through the real service: the event log's readable message and filters, resend
 * of one delivery or of all failed ones (through the queue, recorded in the event's history, owner
 * isolated, refused when there is nothing to resend or the target is gone), deferred send-now and
 * drop, and the templates list and preview.
 */
import t from 'tap';
import { providerRowFrom } from '../../core/src/plugins/host.ts';
import type { ProviderDbRow } from '../../core/src/relay/definitions/provider.ts';
import { Dispatcher } from '../../core/src/relay/pipeline/dispatcher.ts';
import { startService, startSink, type TestService } from '../helpers/service.ts';
import { settled } from '../helpers/settle.ts';

/** A quiet window around the present, in UTC, so deferrable events are deferred now. */
function windowAroundNow(): { start: string; end: string; timezone: string } {
  const hhmm = (ms: number) => new Date(ms).toISOString().slice(11, 16);
  return { start: hhmm(Date.now() - 3600_000), end: hhmm(Date.now() + 3600_000), timezone: 'UTC' };
}

type Relay = { ingest(p: unknown, e: unknown): Promise<string[]>; tick(): Promise<void> };

async function provider(s: TestService, token: string, name: string, quiet: boolean, targetIds: string[]) {
  const p = (
    await s.request('POST', '/api/providers', {
      token,
      body: { kind: 'example', name, config: { shared_token: 'sharedtoken1' } },
    })
  ).body;
  const tr = (
    await s.request('POST', '/api/trackers', {
      token,
      body: { provider_id: p.id, name: `${name} tracker`, ...(quiet ? { quiet_hours: windowAroundNow() } : {}) },
    })
  ).body;
  for (const id of targetIds)
    if ((await s.request('PUT', `/api/trackers/${tr.id}/targets/${id}`, { token })).status >= 300)
      throw new Error('link failed');
  const row = await s.service.core.db.get<ProviderDbRow>('SELECT * FROM providers WHERE id = ?', [p.id]);
  const relay = s.service.core.services.get('relay') as Relay;
  return {
    p,
    tr,
    emit: async (type: string, payload: Record<string, unknown>) =>
      (await relay.ingest(providerRowFrom(row!), { type, payload }))[0]!,
  };
}

const target = async (s: TestService, token: string, name: string, url: string) =>
  (await s.request('POST', '/api/targets', { token, body: { kind: 'recorder', name, config: { url }, locale: 'en' } }))
    .body as { id: string };

t.test('relay operations', async (t) => {
  const s = await startService();
  const good = await startSink();
  const bad = await startSink();
  const gone = await startSink();
  t.teardown(async () => {
    await s.stop();
    await good.close();
    await bad.close();
    await gone.close();
  });
  const token = s.admin.token;
  const relay = s.service.core.services.get('relay') as Relay;
  const tick = () => relay.tick();
  bad.respond(400);
  gone.respond(400);
  const tGood = await target(s, token, 'Good sink', good.url);
  const tBad = await target(s, token, 'Bad sink', bad.url);
  const tGone = await target(s, token, 'Gone sink', gone.url);
  const loud = await provider(s, token, 'Loud', false, [tGood.id, tBad.id]);
  const quiet = await provider(s, token, 'Quiet', true, [tGood.id]);
  const doomed = await provider(s, token, 'Doomed', false, [tGone.id]);

  const before = new Date(Date.now() - 1000).toISOString();
  const alarmId = await loud.emit('alarm', { name: 'smoke', api_key: 'abc-secret-123' });
  await tick();
  t.equal(good.received.length, 1, 'the good sink got the alarm');
  t.equal(bad.received.length, 0, 'the bad sink refused it');

  await t.test('the message column and the filters', async (t) => {
    const all = await s.request('GET', '/api/events', { token });
    t.equal(all.status, 200);
    const alarm = all.body.events.find((e: any) => e.id === alarmId);
    t.equal(alarm.message, 'ALARM smoke', "the title rendered in the caller's language");
    t.equal(alarm.provider_name, 'Loud');
    t.equal(alarm.dispatch_status, 'partial');
    t.match(alarm.deliveries, [
      { target_name: 'Good sink', status: 'sent', attempts: 1 },
      { target_name: 'Bad sink', status: 'failed', last_status_code: 400, last_error: /400/ },
    ]);
    t.ok(
      alarm.deliveries.every((d: any) => typeof d.id === 'string'),
      'deliveries carry their ids',
    );
    t.same(alarm.history, []);
    const ru = await s.request('GET', `/api/events/${alarmId}?locale=ru`, { token });
    t.equal(ru.body.message, 'ТРЕВОГА smoke', 'in Russian on request');
    // A user's own template is what the message shows.
    const long = 'x'.repeat(500);
    await s.service.core.db.run(
      'INSERT INTO templates (id, user_id, event_type, locale, title, body, created_at, updated_at) VALUES (?, ?, ' +
        '?, ?, ?, ?, ?, ?)',
      ['01900000-0000-7000-8000-0000000000a1', s.admin.id, 'alarm', 'ru', `{{name}} ${long}`, '', before, before],
    );
    const mine = (await s.request('GET', `/api/events/${alarmId}?locale=ru`, { token })).body.message as string;
    t.ok(mine.startsWith('smoke xxx'), "the user's own template wins");
    t.equal(mine.length, 200, 'the message is bounded');
    t.ok(mine.endsWith('…'));
    await s.service.core.db.run('UPDATE templates SET title = ?, locale = ? WHERE user_id = ?', [
      '{{#if name}}unclosed',
      'en',
      s.admin.id,
    ]);
    const broken = await s.request('GET', `/api/events/${alarmId}`, { token });
    t.equal(broken.body.message, 'ALARM smoke', 'an own template that does not parse falls back to the default');
    await s.service.core.db.run('DELETE FROM templates WHERE user_id = ?', [s.admin.id]);

    const ids = async (q: string) =>
      (await s.request('GET', `/api/events?${q}`, { token })).body.events.map((e: any) => e.id);
    t.same(await ids('event_type=alarm'), [alarmId], 'by type');
    t.same(await ids('event_type=thing_happened'), [], 'by another type');
    t.same(await ids(`provider_id=${quiet.p.id}`), [], 'by provider');
    t.same(await ids(`provider_id=${loud.p.id}&dispatch_status=partial`), [alarmId], 'by provider and status');
    t.same(await ids('dispatch_status=failed'), [], 'by status');
    t.same(await ids(`since=${encodeURIComponent(before)}`), [alarmId], 'since');
    t.same(await ids(`until=${encodeURIComponent(before)}`), [], 'until');
    t.same(await ids(`since=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`), [], 'since later');
    t.equal((await s.request('GET', '/api/events?since=yesterday', { token })).status, 422, 'a time must be ISO 8601');
  });

  await t.test('resend all failed deliveries, then one sent delivery', async (t) => {
    const ev = (await s.request('GET', `/api/events/${alarmId}`, { token })).body;
    const failed = ev.deliveries.find((d: any) => d.status === 'failed');
    const sent = ev.deliveries.find((d: any) => d.status === 'sent');
    bad.respond(200);
    const r = await s.request('POST', `/api/events/${alarmId}/resend`, { token, body: {} });
    t.equal(r.status, 202, r.text);
    t.equal(r.body.resent.length, 1, 'only the failed delivery');
    t.equal(r.body.resent[0].previous_delivery_id, failed.id);
    t.equal(r.body.resent[0].target_id, tBad.id);
    const newId = r.body.resent[0].delivery_id;
    t.not(newId, failed.id, 'a new attempt under a new delivery id');
    await tick();
    // Until the resend is recorded (sent only after the sink answered), not a fixed 300 ms: under load the service
    // recorded it later, and a late duplicate would be counted below.
    await settled(s, [alarmId]);
    t.equal(bad.received.length, 1, 'the resend reached the sink once');
    t.equal(bad.received[0].headers['idempotency-key'], newId, 'carrying the new delivery id');
    t.equal(bad.received[0].body.title, 'ALARM smoke');
    t.equal(good.received.length, 1, 'the sent delivery was not sent again');
    const after = (await s.request('GET', `/api/events/${alarmId}`, { token })).body;
    t.equal(after.dispatch_status, 'dispatched', 'the event status follows');
    t.match(
      after.deliveries.find((d: any) => d.target_id === tBad.id),
      { id: newId, status: 'sent', attempts: 1, last_error: null },
    );
    t.match(
      after.history,
      [
        {
          action: 'resend',
          actor_email: s.admin.email,
          target_id: tBad.id,
          target_name: 'Bad sink',
          delivery_id: newId,
          previous_delivery_id: failed.id,
          previous: { status: 'failed', attempts: 1, last_status_code: 400, last_error: /400/ },
        },
      ],
      'the old attempt is kept in the history',
    );

    const none = await s.request('POST', `/api/events/${alarmId}/resend`, { token, body: {} });
    t.equal(none.status, 409);
    t.equal(none.body.code, 'nothing_to_resend');

    const one = await s.request('POST', `/api/events/${alarmId}/resend`, { token, body: { delivery_id: sent.id } });
    t.equal(one.status, 202, one.text);
    await tick();
    await good.waitFor(2);
    t.equal(good.received.length, 2, 'a sent delivery is sent once more on request');
    t.equal(bad.received.length, 1, 'and only that one');
    t.equal((await s.request('GET', `/api/events/${alarmId}`, { token })).body.history.length, 2);
    const stale = await s.request('POST', `/api/events/${alarmId}/resend`, { token, body: { delivery_id: sent.id } });
    t.equal(stale.status, 404, 'the replaced delivery id is gone');
    t.equal(
      (
        await s.request('POST', `/api/events/${alarmId}/resend`, {
          token,
          body: { delivery_id: '01900000-0000-7000-8000-000000000000' },
        })
      ).status,
      404,
    );
  });

  await t.test('a deleted target leaves nothing to resend to', async (t) => {
    const id = await doomed.emit('alarm', { name: 'fire' });
    await tick();
    t.equal((await s.request('GET', `/api/events/${id}`, { token })).body.dispatch_status, 'failed');
    t.equal((await s.request('DELETE', `/api/targets/${tGone.id}`, { token })).status, 204);
    const r = await s.request('POST', `/api/events/${id}/resend`, { token, body: {} });
    t.equal(r.status, 409);
    t.equal(r.body.code, 'target_deleted');
    t.same(r.body.params, { target_ids: [tGone.id] });
  });

  let deferredEvent = '';
  await t.test('deferred: send now and drop', async (t) => {
    deferredEvent = await quiet.emit('thing_happened', { name: 'door' });
    const dropEvent = await quiet.emit('thing_happened', { name: 'window' });
    await tick();
    const sentBefore = good.received.length;
    const list = (await s.request('GET', '/api/deferred', { token })).body.deferred;
    t.equal(list.length, 2);
    const door = list.find((d: any) => d.event_id === deferredEvent);
    const window = list.find((d: any) => d.event_id === dropEvent);
    t.equal(door.message, 'Thing: door', 'the deferred list shows the message');
    t.equal(
      (await s.request('GET', '/api/deferred?locale=ru', { token })).body.deferred.find(
        (d: any) => d.event_id === deferredEvent,
      ).message,
      'Событие: door',
    );
    const resendDeferred = await s.request('POST', `/api/events/${deferredEvent}/resend`, {
      token,
      body: { delivery_id: door.delivery_id },
    });
    t.equal(resendDeferred.status, 409, 'a deferred delivery is not resent');
    t.equal(resendDeferred.body.code, 'delivery_not_resendable');
    t.same(resendDeferred.body.params, { status: 'deferred' });

    const now = await s.request('POST', `/api/deferred/${door.delivery_id}/send-now`, { token });
    t.equal(now.status, 202, now.text);
    t.match(now.body, { delivery_id: door.delivery_id, event_id: deferredEvent, status: 'queued' });
    t.same(
      (await s.request('GET', '/api/deferred', { token })).body.deferred.map((d: any) => d.event_id),
      [dropEvent],
      'it left the deferred list',
    );
    await tick();
    await good.waitFor(sentBefore + 1);
    t.equal(good.received.length, sentBefore + 1, 'it reached the sink');
    t.equal(good.received.at(-1).body.title, 'Thing: door');
    const ev = (await s.request('GET', `/api/events/${deferredEvent}`, { token })).body;
    t.equal(ev.dispatch_status, 'dispatched');
    t.match(ev.history, [{ action: 'send_now', delivery_id: door.delivery_id, previous: { status: 'deferred' } }]);
    const again = await s.request('POST', `/api/deferred/${door.delivery_id}/send-now`, { token });
    t.equal(again.status, 409);
    t.equal(again.body.code, 'not_deferred');

    const drop = await s.request('POST', `/api/deferred/${window.delivery_id}/drop`, { token });
    t.equal(drop.status, 200, drop.text);
    t.equal(drop.body.status, 'dropped');
    t.same((await s.request('GET', '/api/deferred', { token })).body.deferred, [], 'nothing waits any more');
    await tick();
    t.equal(good.received.length, sentBefore + 1, 'a dropped delivery is not sent');
    const dropped = (await s.request('GET', `/api/events/${dropEvent}`, { token })).body;
    t.equal(dropped.dispatch_status, 'dropped');
    t.match(dropped.history, [{ action: 'drop', previous: { status: 'deferred' } }]);
    t.equal((await s.request('POST', `/api/deferred/${window.delivery_id}/drop`, { token })).body.code, 'not_deferred');
  });

  await t.test('templates and their preview', async (t) => {
    const list = await s.request('GET', '/api/templates', { token });
    t.equal(list.status, 200);
    const thing = list.body.templates.find(
      (x: any) => x.provider_kind === 'example' && x.event_type === 'thing_happened',
    );
    t.match(thing, {
      provider_name: 'Example (third party)',
      severity: 'info',
      locales: {
        en: { default: { title: 'Thing: {{name}}' }, fallback: false, override: null },
        ru: { default: { title: 'Событие: {{name}}' }, fallback: false },
      },
    });
    t.match(thing.last_event_at, /^\d{4}-\d\d-\d\dT/, 'when the last event of the type occurred');
    t.equal(
      list.body.templates.find((x: any) => x.event_type === 'stale_thing').last_event_at,
      null,
      'none yet: the client asks for no preview',
    );
    const en = await s.request('GET', '/api/templates/thing_happened/preview?locale=en', { token });
    t.equal(en.status, 200, en.text);
    t.match(en.body, {
      event_type: 'thing_happened',
      locale: 'en',
      event_id: /./,
      title: 'Thing: window',
      own_template: false,
      provider_name: 'Quiet',
    });
    const ru = await s.request('GET', '/api/templates/thing_happened/preview?locale=ru', { token });
    t.match(
      ru.body,
      { locale: 'ru', title: 'Событие: window', body: 'Произошло window' },
      'rendered from the last event of that type',
    );
    const none = await s.request('GET', '/api/templates/stale_thing/preview', { token });
    t.equal(none.status, 404);
    t.equal(none.body.code, 'no_event_for_preview');
    t.same(none.body.params, { event_type: 'stale_thing' });
  });

  await t.test('the queue carries the work to whichever worker dispatches', async (t) => {
    // This service's own dispatcher stops: nothing in its memory can send. A second dispatcher on
    // the same database, as another replica would run, picks up what the HTTP requests queued.
    const core = s.service.core;
    const r = core.services.get('relay') as unknown as {
      dispatcher: Dispatcher;
      catalog: ConstructorParameters<typeof Dispatcher>[1];
      monitor: ConstructorParameters<typeof Dispatcher>[2];
    };
    await r.dispatcher.stop();
    bad.respond(400);
    const id = await loud.emit('alarm', { name: 'flood' });
    const other = new Dispatcher(core, r.catalog, r.monitor);
    other.start();
    await other.tick();
    const failedAt = bad.received.length;
    const sentAt = good.received.length;
    t.equal(
      (await s.request('GET', `/api/events/${id}`, { token })).body.dispatch_status,
      'partial',
      'the other worker sent the new event',
    );
    bad.respond(200);
    await other.stop();
    t.equal((await s.request('POST', `/api/events/${id}/resend`, { token, body: {} })).status, 202);
    const gate = await quiet.emit('thing_happened', { name: 'shed' });
    const d = (await s.request('GET', '/api/deferred', { token })).body.deferred.find((x: any) => x.event_id === gate);
    t.equal((await s.request('POST', `/api/deferred/${d.delivery_id}/send-now`, { token })).status, 202);
    const queued = await core.db.all(`SELECT status FROM deliveries WHERE event_id IN (?, ?) AND status = 'queued'`, [
      id,
      gate,
    ]);
    t.equal(queued.length, 2, 'both wait in the queue while no dispatcher runs');
    await new Promise((res) => setTimeout(res, 300));
    t.equal(bad.received.length, failedAt, 'nothing was sent from memory');
    const third = new Dispatcher(core, r.catalog, r.monitor);
    third.start();
    await third.tick();
    await bad.waitFor(failedAt + 1);
    await good.waitFor(sentAt + 1);
    await third.stop();
    t.equal(bad.received.length, failedAt + 1, 'the resend went out once, from the other worker');
    t.equal(good.received.at(-1).body.title, 'Thing: shed', 'so did the deferred one sent now');
    t.equal((await s.request('GET', `/api/events/${gate}`, { token })).body.dispatch_status, 'dispatched');
    r.dispatcher.start();
  });

  await t.test('another user sees none of it', async (t) => {
    const other = await s.user();
    const ev = (await s.request('GET', `/api/events/${alarmId}`, { token })).body;
    t.equal((await s.request('GET', `/api/events/${alarmId}`, { token: other.token })).status, 404);
    t.equal((await s.request('POST', `/api/events/${alarmId}/resend`, { token: other.token, body: {} })).status, 404);
    t.equal(
      (
        await s.request('POST', `/api/events/${alarmId}/resend`, {
          token: other.token,
          body: { delivery_id: ev.deliveries[0].id },
        })
      ).status,
      404,
    );
    const mineDeferred = await quiet.emit('thing_happened', { name: 'gate' });
    await tick();
    const d = (await s.request('GET', '/api/deferred', { token })).body.deferred.find(
      (x: any) => x.event_id === mineDeferred,
    );
    t.equal((await s.request('POST', `/api/deferred/${d.delivery_id}/send-now`, { token: other.token })).status, 404);
    t.equal((await s.request('POST', `/api/deferred/${d.delivery_id}/drop`, { token: other.token })).status, 404);
    t.same((await s.request('GET', '/api/deferred', { token: other.token })).body.deferred, []);
    t.same(
      (await s.request('GET', '/api/events', { token: other.token })).body.events.filter(
        (e: any) => e.provider_kind === 'example',
      ),
      [],
    );
    t.equal(
      (await s.request('GET', '/api/templates/thing_happened/preview', { token: other.token })).status,
      404,
      "no preview from another user's event",
    );
    t.equal(
      (await s.request('GET', '/api/deferred', { token })).body.deferred.length,
      1,
      'still waiting for its owner',
    );
    t.equal((await s.request('POST', `/api/events/${alarmId}/resend`, { body: {} })).status, 401);
  });
});
