/**
 * The two PostgreSQL connections a replica keeps besides its pool, the scheduler's leader lock and the live hints'
 * LISTEN, are closed by stop() even when stop() comes while they are being opened (at start, or on a reconnect).
 * A connection that finished opening after stop() stayed open for the life of the process, holding a socket and,
 * for the leader, possibly the lock. Always runs on PostgreSQL, whatever HERALD_TEST_DB says.
 */

import pg from 'pg';
import t from 'tap';
import type { Config } from '../../core/src/config/config.ts';
import { PgAdvisoryLeader } from '../../core/src/jobs/pg-leader.ts';
import { LiveBus } from '../../core/src/live/bus.ts';
import { PgLiveRelay } from '../../core/src/live/pg-relay.ts';
import { createLogger } from '../../core/src/logging/logger.ts';
import { postgresDatabaseUrl } from '../helpers/service.ts';
import { waitFor } from '../helpers/wait.ts';

const log = createLogger({ level: 'fatal', format: 'json' }).get('test');

async function sessions(url: string, app: string): Promise<number> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const r = await c.query<{ n: string }>(
      'SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1',
      [app],
    );
    return Number(r.rows[0]!.n);
  } finally {
    await c.end();
  }
}

/** TCP sockets this process holds open (a connection still opening counts). */
const sockets = () => process.getActiveResourcesInfo().filter((r) => r === 'TCPSocketWrap').length;

/** Waits until no session of `app` is left (a closed session leaves pg_stat_activity a moment after its client). */
async function gone(url: string, app: string): Promise<boolean> {
  return waitFor(`no ${app} session left`, async () => (await sessions(url, app)) === 0);
}

t.test("the leader's connection is closed when stop() comes while it opens", async (t) => {
  const url = await postgresDatabaseUrl();
  const leader = new PgAdvisoryLeader({ databaseUrl: url } as Config, log);
  const changes: boolean[] = [];
  const before = sockets();
  const started = leader.start((l) => changes.push(l));
  // The first check is connecting now; stop() must wait for it and close what it opened.
  await leader.stop();
  t.equal(sockets(), before, 'its socket is closed when stop() returns');
  await started;
  t.ok(await gone(url, 'herald-leader'), 'no leader session is left once stop() has returned');
  t.same(changes, [], 'the stopped elector never took the lock');
  t.equal(leader.isLeader(), false);

  // The lock is free: a second elector takes it at once, and gives it back at stop.
  const other = new PgAdvisoryLeader({ databaseUrl: url } as Config, log);
  await other.start(() => {});
  t.equal(other.isLeader(), true, 'the lock was not held by the stopped one');
  t.equal(await sessions(url, 'herald-leader'), 1);
  await other.stop();
  t.ok(await gone(url, 'herald-leader'), 'a leader that ran closes its session too');
});

t.test('the live hints connection is closed when stop() comes while it opens', async (t) => {
  const url = await postgresDatabaseUrl();
  const relay = new PgLiveRelay(url, new LiveBus(), 'replica-a', log);
  const before = sockets();
  const started = relay.start();
  await relay.stop();
  t.equal(sockets(), before, 'its socket is closed when stop() returns');
  await started;
  t.ok(await gone(url, 'herald-live'), 'no LISTEN session is left once stop() has returned');

  // One that did open is closed by stop() as before.
  const open = new PgLiveRelay(url, new LiveBus(), 'replica-b', log);
  await open.start();
  await waitFor('the LISTEN session', async () => (await sessions(url, 'herald-live')) === 1);
  await open.stop();
  t.ok(await gone(url, 'herald-live'), 'a connection that opened is closed');
});
