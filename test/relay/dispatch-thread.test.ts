import fs from 'node:fs';
import http from 'node:http';
import t, { type Test } from 'tap';
import {
  EXAMPLE_HOOK_HEADERS,
  exampleChain,
  readStoppedDatabase,
  startService,
  startSink,
  type TestService,
} from '../helpers/service.ts';
import { waitFor } from '../helpers/wait.ts';

// Dispatch in a worker thread of its own (SERVICE_DISPATCH_THREAD=true), whatever the suite's default.
const THREAD = { SERVICE_DISPATCH_THREAD: 'true' };
const hookHeaders = EXAMPLE_HOOK_HEADERS;

const post = (s: TestService, hook: string, name: string) =>
  s.request('POST', hook, { headers: hookHeaders, body: { type: 'thing_happened', payload: { name } } });

/** A loopback server that accepts requests and never answers them; its URL. */
async function hangingServer(t: Test): Promise<string> {
  const hang = http.createServer(() => {
    /* never answers */
  });
  await new Promise<void>((r) => hang.listen(0, '127.0.0.1', r));
  t.teardown(() => {
    hang.closeAllConnections();
    hang.close();
  });
  return `http://127.0.0.1:${(hang.address() as { port: number }).port}/`;
}

t.test('the dispatch thread sends, settles, reports metrics and logs to the main thread', async (t) => {
  const s = await startService(THREAD);
  const sink = await startSink();
  t.teardown(async () => {
    await s.stop();
    await sink.close();
  });
  const relay = s.service.core.services.get('relay') as any;
  t.equal(relay.dispatcher.constructor.name, 'DispatchThread', 'dispatch runs in its own thread');
  const c = await exampleChain(s, sink.url);
  const ids: string[] = [];
  for (let i = 0; i < 20; i++) ids.push((await post(s, c.hook, `n${i}`)).body.event_ids[0]);
  t.equal((await sink.waitFor(20)).length, 20, 'every event reached the sink');
  t.same(sink.received.map((r) => r.body.title).sort(), ids.map((_, i) => `Thing: n${i}`).sort(), 'each once');
  await relay.tick();
  const rows = await s.service.core.db.all<{ status: string }>(
    `SELECT status FROM deliveries WHERE event_id IN (${ids.map(() => '?').join(',')})`,
    ids,
  );
  t.same([...new Set(rows.map((r) => r.status))], ['sent'], 'settled by the thread in its own connection');
  const ev = (await s.request('GET', `/api/events/${ids[0]}`, { token: s.admin.token })).body;
  t.equal(ev.dispatch_status, 'dispatched', 'the event status follows');

  // A failing target: the thread's failure counter and its log line reach the main thread.
  sink.respond(503);
  await post(s, c.hook, 'fails');
  await waitFor('a failed send in the thread counted in /api/metrics', async () =>
    /service_target_send_failures_total\{target_type="recorder",status_code="503"\} 1/.test(
      (await s.request('GET', '/api/metrics')).text,
    ),
  );
  t.match(
    (await s.request('GET', '/api/metrics')).text,
    /service_dispatch_duration_seconds_count\{channel="recorder"\} 2[1-9]/,
    'send durations observed in the thread are exported',
  );
  t.ok(
    s.logs().some((l) => l.msg === 'send failed' && l.target_id === c.target.id && l.status_code === 503),
    'the thread logs through the main log',
  );
  t.notOk(s.logText().includes(s.service.core.config.secretKey), 'no secret in the log');
});

t.test('a dispatch thread that dies is started again and nothing is lost', async (t) => {
  const s = await startService(THREAD);
  const sink = await startSink();
  t.teardown(async () => {
    await s.stop();
    await sink.close();
  });
  const relay = s.service.core.services.get('relay') as any;
  const hang = await hangingServer(t);
  const c = await exampleChain(s, hang);
  // A target that never answers: the thread dies holding claimed rows, one of them mid-send.
  const ids: string[] = [];
  for (let i = 0; i < 10; i++) ids.push((await post(s, c.hook, `c${i}`)).body.event_ids[0]);
  const core = s.service.core;
  await waitFor(
    'the thread to hold the rows',
    async () =>
      Number((await core.db.get<{ n: number }>(`SELECT COUNT(*) AS n FROM deliveries WHERE status = 'sending'`))!.n) ===
      10,
  );
  await relay.dispatcher.crash();
  await s.request('PATCH', `/api/targets/${c.target.id}`, {
    token: s.admin.token,
    body: { config: { url: sink.url } },
  });
  // Written while the thread is down: handed to the next one, or queued.
  for (let i = 10; i < 15; i++) ids.push((await post(s, c.hook, `c${i}`)).body.event_ids[0]);
  // A new thread loads the dispatch modules and opens its connection: seconds on a busy machine.
  await waitFor('the thread started again', () => relay.dispatcher.starts === 2 && relay.dispatcher.ready, 30_000);
  // The dead thread's leases run out (the thread's clock follows the main one).
  s.clock.advance(20_000);
  await relay.tick();
  await relay.tick();
  const rows = await s.service.core.db.all<{ status: string }>(
    `SELECT status FROM deliveries WHERE event_id IN (${ids.map(() => '?').join(',')})`,
    ids,
  );
  t.equal(rows.length, 15);
  t.same([...new Set(rows.map((r) => r.status))], ['sent'], 'every delivery sent after the restart');
  const titles = new Set(sink.received.map((r) => r.body.title));
  t.equal(
    titles.size,
    15,
    'every event reached the sink (a send cut off by the crash may arrive twice, with its delivery id)',
  );
  t.ok(
    s.logs().some((l) => l.msg === 'the dispatch thread exited; starting it again'),
    'the restart is logged',
  );
});

t.test('shutdown stops the thread: rows it claimed but did not send go back to the queue', async (t) => {
  const s = await startService({ ...THREAD, SERVICE_GRACEFUL_SHUTDOWN_SECONDS: '1' });
  t.teardown(async () => {
    fs.rmSync(s.dataDir, { recursive: true, force: true });
  });
  // A target that never answers: the sends are cut off at the end of the grace period.
  const c = await exampleChain(s, await hangingServer(t));
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) ids.push((await post(s, c.hook, `h${i}`)).body.event_ids[0]);
  const core = s.service.core;
  await waitFor(
    'the three sends under way',
    async () =>
      Number((await core.db.get<{ n: number }>(`SELECT COUNT(*) AS n FROM deliveries WHERE status = 'sending'`))!.n) ===
      3,
  );
  const started = Date.now();
  await s.service.stop();
  t.ok(Date.now() - started < 5000, 'stopped within the grace period and its margin');
  const row = await readStoppedDatabase<{ queued: number; n: number; attempts: number }>(
    s.dataDir,
    `SELECT SUM(CASE WHEN status = 'queued' THEN 1 ELSE 0 END) AS queued, COUNT(*) AS n, MAX(attempts) AS ` +
      'attempts FROM deliveries WHERE event_id IN (?, ?, ?)',
    ids,
  );
  t.equal(Number(row?.n), 3);
  t.equal(Number(row?.queued), 3, 'the cut-off sends are queued again');
  t.equal(Number(row?.attempts), 0, 'their attempt not counted');
  t.ok(
    s.logs().some((l) => l.msg === 'stopped'),
    'the service stopped cleanly',
  );
});
