/**
 * A successful poll that changes nothing issues no read of the trackers' poll state once its instance has seen them
 * clean: the self-monitor remembers, per running instance and set of trackers, that nothing was left to clear (issue
 * 27, idle CPU per poll). A failure, a new tracker or the instance started again reads (and writes) as before. Runs on
 * SQLite and PostgreSQL.
 */

import crypto from 'node:crypto';
import t from 'tap';
import { defineProvider, NotReadyError, Type } from '../../core/src/plugin-api/index.ts';
import { providerRowFrom } from '../../core/src/plugins/host.ts';
import { wrapDefinition } from '../../core/src/plugins/loader.ts';
import type { ProviderDbRow } from '../../core/src/relay/definitions/provider.ts';
import { startService } from '../helpers/service.ts';

/** The self-monitor's check for a change of poll state. */
const STATE_CHECK = /consecutive_poll_failures <> 0/;

t.test('the poll state is read once per instance and tracker set, not on every successful poll', async (t) => {
  const s = await startService();
  t.teardown(() => s.stop());
  const core = s.service.core;
  const db = core.db;
  let failing = false;
  const poller = defineProvider({
    manifest: {
      id: 'quiet_poller',
      kind: 'provider',
      apiVersion: 1,
      displayName: 'Quiet poller',
      ingest: 'poll',
      pollIntervalSeconds: 3600,
      configSchema: Type.Object({}),
      events: {},
    },
    create: () => ({
      async poll() {
        if (failing) throw new NotReadyError('the feed is down');
      },
    }),
  });
  core.plugins.add(wrapDefinition('quiet-poller-plugin', poller));
  const id = crypto.randomUUID();
  const created = new Date().toISOString();
  await db.run(
    'INSERT INTO providers (id, user_id, kind, name, config, enabled, webhook_token, created_at, updated_at) ' +
      `VALUES (?, ?, 'quiet_poller', 'Feed', ?, ?, ?, ?, ?)`,
    [id, s.admin.id, {}, true, crypto.randomUUID(), created, created],
  );
  const addTracker = async () => {
    const trackerId = crypto.randomUUID();
    await db.run(
      'INSERT INTO trackers (id, user_id, provider_id, name, enabled, config, created_at, updated_at) VALUES (?, ?, ' +
        `?, 'Releases', ?, ?, ?, ?)`,
      [trackerId, s.admin.id, id, true, {}, created, created],
    );
    return trackerId;
  };
  const first = await addTracker();
  const stored = async (trackerId: string) =>
    db.get<{ last_poll_at: string | null; consecutive_poll_failures: number; last_poll_error: string | null }>(
      'SELECT last_poll_at, consecutive_poll_failures, last_poll_error FROM trackers WHERE id = ?',
      [trackerId],
    );

  const seen: string[] = [];
  const get = db.get.bind(db);
  const run = db.run.bind(db);
  db.get = ((sql: string, p?: never[]) => (seen.push(sql), get(sql, p))) as typeof db.get;
  db.run = (sql, p) => (seen.push(sql), run(sql, p));
  t.teardown(() => {
    Object.assign(db, { get, run });
  });
  const checks = () => seen.filter((q) => STATE_CHECK.test(q)).length;
  const writes = () => seen.filter((q) => /^\s*UPDATE trackers/i.test(q)).length;
  const poll = async (at: string) => {
    s.clock.set(at);
    await core.plugins.pollOnce(id);
  };
  const start = async () => {
    const row = await db.get<ProviderDbRow>('SELECT * FROM providers WHERE id = ?', [id]);
    await core.plugins.startProvider(providerRowFrom(row!));
  };

  s.clock.set('2026-11-27T12:00:00.000Z');
  await start();
  await poll('2026-11-27T12:00:00.000Z');
  t.equal(checks(), 1, 'the first poll reads the state');
  t.equal((await stored(first))?.last_poll_at, '2026-11-27T12:00:00.000Z', 'and writes the first poll at once');
  const afterFirst = writes();
  for (let m = 1; m <= 5; m++) await poll(`2026-11-27T12:0${m}:00.000Z`);
  t.equal(checks(), 1, 'five successful polls after it read nothing more');
  t.equal(writes(), afterFirst, 'and write nothing');

  failing = true;
  await poll('2026-11-27T12:06:00.000Z');
  t.equal((await stored(first))?.consecutive_poll_failures, 1, 'a failure is written at once');
  failing = false;
  const beforeRecovery = checks();
  await poll('2026-11-27T12:07:00.000Z');
  t.equal(checks(), beforeRecovery + 1, 'the success after a failure reads the state again');
  t.strictSame(
    await stored(first),
    { last_poll_at: '2026-11-27T12:07:00.000Z', consecutive_poll_failures: 0, last_poll_error: null },
    'and clears the failure',
  );
  await poll('2026-11-27T12:08:00.000Z');
  t.equal(checks(), beforeRecovery + 1, 'the next one reads nothing');

  const second = await addTracker();
  await poll('2026-11-27T12:09:00.000Z');
  t.equal(checks(), beforeRecovery + 2, 'a new tracker makes the next poll read');
  t.equal((await stored(second))?.last_poll_at, '2026-11-27T12:09:00.000Z', 'and its first poll is written at once');

  // Another replica may have led and recorded failures meanwhile: an instance started again reads again.
  await run('UPDATE trackers SET consecutive_poll_failures = 2, last_poll_error = ? WHERE id = ?', [
    'elsewhere',
    first,
  ]);
  await start();
  const beforeRestart = checks();
  await poll('2026-11-27T12:10:00.000Z');
  t.equal(checks(), beforeRestart + 1, 'the instance started again reads the state');
  t.strictSame(
    await stored(first),
    { last_poll_at: '2026-11-27T12:10:00.000Z', consecutive_poll_failures: 0, last_poll_error: null },
    'and clears what it found',
  );
});
