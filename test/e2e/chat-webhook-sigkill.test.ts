/**
 * Repeats after a SIGKILL through a chat-webhook target are bounded by what the service takes in
 * flight (target-chat-webhook's IN_FLIGHT: one post at a time for Slack), not by the manifest's
 * concurrency of 16: a burst of events to a Slack webhook that answers nothing yet, a real Herald
 * process killed while the core has many sends started, a restart, and every delivery posted,
 * at most one of them twice.
 */

import { type ChildProcess, spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { IN_FLIGHT } from '@herald/target-chat-webhook';
import BetterSqlite from 'better-sqlite3';
import t from 'tap';
import { ChatWebhookSink } from '../../plugins/target-chat-webhook/test/fakes/chat-webhook-sink.ts';
import { TEST_DB, testDatabaseUrl } from '../helpers/service.ts';
import { waitThrough } from '../helpers/wait.ts';

/** Slack takes about one message a second per incoming webhook: one post in flight. */
const SLACK = 1;

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
      SERVICE_PLUGINS: '@herald/provider-bridge-self,herald-plugin-example,@herald/target-chat-webhook',
      SERVICE_OUTBOUND_ALLOW_CIDRS: '127.0.0.0/8',
      HERALD_BCRYPT_COST: '4',
      SERVICE_LOG_FORMAT: 'json',
      ...(databaseUrl ? { SERVICE_DATABASE_URL: databaseUrl } : {}),
    },
  });
}

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
  const port = 21000 + Math.floor(Math.random() * 20000);
  const base = `http://127.0.0.1:${port}`;
  const sink = await new ChatWebhookSink().start();
  sink.hold = true;
  const databaseUrl = await testDatabaseUrl(dir);
  let child = startProcess(dir, port, key, databaseUrl);
  t.teardown(async () => {
    child.kill('SIGKILL');
    await sink.close();
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
  const setup = await call('POST', '/api/setup', { email: 'a@example.test', password: 'chat kill test password' });
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
    { kind: 'chat_webhook', name: 'Slack', config: { format: 'slack', url: sink.url('slack') }, locale: 'en' },
    auth,
  );
  t.equal(tg.status, 201, 'the Slack target is created');
  await call('PUT', `/api/trackers/${tr.body.id}/targets/${tg.body.id}`, undefined, auth);
  const hook = new URL(prov.body.webhook_url).pathname;

  const N = 24;
  for (let i = 0; i < N; i++) {
    const r = await call(
      'POST',
      hook,
      { type: 'alarm', payload: { name: `e${i}` } },
      { 'x-example-token': 'sharedtoken1' },
    );
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
  child.kill('SIGKILL');
  await new Promise((r) => child.once('exit', r));

  sink.hold = false;
  sink.release();
  child = startProcess(dir, port, key, databaseUrl);
  await until(async () => (await fetch(`${base}/api/ready`)).status === 200, 20_000, 'restart');
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
