/**
 * Closing the PostgreSQL database while statements are still in flight (a reconcile started by its timer just
 * before the shutdown, a poll's write) waits for them, then closes. Before, a statement whose pool connection was
 * being handed out as the pool closed failed inside the driver ("reading 'Client'"), the connection was never given
 * back, and the pool's end waited for it forever: the service's stop hung. Statements that come after close() are
 * refused with a clear error. Always runs on PostgreSQL, whatever HERALD_TEST_DB says.
 */

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import t from 'tap';
import { loadConfig } from '../../core/src/config/config.ts';
import { openDatabase } from '../../core/src/db/open.ts';
import { createLogger } from '../../core/src/logging/logger.ts';
import { postgresDatabaseUrl, startService, testSecretKey } from '../helpers/service.ts';
import { waitFor } from '../helpers/wait.ts';

const log = createLogger({ level: 'fatal', format: 'json' }).root;

async function open(t: { teardown(fn: () => unknown): void }) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-pg-close-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const url = await postgresDatabaseUrl();
  const config = loadConfig({
    SERVICE_SECRET_KEY: testSecretKey(dir),
    SERVICE_DATA_DIR: dir,
    SERVICE_DATABASE_URL: url,
  });
  return openDatabase({ config, log });
}

const within = <T>(p: Promise<T>, ms: number): Promise<T | 'hung'> =>
  Promise.race([p, new Promise<'hung'>((r) => setTimeout(() => r('hung'), ms).unref())]);

t.test('close() waits for the statements in flight, and refuses new ones', async (t) => {
  for (let round = 0; round < 5; round++) {
    const db = await open(t);
    // More statements than the pool has idle connections: some are still getting theirs when close() comes.
    const queries = Array.from({ length: 30 }, (_, i) =>
      db.all<{ n: number }>('SELECT pg_sleep(0.02), CAST(? AS integer) AS n', [i]).then(
        (rows) => rows[0]!.n,
        (err: Error) => err,
      ),
    );
    const closed = await within(db.close(), 20_000);
    t.not(closed, 'hung', `round ${round}: close() returned`);
    if (closed === 'hung') return;
    t.same(
      await Promise.all(queries),
      Array.from({ length: 30 }, (_, i) => i),
      'every statement in flight ran',
    );
    await t.rejects(db.all('SELECT 1'), /closed/, 'a statement after close() is refused');
  }
});

t.test('a reconcile under way when the service stops finishes before the database closes', async (t) => {
  const url = await postgresDatabaseUrl();
  const svc = await startService({ SERVICE_DATABASE_URL: url, SERVICE_LOG_LEVEL: 'INFO' });
  const user = await svc.user();
  const p = await svc.request('POST', '/api/providers', {
    token: user.token,
    body: { kind: 'example', name: 'Feed', config: { shared_token: 'a shared token of the feed' } },
  });
  t.equal(p.status, 201, 'the provider is created');
  // Another session changes the provider and holds the table, so the service's next reconcile (every 3 s on
  // PostgreSQL) waits in its first read; once let go, it finds the change and reads again.
  const lock = new pg.Client({ connectionString: url });
  await lock.connect();
  t.teardown(() => lock.end());
  await lock.query('BEGIN');
  await lock.query('UPDATE providers SET updated_at = $1 WHERE id = $2', [new Date().toISOString(), p.body.id]);
  await lock.query('LOCK TABLE providers IN ACCESS EXCLUSIVE MODE');
  // Watched from a session of its own: inside the lock's transaction, pg_stat_activity is read once and then kept
  // (a snapshot for the transaction), so a reconcile that began to wait after the first look was never seen.
  const watch = new pg.Client({ connectionString: url });
  await watch.connect();
  t.teardown(() => watch.end());
  const blocked = async () =>
    Number(
      (
        await watch.query<{ n: string }>(
          "SELECT count(*) AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE $1",
          ['SELECT % FROM providers %'],
        )
      ).rows[0]!.n,
    ) > 0;
  // The table is let go and the service stopped whatever happens here: a failed wait fails the test at once, not
  // after the runner's timeout with the service still waiting for the lock.
  let stopped: Promise<void> | undefined;
  try {
    t.ok(await waitFor('the reconcile waits for the table', blocked), 'a reconcile is under way');
    stopped = svc.stop();
    await new Promise((r) => setTimeout(r, 500));
  } finally {
    await lock.query('COMMIT');
    stopped ??= svc.stop();
  }
  t.not(await within(stopped, 30_000), 'hung', 'the service stopped');
  t.same(
    svc.logs().filter((l) => l.msg === 'reconciling provider instances failed'),
    [],
    'the reconcile ran to its end: nothing refused it',
  );
});
