import t from 'tap';
import { providerRowFrom } from '../../core/src/plugins/host.ts';
import { ingestEvent } from '../../core/src/relay/pipeline/ingest.ts';
import { EXAMPLE_HOOK_HEADERS, exampleChain, startService, startSink } from '../helpers/service.ts';
import { waitFor } from '../helpers/wait.ts';

const hookHeaders = EXAMPLE_HOOK_HEADERS;

t.test(
  'a new event is sent at once from ingest, without a claim, and recorded with its webhook log in one go',
  async (t) => {
    // Counts the in-process dispatcher's claims (the dispatch thread runs the same Dispatcher; dispatch-thread.test.ts
    // covers it).
    const s = await startService({ SERVICE_DISPATCH_THREAD: 'false' });
    const sink = await startSink();
    t.teardown(async () => {
      await s.stop();
      await sink.close();
    });
    const c = await exampleChain(s, sink.url);
    const relay = s.service.core.services.get('relay') as any;
    const dispatcher = relay.dispatcher;
    // Count the rows that go through the queue's claim.
    let claimedRows = 0;
    const claim = dispatcher.claim.bind(dispatcher);
    dispatcher.claim = async () => {
      const rows = await claim();
      claimedRows += rows.length;
      return rows;
    };

    const r = await s.request('POST', c.hook, {
      headers: hookHeaders,
      body: { type: 'thing_happened', payload: { name: 'front door' } },
    });
    t.equal(r.status, 202);
    const got = await sink.waitFor(1);
    t.equal(got.length, 1, 'delivered');
    await relay.tick();
    t.equal(claimedRows, 0, 'the delivery never waited in the queue');
    const eventId = r.body.event_ids[0];
    const d = await s.service.core.db.get('SELECT status, attempts, lease_until FROM deliveries WHERE event_id = ?', [
      eventId,
    ]);
    t.match(d, { status: 'sent', attempts: 1, lease_until: null }, 'sent on its first attempt, lease released');
    const log = (await s.request('GET', `/api/providers/${c.provider.id}/webhook-log`, { token: s.admin.token })).body
      .entries;
    t.equal(log.length, 1);
    t.equal(log[0].status_code, 202);
    t.same(log[0].event_ids, [eventId], 'the payload log names the event written with it');
    t.equal(
      (await s.service.core.db.get('SELECT hook_ip FROM event_log WHERE id = ?', [eventId]))?.hook_ip,
      log[0].source_ip,
      'recorded on the event row itself',
    );
  },
);

t.test('sends handed off at ingest do not each start a pass over the queue', async (t) => {
  const s = await startService({ SERVICE_DISPATCH_THREAD: 'false' });
  const sink = await startSink();
  t.teardown(async () => {
    await s.stop();
    await sink.close();
  });
  const c = await exampleChain(s, sink.url);
  const dispatcher = (s.service.core.services.get('relay') as any).dispatcher;
  let passes = 0;
  const releaseDue = dispatcher.releaseDue.bind(dispatcher);
  dispatcher.releaseDue = () => (passes++, releaseDue());
  const started = Date.now();
  const N = 40;
  for (let i = 0; i < N; i++) {
    const r = await s.request('POST', c.hook, {
      headers: hookHeaders,
      body: { type: 'thing_happened', payload: { name: `door ${i}` } },
    });
    t.equal(r.status, 202, 'accepted', { diagnostic: false });
    await sink.waitFor(i + 1);
  }
  const seconds = (Date.now() - started) / 1000;
  // The loop's own timer asks once a second while nothing is due; a pass per send would make it N.
  t.ok(passes <= Math.ceil(seconds) + 2, `${passes} passes for ${N} sends in ${seconds.toFixed(1)} s`);
});

t.test('deliveries handed off while the dispatcher stops go back to the queue', async (t) => {
  const s = await startService();
  const sink = await startSink();
  t.teardown(async () => {
    await s.stop();
    await sink.close();
  });
  const c = await exampleChain(s, sink.url);
  const core = s.service.core;
  const relay = core.services.get('relay') as any;
  const provider = providerRowFrom((await core.db.get('SELECT * FROM providers WHERE id = ?', [c.provider.id]))!);
  // Leased for this worker, then the dispatcher stops before taking them.
  const r = await ingestEvent(
    core as any,
    provider,
    { type: 'thing_happened', payload: { name: 'late' } },
    { leaseUntil: new Date(Date.now() + 15_000) },
  );
  t.equal(r.handed.length, 1, 'written already claimed');
  t.equal((await core.db.get('SELECT status FROM deliveries WHERE event_id = ?', [r.eventIds[0]]))?.status, 'sending');
  await relay.dispatcher.stop();
  relay.dispatcher.accept(r.handed);
  // Up to 15 s, not 100 polls of 20 ms (2 s, which a loaded machine could outlast).
  let row: any;
  await waitFor('the handed delivery to be queued again', async () => {
    row = await core.db.get('SELECT status, attempts, lease_until FROM deliveries WHERE event_id = ?', [r.eventIds[0]]);
    return row?.status === 'queued';
  }).catch(() => undefined);
  t.match(row, { status: 'queued', attempts: 0, lease_until: null }, 'queued again, the unused attempt given back');
  t.equal(sink.received.length, 0, 'nothing was sent by the stopped dispatcher');
});
