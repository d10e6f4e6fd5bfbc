/**
 * Boot step, after the migrations and before anything reads a secret (migrations do not hold the key):
 *
 * 1. The key check. `secret_key_check` holds a constant sealed with the key of this database's
 *    secrets. When neither SERVICE_SECRET_KEY nor SERVICE_SECRET_KEY_PREVIOUS opens it, boot is
 *    refused: a replica with the wrong key would write secrets the others cannot read, and could
 *    read none of theirs. The first boot of this version writes it.
 * 2. Every stored secret not sealed yet (written by an earlier version, or a field a plugin update
 *    made `Secret()`) is sealed; one sealed with the previous key is sealed again with the current
 * one, as are the values plugins stored sealed in their instance store. A value no key opens is left alone and logged;
 * its record fails with a readable message
 *    when it is used.
 *
 * All in one transaction, each row written compare-and-set on the value read: replicas booting
 * together (the advisory lock serialises only the migrations) cannot overwrite each other's work or
 * a change made meanwhile, and a rotation is applied whole or not at all. `updated_at` stays: the
 * records did not change, and running instances need not restart.
 */

import { ConfigurationError } from '../config/config.ts';
import type { Core } from '../core.ts';
import type { Queryable } from '../db/database.ts';
import { Database as Db } from '../db/database.ts';
import { mapSecrets, type SecretsAtRest } from './at-rest.ts';

/** The clear value of the key check. */
const CHECK = 'herald secret key check v1';

export interface SealOutcome {
  sealed: number;
  resealed: number;
  unreadable: string[];
}

export async function sealStoredSecrets(core: Core): Promise<SealOutcome> {
  const { atRest, plugins } = core;
  const out: SealOutcome = { sealed: 0, resealed: 0, unreadable: [] };
  /** The value to store in place of `v` (the same string when nothing is to do). */
  const fix = (v: string, where: string): string => {
    const state = atRest.state(v);
    if (state === 'clear') {
      out.sealed++;
      return atRest.seal(v);
    }
    if (state === 'previous') {
      out.resealed++;
      return atRest.reseal(v);
    }
    if (state === 'unreadable' && !out.unreadable.includes(where)) out.unreadable.push(where);
    return v;
  };
  await core.db.tx(async (q) => {
    const check = await checkKey(q, atRest);
    const configs: [table: string, sql: string, paths: (kind: string) => string[] | undefined][] = [
      ['providers', 'SELECT id, kind, config FROM providers ORDER BY id', (k) => plugins.provider(k)?.secretPaths],
      [
        'trackers',
        'SELECT t.id, p.kind, t.config FROM trackers t JOIN providers p ON p.id = t.provider_id ORDER BY t.id',
        (k) => plugins.provider(k)?.trackerSecretPaths,
      ],
      ['targets', 'SELECT id, kind, config FROM targets ORDER BY id', (k) => plugins.target(k)?.secretPaths],
    ];
    for (const [table, sql, pathsOf] of configs) {
      for (const r of await q.all<{ id: string; kind: string; config: string }>(sql)) {
        // A kind not enabled here has no schema to say what is secret: its record waits for a boot that has it.
        const paths = pathsOf(r.kind);
        const config = Db.json<Record<string, unknown> | null>(r.config, null);
        if (!paths?.length || !config || typeof config !== 'object') continue;
        let changed = false;
        const next = mapSecrets(config, paths, (v) => {
          const w = fix(v, `${table} ${r.id}`);
          changed ||= w !== v;
          return w;
        });
        if (changed)
          await q.run(`UPDATE ${table} SET config = ? WHERE id = ? AND config = ?`, [
            JSON.stringify(next),
            r.id,
            r.config,
          ]);
      }
    }
    for (const r of await q.all<{ id: string; token: string }>(
      `SELECT id, token FROM bots WHERE token <> '' ORDER BY id`,
    )) {
      const token = fix(r.token, `bots ${r.id}`);
      if (token !== r.token)
        await q.run('UPDATE bots SET token = ? WHERE id = ? AND token = ?', [token, r.id, r.token]);
    }
    // Values plugins stored sealed (a Matrix device's keys): only sealed again, a clear value being no secret.
    for (const r of await q.all<{ instance_id: string; key: string; value: string }>(
      `SELECT instance_id, key, value FROM plugin_store WHERE value LIKE 'enc:v1:%' ORDER BY instance_id, key`,
    )) {
      const value = fix(r.value, `plugin_store ${r.instance_id}`);
      if (value !== r.value)
        await q.run('UPDATE plugin_store SET value = ? WHERE instance_id = ? AND key = ? AND value = ?', [
          value,
          r.instance_id,
          r.key,
          r.value,
        ]);
    }
    // Last, so a rotation moves the check together with the secrets.
    const now = core.clock.now().toISOString();
    if (check.state === 'missing')
      await q.run(
        'INSERT INTO secret_key_check (id, sealed, updated_at) VALUES (1, ?, ?) ON CONFLICT (id) DO NOTHING',
        [atRest.seal(CHECK), now],
      );
    else if (check.state === 'previous')
      await q.run('UPDATE secret_key_check SET sealed = ?, updated_at = ? WHERE id = 1 AND sealed = ?', [
        atRest.seal(CHECK),
        now,
        check.sealed,
      ]);
  });
  const log = core.logs.get('secrets');
  if (out.sealed || out.resealed)
    log.info(
      { sealed: out.sealed, resealed: out.resealed },
      out.resealed ? 'stored secrets sealed again with the new SERVICE_SECRET_KEY' : 'stored secrets sealed at rest',
    );
  if (out.unreadable.length) {
    log.error(
      { records: out.unreadable.slice(0, 50), count: out.unreadable.length },
      'stored secrets that SERVICE_SECRET_KEY cannot decrypt (sealed with another key, or damaged): these ' +
        'records fail until their secrets are entered again',
    );
  }
  return out;
}

/** Which key opens the key check (`missing` before the first boot of this version); refuses boot when none does. */
async function checkKey(
  q: Queryable,
  atRest: SecretsAtRest,
): Promise<{ state: 'current' | 'previous' | 'missing'; sealed?: string }> {
  const row = await q.get<{ sealed: string }>('SELECT sealed FROM secret_key_check WHERE id = 1');
  if (!row) return { state: 'missing' };
  const state = atRest.state(row.sealed);
  if ((state === 'current' || state === 'previous') && atRest.open(row.sealed) === CHECK)
    return { state, sealed: row.sealed };
  throw new ConfigurationError(
    "SERVICE_SECRET_KEY is not the key this database's secrets were sealed with; start with that key, or, " +
      'to change keys, set the old one as SERVICE_SECRET_KEY_PREVIOUS beside the new SERVICE_SECRET_KEY for ' +
      'a boot (see "Rotating the secret key" in the README)',
  );
}
