import { type ChildProcess, spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';

import { testDatabaseUrl } from '../helpers/service.ts';
import { waitThrough } from '../helpers/wait.ts';

const root = new URL('../..', import.meta.url).pathname;

function startProcess(dir: string, port: number, key: string, databaseUrl?: string): ChildProcess {
  return spawn(process.execPath, ['core/src/main.ts'], {
    cwd: root,
    stdio: 'ignore',
    env: {
      PATH: process.env.PATH,
      NODE_COMPILE_CACHE: process.env.NODE_COMPILE_CACHE,
      SERVICE_SECRET_KEY: key,
      SERVICE_DATA_DIR: dir,
      SERVICE_PORT: String(port),
      SERVICE_HOST: '127.0.0.1',
      SERVICE_PLUGINS: '@herald/provider-bridge-self,herald-plugin-example,herald-target-recorder',
      SERVICE_OUTBOUND_ALLOW_CIDRS: '127.0.0.0/8',
      HERALD_BCRYPT_COST: '4',
      SERVICE_LOG_FORMAT: 'json',
      ...(process.env.SERVICE_DISPATCH_THREAD ? { SERVICE_DISPATCH_THREAD: process.env.SERVICE_DISPATCH_THREAD } : {}),
      // HERALD_TEST_DB=postgres: the same crash against PostgreSQL (a restarted replica takes over the dead one's
      // leases).
      ...(databaseUrl ? { SERVICE_DATABASE_URL: databaseUrl } : {}),
    },
  });
}

/** Waits for `fn`, through the errors of a process that is starting or restarting. */
const until = <T>(fn: () => Promise<T | undefined> | T | undefined, ms: number, what: string) =>
  waitThrough(what, fn, ms);

t.test('SIGKILL mid-dispatch loses nothing; after restart every event is dispatched once per delivery', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-crash-'));
  const key = crypto.randomBytes(32).toString('hex');
  const port = 21000 + Math.floor(Math.random() * 20000);
  const base = `http://127.0.0.1:${port}`;
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
  let child = startProcess(dir, port, key, databaseUrl);
  t.teardown(async () => {
    child.kill('SIGKILL');
    sink.closeAllConnections();
    sink.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const call = async (method: string, p: string, body?: unknown, headers: Record<string, string> = {}) => {
    const r = await fetch(base + p, {
      method,
      headers: { 'content-type': 'application/json', ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await r.text();
    return { status: r.status, body: text ? JSON.parse(text) : undefined };
  };
  await until(async () => (await fetch(`${base}/api/ready`)).status === 200, 20_000, 'first boot');
  const setup = await call('POST', '/api/setup', { email: 'a@example.test', password: 'crash test password' });
  const auth = { authorization: `Bearer ${setup.body.access_token}` };
  const prov = await call(
    'POST',
    '/api/providers',
    { kind: 'example', name: 'Ex', config: { shared_token: 'sharedtoken1' } },
    auth,
  );
  const tr = await call('POST', '/api/trackers', { provider_id: prov.body.id, name: 'Tr' }, auth);
  const tg = await call(
    'POST',
    '/api/targets',
    { kind: 'recorder', name: 'Rec', config: { url: sinkUrl }, locale: 'en' },
    auth,
  );
  await call('PUT', `/api/trackers/${tr.body.id}/targets/${tg.body.id}`, undefined, auth);
  const hook = new URL(prov.body.webhook_url).pathname;

  const N = 60;
  const accepted: string[] = [];
  for (let i = 0; i < N; i++) {
    const r = await call(
      'POST',
      hook,
      { type: 'alarm', payload: { name: `e${i}` } },
      { 'x-example-token': 'sharedtoken1' },
    );
    t.equal(r.status, 202);
    accepted.push(r.body.event_ids[0]);
  }
  await until(() => arrivals.length >= HELD, 10_000, 'some deliveries');
  child.kill('SIGKILL');
  await new Promise((r) => child.once('exit', r));
  held?.destroy();
  const before = arrivals.length;
  t.ok(before < N, `killed mid-dispatch (${before} of ${N} delivered)`);
  const inFlight = arrivals[HELD - 1]!;

  child = startProcess(dir, port, key, databaseUrl);
  await until(async () => (await fetch(`${base}/api/ready`)).status === 200, 20_000, 'restart');
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
      const r = await call('GET', `/api/events?limit=200&provider_id=${prov.body.id}`, undefined, auth);
      return r.body.events.every((e: { dispatch_status: string }) => e.dispatch_status === 'dispatched')
        ? r.body.events
        : undefined;
    },
    10_000,
    'final statuses',
  );
  t.equal(events.length, N, 'every accepted event has a final status: dispatched');
});
