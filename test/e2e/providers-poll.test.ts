/**
 * End to end through the real service for the poll-kind providers: Immich against its fake
 * server, NUT against a real upsd (Debian's, with the dummy-ups driver). Polls are run with
 * `pollOnce`; the first poll of each only records a silent baseline.
 */
import t from 'tap';
import { FakeImmich } from '../../plugins/provider-immich/test/fakes/immich.ts';
import { startNut } from '../../plugins/provider-nut/test/peers/nut.ts';
import { startService, startSink } from '../helpers/service.ts';
import { waitFor } from '../helpers/wait.ts';
import { chain, eventRows, plugins, recorder, relayOf } from './support.ts';

t.test('immich: assets added to a followed album after the baseline poll reach the target by file name', async (t) => {
  const immich = new FakeImmich();
  await immich.listen();
  const owner = immich.addUser({ id: 'u-anna', name: 'Anna', email: 'anna@example.net' });
  const albumId = immich.createAlbum({
    name: 'Summer 2026',
    ownerId: owner.id,
    assets: [{ id: 'a-1', fileName: 'IMG_0001.jpg', ownerId: owner.id }],
  });
  const s = await startService({ SERVICE_PLUGINS: plugins('@herald/provider-immich') });
  const sink = await startSink();
  t.teardown(async () => {
    await s.stop();
    await sink.close();
    await immich.close();
  });
  const target = await recorder(s, sink.url);
  const { provider } = await chain(s, {
    provider: { kind: 'immich', name: 'Photos', config: { base_url: immich.url, api_key: immich.apiKey } },
    tracker: { config: { album_ids: [albumId] } },
    target,
    enableAfterLink: true,
  });
  t.equal(provider.status, 'running', 'the instance checked the server and the key');
  t.ok(
    immich.requests.every((r) => r.url === '/api/server/ping' || r.authorized),
    'every API call carried the key',
  );
  const host = s.service.core.plugins;
  const relay = relayOf(s);
  // The instance polls once at start; wait for it so the explicit polls below do not race it.
  const fetched = () => immich.requests.filter((r) => r.url.startsWith(`/api/albums/${albumId}`)).length;
  // Up to 15 s, and failing if it never comes (200 polls of 25 ms went on after 5 s as if it had come, into that race).
  await waitFor("the instance's first poll", () => fetched() > 0);
  await host.pollOnce(provider.id);
  await relay.tick();
  t.equal(sink.received.length, 0, 'baseline polls are silent');
  t.same(await eventRows(s, provider.id), [], 'and record no event');

  immich.addAssets(albumId, [
    { id: 'a-2', fileName: 'IMG_0002.jpg', ownerId: owner.id },
    { id: 'a-3', fileName: 'beach <video>.mp4', ownerId: owner.id, type: 'VIDEO' },
  ]);
  await host.pollOnce(provider.id);
  await relay.tick();
  t.equal(sink.received.length, 1, 'one message for the change');
  const m = sink.received[0].body;
  t.equal(m.eventType, 'album_assets_changed');
  t.equal(m.title, 'Album "Summer 2026" changed');
  t.match(m.plainBody, /Added: 2/);
  t.match(m.plainBody, /\+ IMG_0002\.jpg/);
  t.match(m.plainBody, /\+ beach <video>\.mp4/);
  t.match(m.body, /beach &lt;video&gt;\.mp4/, 'file names are escaped in the HTML version');
  t.match(m.plainBody, new RegExp(`${immich.url}/albums/${albumId}`), 'link to the album');

  await host.pollOnce(provider.id);
  await relay.tick();
  t.equal(sink.received.length, 1, 'an unchanged album says nothing');
  const tracker = await s.service.core.db.get(
    'SELECT last_poll_at, last_poll_error FROM trackers WHERE provider_id = ?',
    [provider.id],
  );
  t.ok(tracker!.last_poll_at, 'poll outcome recorded on the tracker');
  t.equal(tracker!.last_poll_error, null);
});

t.test('nut (real upsd): silent baseline, then OL→OB sends ups_on_battery at once even in quiet hours', async (t) => {
  const nut = await startNut({ 'ups.status': 'OL', 'battery.charge': '100', 'battery.runtime': '3600' });
  const s = await startService({ SERVICE_PLUGINS: plugins('@herald/provider-nut') });
  const sink = await startSink();
  t.teardown(async () => {
    await s.stop();
    await sink.close();
    await nut.stop();
  });
  s.clock.set('2026-03-10T23:30:00Z');
  const target = await recorder(s, sink.url);
  const { provider } = await chain(s, {
    provider: {
      kind: 'nut',
      name: 'Rack UPS',
      config: { host: '127.0.0.1', port: nut.port, ups_name: nut.ups, username: nut.username, password: nut.password },
    },
    tracker: { quiet_hours: { start: '22:00', end: '07:00', timezone: 'UTC' } },
    target,
    enableAfterLink: true,
  });
  t.equal(provider.status, 'running', `the instance reached upsd (${provider.status_detail})`);
  const host = s.service.core.plugins;
  const relay = relayOf(s);
  await host.pollOnce(provider.id);
  await relay.tick();
  t.same(await eventRows(s, provider.id), [], 'the first reading is a silent baseline');

  await nut.setStatus({ 'ups.status': 'OB DISCHRG', 'battery.charge': '87', 'battery.runtime': '1500' });
  await host.pollOnce(provider.id);
  await relay.tick();
  const rows = await eventRows(s, provider.id);
  t.same(
    rows.map((r) => r.event_type),
    ['ups_on_battery'],
  );
  t.equal(rows[0].dispatch_status, 'dispatched', 'not deferred although the tracker is in quiet hours');
  const sev = await s.service.core.db.get('SELECT severity FROM event_log WHERE id = ?', [rows[0].id]);
  t.equal(sev!.severity, 'critical');
  t.equal(sink.received.length, 1);
  const m = sink.received[0].body;
  t.equal(m.title, `UPS ${nut.ups} is on battery`);
  t.match(m.plainBody, /Charge 87%/);
  t.equal(m.severity, 'critical');

  await nut.setStatus({ 'ups.status': 'OL CHRG' });
  await host.pollOnce(provider.id);
  await relay.tick();
  t.same(
    (await eventRows(s, provider.id)).map((r) => r.event_type),
    ['ups_on_battery', 'ups_online'],
    'power back is reported too',
  );
  t.equal(sink.received.length, 2, 'and also sent during quiet hours');
});
