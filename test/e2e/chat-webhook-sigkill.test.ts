/**
 * Repeats after a SIGKILL through a chat-webhook target are bounded by what the service takes in
 * flight (target-chat-webhook's IN_FLIGHT: one post at a time for Slack), not by the manifest's
 * concurrency of 16: a burst of events to a Slack webhook that answers nothing yet, a real Herald
 * process killed while the core has many sends started, a restart, and every delivery posted,
 * at most one of them twice.
 */

import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { IN_FLIGHT } from '@herald/target-chat-webhook';
import BetterSqlite from 'better-sqlite3';
import t from 'tap';
import { ChatWebhookSink } from '../../plugins/target-chat-webhook/test/fakes/chat-webhook-sink.ts';
import { freePort } from '../helpers/peers.ts';
import { apiCaller, exampleChainOverHttp, exited, startHeraldProcess, untilReady } from '../helpers/process.ts';
import { EXAMPLE_HOOK_HEADERS, TEST_DB, testDatabaseUrl } from '../helpers/service.ts';
import { waitThrough } from '../helpers/wait.ts';

/** Slack takes about one message a second per incoming webhook: one post in flight. */
const SLACK = 1;

const PLUGINS = '@herald/provider-bridge-self,herald-plugin-example,@herald/target-chat-webhook';

/** Waits for `fn`, through the errors of a process that is starting or restarting. */
const until = <T>(fn: () => Promise<T | undefined> | T | undefined, ms: number, what: string) =>
  waitThrough(what, fn, ms);

/** Deliveries the (other) process has claimed and not recorded as sent: sends it has started. */
async function started(dir: string, databaseUrl: string | undefined): Promise<number> {
  const sql = 'SELECT COUNT(*) AS n FROM deliveries WHERE lease_until IS NOT NULL AND sent_at IS NULL';
  if (TEST_DB === 'sqlite') {
    const db = new BetterSqlite(path.join(dir, 'herald.db'), { readonly: true, fileMustExist: true });
    try {
      return Number((db.prepare(sql).get() as { n: number }).n);
    } finally {
      db.close();
    }
  }
  const pg = (await import('pg')).default;
  const c = new pg.Client({ connectionString: databaseUrl });
  await c.connect();
  try {
    return Number((await c.query(sql)).rows[0].n);
  } finally {
    await c.end();
  }
}

t.test('SIGKILL mid-burst to a Slack webhook repeats at most the one post in flight', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-chat-kill-'));
  const key = crypto.randomBytes(32).toString('hex');
  const port = await freePort();
  const sink = await new ChatWebhookSink().start();
  sink.hold = true;
  const databaseUrl = await testDatabaseUrl(dir);
  const start = () => startHeraldProcess({ dir, port, key, databaseUrl, plugins: PLUGINS });
  let svc = start();
  const { base } = svc;
  t.teardown(async () => {
    svc.child.kill('SIGKILL');
    await sink.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const call = apiCaller(base);
  await untilReady(base, 'first boot');
  // Fails unless the Slack target is created.
  const c = await exampleChainOverHttp(call, 'chat kill test password', {
    kind: 'chat_webhook',
    name: 'Slack',
    config: { format: 'slack', url: sink.url('slack') },
  });

  const N = 24;
  for (let i = 0; i < N; i++) {
    const r = await call('POST', c.hook, { type: 'alarm', payload: { name: `e${i}` } }, EXAMPLE_HOOK_HEADERS);
    t.equal(r.status, 202);
  }
  // The core has started many sends to the target (up to the manifest's 16); the webhook has one.
  const inCore = await until(
    async () => {
      const n = await started(dir, databaseUrl);
      return n >= 8 ? n : undefined;
    },
    15_000,
    'sends started by the core',
  );
  await until(() => sink.held >= 1, 10_000, 'the first post');
  // Whatever else would reach the webhook arrives within moments; give it that chance.
  await until(() => sink.held > SLACK, 500, 'more posts').catch(() => undefined);
  t.equal(IN_FLIGHT.slack, SLACK);
  t.ok(inCore > SLACK, `the core had claimed ${inCore} deliveries to the target`);
  t.equal(sink.held, SLACK, 'the webhook had one post in flight');
  const before = new Set(sink.received.map((r) => r.idempotencyKey));
  svc.child.kill('SIGKILL');
  await exited(svc.child);

  sink.hold = false;
  sink.release();
  svc = start();
  await untilReady(base, 'restart');
  // On PostgreSQL the dead process's claims run out within the lease (15 s).
  await until(
    () => new Set(sink.received.map((r) => r.idempotencyKey)).size >= N,
    40_000,
    'every delivery after the restart',
  );
  const times = new Map<string, number>();
  for (const r of sink.received) times.set(r.idempotencyKey!, (times.get(r.idempotencyKey!) ?? 0) + 1);
  const repeated = [...times].filter(([, n]) => n > 1).map(([id]) => id);
  t.equal(times.size, N, 'every delivery posted');
  t.ok(repeated.length <= SLACK, `at most ${SLACK} repeated (${repeated.length})`);
  t.ok(
    repeated.every((id) => before.has(id)),
    'only a post that was in flight at the kill',
  );
});
