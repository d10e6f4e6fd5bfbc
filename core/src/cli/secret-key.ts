/**
 * Whether SERVICE_SECRET_KEY opens this database's secrets, read without writing anything: the
 * same key check the service's start makes (secrets/seal-stored.ts), which refuses a wrong key.
 */
import type { Queryable } from '../db/database.ts';
import { Database as Db } from '../db/database.ts';
import type { SecretsAtRest } from '../secrets/at-rest.ts';
import { isSealed } from '../secrets/at-rest.ts';
import { CliError } from './output.ts';

/** The clear value the service seals into `secret_key_check` (seal-stored.ts, `CHECK`). */
const KEY_CHECK = 'herald secret key check v1';

/**
 * `current` or `previous`: that key opens the check value; `wrong`: neither does; `missing`: no
 * check value yet (a database the service has not started on since sealing began).
 */
export type KeyState = 'current' | 'previous' | 'wrong' | 'missing';

export async function keyState(q: Queryable, atRest: SecretsAtRest): Promise<KeyState> {
  let row: { sealed: string } | undefined;
  try {
    row = await q.get<{ sealed: string }>('SELECT sealed FROM secret_key_check WHERE id = 1');
  } catch {
    return 'missing';
  }
  if (!row) return 'missing';
  const state = atRest.state(row.sealed);
  if ((state === 'current' || state === 'previous') && atRest.open(row.sealed) === KEY_CHECK) return state;
  return 'wrong';
}

/** Refuses, as the service's start does, when the key does not open the database's secrets. */
export async function requireKey(q: Queryable, atRest: SecretsAtRest): Promise<void> {
  if ((await keyState(q, atRest)) === 'wrong') throw new CliError('secrets.wrong_key');
}

/**
 * Sealed values stored in records that no configured key opens (`providers <id>`, `bots <id>`…):
 * every string of a config that carries the sealed prefix, whatever the plugin, bot tokens, and
 * values plugins stored sealed in their instance store (`plugin_store <instance id>`).
 */
export async function unreadableSecrets(q: Queryable, atRest: SecretsAtRest): Promise<string[]> {
  const found: string[] = [];
  const walk = (v: unknown): boolean => {
    if (typeof v === 'string') return isSealed(v) && atRest.state(v) === 'unreadable';
    if (Array.isArray(v)) return v.some(walk);
    if (v && typeof v === 'object') return Object.values(v).some(walk);
    return false;
  };
  for (const table of ['providers', 'trackers', 'targets']) {
    for (const r of await q.all<{ id: string; config: unknown }>(`SELECT id, config FROM ${table} ORDER BY id`)) {
      if (walk(Db.json(r.config, null))) found.push(`${table} ${r.id}`);
    }
  }
  for (const r of await q.all<{ id: string; token: string }>(
    `SELECT id, token FROM bots WHERE token <> '' ORDER BY id`,
  )) {
    if (isSealed(r.token) && atRest.state(r.token) === 'unreadable') found.push(`bots ${r.id}`);
  }
  for (const r of await q.all<{ instance_id: string; value: string }>(
    `SELECT instance_id, value FROM plugin_store WHERE value LIKE 'enc:v1:%' ORDER BY instance_id, key`,
  )) {
    const where = `plugin_store ${r.instance_id}`;
    if (atRest.state(r.value) === 'unreadable' && !found.includes(where)) found.push(where);
  }
  return found;
}
