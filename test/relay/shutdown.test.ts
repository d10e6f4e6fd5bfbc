/**
 * Shutdown within the grace period: with a target that never answers, SIGTERM stops claiming and
 * sending at once, cuts the send in flight off when the grace period ends, puts its row back in
 * the queue (queued, the attempt not counted), and the process exits within the grace period plus
 * a small margin. After a restart, with the target answering again, every event is delivered.
 */

import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { freePort } from '../helpers/peers.ts';
import { apiCaller, exampleChainOverHttp, exited, startHeraldProcess, untilReady } from '../helpers/process.ts';
import { EXAMPLE_HOOK_HEADERS, readStoppedDatabase, testDatabaseUrl } from '../helpers/service.ts';
import { waitThrough } from '../helpers/wait.ts';

const GRACE_S = 2;
const MARGIN_S = 3;

const PLUGINS = '@herald/provider-bridge-self,herald-plugin-example,herald-target-recorder';

/** Waits for `fn`, through the errors of a process that is starting or restarting. */
const until = <T>(fn: () => Promise<T | undefined> | T | undefined, ms: number, what: string) =>
  waitThrough(what, fn, ms);

t.test(
  'SIGTERM with a send that never ends: out within the grace period, no send after the signal, nothing lost',
  async (t) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-shutdown-'));
    const key = crypto.randomBytes(32).toString('hex');
    const port = await freePort();
    // A loopback sink that counts requests as they arrive and, while `answering` is false, accepts
    // them and never responds.
    let answering = false;
    const arrivals: { at: number; eventId: string }[] = [];
    const sink = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => {
        body += c;
      });
      req.on('end', () => {
        arrivals.push({ at: Date.now(), eventId: JSON.parse(body).eventId });
        if (answering) res.end('ok');
      });
    });
    await new Promise<void>((r) => sink.listen(0, '127.0.0.1', r));
    const sinkUrl = `http://127.0.0.1:${(sink.address() as { port: number }).port}/`;
    const databaseUrl = await testDatabaseUrl(dir);
    const start = () =>
      startHeraldProcess({
        dir,
        port,
        key,
        databaseUrl,
        plugins: PLUGINS,
        env: { SERVICE_GRACEFUL_SHUTDOWN_SECONDS: String(GRACE_S) },
      });
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
    const c = await exampleChainOverHttp(call, 'shutdown test password', {
      kind: 'recorder',
      name: 'Rec',
      config: { url: sinkUrl },
    });

    const N = 5;
    const accepted: string[] = [];
    for (let i = 0; i < N; i++) {
      const r = await call('POST', c.hook, { type: 'alarm', payload: { name: `e${i}` } }, EXAMPLE_HOOK_HEADERS);
      t.equal(r.status, 202);
      accepted.push(r.body.event_ids[0]);
    }
    // The target takes one send at a time: the first hangs, the others wait behind it.
    await until(() => arrivals.length >= 1, 10_000, 'the first send');
    const signalled = Date.now();
    svc.child.kill('SIGTERM');
    const code = await exited(svc.child);
    const took = (Date.now() - signalled) / 1000;
    t.equal(
      code,
      0,
      `exit 0 (${svc
        .stderr()
        .split('\n')
        .filter((l) => /warn|error/.test(l))
        .slice(-3)
        .join(' | ')})`,
    );
    t.ok(
      took < GRACE_S + MARGIN_S,
      `out ${took.toFixed(1)} s after the signal, within the ${GRACE_S} s grace period and a ${MARGIN_S} s margin`,
    );
    t.ok(took >= GRACE_S - 0.5, 'the send in flight had the grace period');
    t.same(
      arrivals.filter((a) => a.at > signalled).map((a) => a.eventId),
      [],
      'no send started after the signal',
    );
    t.equal(arrivals.length, 1, 'only the send in flight at the signal was made');
    const rows = await readStoppedDatabase<{ queued: number; attempts: number; n: number }>(
      dir,
      `SELECT SUM(CASE WHEN status = 'queued' THEN 1 ELSE 0 END) AS queued, MAX(attempts) AS attempts, COUNT(*) ` +
        'AS n FROM deliveries',
    );
    t.same(
      { n: Number(rows?.n), queued: Number(rows?.queued), attempts: Number(rows?.attempts) },
      { n: N, queued: N, attempts: 0 },
      'every delivery is back in the queue, the cut-off send not counted as an attempt nor failed',
    );

    answering = true;
    svc = start();
    await untilReady(base, 'restart');
    await until(
      () => accepted.every((id) => arrivals.some((a) => a.eventId === id && a.at > signalled)),
      20_000,
      'every event after the restart',
    );
    const events = await until(
      async () => {
        const r = await call('GET', `/api/events?limit=50&provider_id=${c.providerId}`, undefined, c.auth);
        return r.body.events.every((e: { dispatch_status: string }) => e.dispatch_status === 'dispatched')
          ? r.body.events
          : undefined;
      },
      10_000,
      'final statuses',
    );
    t.equal(events.length, N, 'every event dispatched');
  },
);
