/**
 * The time of a successful poll that changes nothing else is held in memory (read through by
 * `SelfMonitor.lastPollAt`) instead of a write commit per poll, and it reaches the trackers'
 * `last_poll_at` in one statement a minute and when the service stops. A tracker's first poll, a
 * failure and a recovery are written at once. Runs on SQLite and PostgreSQL.
 */

import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { defineProvider, NotReadyError, Type } from '../../core/src/plugin-api/index.ts';
import { providerRowFrom } from '../../core/src/plugins/host.ts';
import { wrapDefinition } from '../../core/src/plugins/loader.ts';
import type { ProviderDbRow } from '../../core/src/relay/definitions/provider.ts';
import type { Relay } from '../../core/src/relay/pipeline/relay.ts';
import { readStoppedDatabase, startService } from '../helpers/service.ts';

t.test(
  'last_poll_at: held between polls, read through, written at stop; failures and recoveries at once',
  async (t) => {
    // Its own data folder, kept past the stop to read the database.
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-poll-times-'));
    t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }));
    const s = await startService({}, { dataDir });
    let stopped = false;
    t.teardown(async () => {
      if (!stopped) await s.stop();
    });
    const core = s.service.core;
    const relay = core.services.get('relay') as Relay;
    let failing = false;
    const poller = defineProvider({
      manifest: {
        id: 'timed_poller',
        kind: 'provider',
        apiVersion: 1,
        displayName: 'Timed poller',
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
    core.plugins.add(wrapDefinition('timed-poller-plugin', poller));
    const id = crypto.randomUUID();
    const trackerId = crypto.randomUUID();
    const created = new Date().toISOString();
    await core.db.run(
      'INSERT INTO providers (id, user_id, kind, name, config, enabled, webhook_token, created_at, updated_at) ' +
        `VALUES (?, ?, 'timed_poller', 'Feed', ?, ?, ?, ?, ?)`,
      [id, s.admin.id, {}, true, crypto.randomUUID(), created, created],
    );
    await core.db.run(
      'INSERT INTO trackers (id, user_id, provider_id, name, enabled, config, created_at, updated_at) VALUES (?, ?, ' +
        `?, 'Releases', ?, ?, ?, ?)`,
      [trackerId, s.admin.id, id, true, {}, created, created],
    );
    const stored = async () =>
      core.db.get<{ last_poll_at: string | null; consecutive_poll_failures: number; last_poll_error: string | null }>(
        'SELECT last_poll_at, consecutive_poll_failures, last_poll_error FROM trackers WHERE id = ?',
        [trackerId],
      );
    const poll = async (at: string) => {
      s.clock.set(at);
      await core.plugins.pollOnce(id);
    };

    s.clock.set('2026-11-26T12:00:00.000Z');
    const row = await core.db.get<ProviderDbRow>('SELECT * FROM providers WHERE id = ?', [id]);
    await core.plugins.startProvider(providerRowFrom(row!));
    await poll('2026-11-26T12:00:00.000Z');
    t.equal((await stored())?.last_poll_at, '2026-11-26T12:00:00.000Z', "the tracker's first poll is written at once");

    await poll('2026-11-26T12:01:00.000Z');
    t.equal(relay.monitor.lastPollAt(id), '2026-11-26T12:01:00.000Z', 'a later one is read through from memory');
    t.equal((await stored())?.last_poll_at, '2026-11-26T12:00:00.000Z', 'and not written yet');
    const shown = await s.request('GET', `/api/trackers/${trackerId}`, { token: s.admin.token });
    t.equal(shown.body.last_poll_at, '2026-11-26T12:01:00.000Z', 'the API shows the held time');
    await relay.monitor.flushPollTimes();
    t.equal((await stored())?.last_poll_at, '2026-11-26T12:01:00.000Z', "the minute's write stores it");
    t.equal(relay.monitor.lastPollAt(id), undefined, 'and nothing is held after');

    failing = true;
    await poll('2026-11-26T12:02:00.000Z');
    t.strictSame(
      await stored(),
      { last_poll_at: '2026-11-26T12:02:00.000Z', consecutive_poll_failures: 1, last_poll_error: 'the feed is down' },
      'a failure is written at once',
    );
    failing = false;
    await poll('2026-11-26T12:03:00.000Z');
    t.strictSame(
      await stored(),
      { last_poll_at: '2026-11-26T12:03:00.000Z', consecutive_poll_failures: 0, last_poll_error: null },
      'so is the recovery',
    );

    await poll('2026-11-26T12:04:00.000Z');
    t.equal((await stored())?.last_poll_at, '2026-11-26T12:03:00.000Z', 'the next success is held');
    await s.stop();
    stopped = true;
    const after = await readStoppedDatabase<{ last_poll_at: string }>(
      s.dataDir,
      'SELECT last_poll_at FROM trackers WHERE id = ?',
      [trackerId],
    );
    t.equal(after?.last_poll_at, '2026-11-26T12:04:00.000Z', 'stopping the service writes what was held');
  },
);
