import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';

import { freePort } from '../helpers/peers.ts';
import { apiCaller, exampleChainOverHttp, exited, startHeraldProcess, untilReady } from '../helpers/process.ts';
import { EXAMPLE_HOOK_HEADERS, testDatabaseUrl } from '../helpers/service.ts';
import { waitThrough } from '../helpers/wait.ts';

const PLUGINS = '@herald/provider-bridge-self,herald-plugin-example,herald-target-recorder';

/** Waits for `fn`, through the errors of a process that is starting or restarting. */
const until = <T>(fn: () => Promise<T | undefined> | T | undefined, ms: number, what: string) =>
  waitThrough(what, fn, ms);

t.test('SIGKILL mid-dispatch loses nothing; after restart every event is dispatched once per delivery', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-crash-'));
  const key = crypto.randomBytes(32).toString('hex');
  const port = await freePort();
  // A slow sink that records each send as it arrives: the delivery id from the body and the
  // Idempotency-Key header the target sends with it. The fifth send is held unanswered, so it is
  // certainly in flight when the process dies and must be sent again after the restart.
  const HELD = 5;
  const arrivals: { deliveryId: string; eventId: string; key?: string }[] = [];
  let held: http.ServerResponse | undefined;
  const sink = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => {
      const m = JSON.parse(body);
      arrivals.push({
        deliveryId: m.deliveryId,
        eventId: m.eventId,
        key: req.headers['idempotency-key'] as string | undefined,
      });
      if (arrivals.length === HELD && !held) {
        held = res;
        return;
      }
      setTimeout(() => res.end('ok'), 40);
    });
  });
  await new Promise<void>((r) => sink.listen(0, '127.0.0.1', r));
  const sinkUrl = `http://127.0.0.1:${(sink.address() as { port: number }).port}/`;
  const databaseUrl = await testDatabaseUrl(dir);
  const start = () => startHeraldProcess({ dir, port, key, databaseUrl, plugins: PLUGINS });
  let svc = start();
  const { base } = svc;
  t.teardown(async () => {
    svc.child.kill('SIGKILL');
    sink.closeAllConnections();
    sink.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const call = apiCaller(base);
  await untilReady(base, 'first boot');
  const c = await exampleChainOverHttp(call, 'crash test password', {
    kind: 'recorder',
    name: 'Rec',
    config: { url: sinkUrl },
  });

  const N = 60;
  const accepted: string[] = [];
  for (let i = 0; i < N; i++) {
    const r = await call('POST', c.hook, { type: 'alarm', payload: { name: `e${i}` } }, EXAMPLE_HOOK_HEADERS);
    t.equal(r.status, 202);
    accepted.push(r.body.event_ids[0]);
  }
  await until(() => arrivals.length >= HELD, 10_000, 'some deliveries');
  svc.child.kill('SIGKILL');
  await exited(svc.child);
  held?.destroy();
  const before = arrivals.length;
  t.ok(before < N, `killed mid-dispatch (${before} of ${N} delivered)`);
  const inFlight = arrivals[HELD - 1]!;

  svc = start();
  await untilReady(base, 'restart');
  await until(() => new Set(arrivals.map((a) => a.eventId)).size >= N, 30_000, 'all events after restart');
  // On PostgreSQL the dead process's claim on the held send runs out within the lease (15 s).
  await until(
    () => arrivals.filter((a) => a.eventId === inFlight.eventId).length >= 2,
    30_000,
    'the send in flight at the kill, sent again',
  );
  const byEvent = new Set(arrivals.map((a) => a.eventId));
  for (const id of accepted) t.ok(byEvent.has(id), `event ${id} delivered`);
  const perDelivery = new Map<string, number>();
  for (const a of arrivals) perDelivery.set(a.deliveryId, (perDelivery.get(a.deliveryId) ?? 0) + 1);
  const repeated = [...perDelivery.values()].filter((n) => n > 1).length;
  t.ok(
    repeated <= 1,
    'at most the one send in flight at the kill is repeated, with the same delivery id for the target to ' +
      `deduplicate (${repeated})`,
  );
  // Every repeated send carries the delivery id of the first one, in the body and as Idempotency-Key,
  // so the target can tell a repeat from a new message.
  const idsByEvent = new Map<string, Set<string>>();
  for (const a of arrivals) idsByEvent.set(a.eventId, (idsByEvent.get(a.eventId) ?? new Set()).add(a.deliveryId));
  const arrivedTwice = [...idsByEvent.keys()].filter((id) => arrivals.filter((a) => a.eventId === id).length > 1);
  t.same(arrivedTwice, [inFlight.eventId], 'the send in flight at the kill is the one repeated');
  for (const id of arrivedTwice)
    t.same([...idsByEvent.get(id)!], [inFlight.deliveryId], `event ${id} arrived twice with one delivery id`);
  t.ok(
    arrivals.every((a) => a.key === a.deliveryId),
    'every send, repeats included, carries its delivery id as Idempotency-Key',
  );
  const events = await until(
    async () => {
      const r = await call('GET', `/api/events?limit=200&provider_id=${c.providerId}`, undefined, c.auth);
      return r.body.events.every((e: { dispatch_status: string }) => e.dispatch_status === 'dispatched')
        ? r.body.events
        : undefined;
    },
    10_000,
    'final statuses',
  );
  t.equal(events.length, N, 'every accepted event has a final status: dispatched');
});
