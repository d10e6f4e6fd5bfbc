import type { Queryable } from '../db/database.ts';
import type { InstanceStore, StoreSetOptions } from '../plugin-api/index.ts';
import { isSealed, type SecretsAtRest } from '../secrets/at-rest.ts';

/**
 * The per-instance key/value store, in the database so it survives restarts and is shared by replicas.
 *
 * `value` holds the JSON of the value, or, for one set with `sealed`, the sealed JSON (`enc:v1:…`,
 * `SecretsAtRest`) as it is: no JSON text starts with `e`, so the two cannot be confused.
 */
export class DbInstanceStore implements InstanceStore {
  private db: Queryable;
  private instanceId: string;
  private now: () => Date;
  private atRest?: SecretsAtRest;
  constructor(db: Queryable, instanceId: string, now: () => Date = () => new Date(), atRest?: SecretsAtRest) {
    this.db = db;
    this.instanceId = instanceId;
    this.now = now;
    this.atRest = atRest;
  }

  private encode(json: string, sealed?: boolean): string {
    if (!sealed) return json;
    if (!this.atRest) throw new Error('this instance store cannot seal values (no secret key given)');
    return this.atRest.seal(json);
  }

  /**
   * Whether a stored value already is `json` as `set` would store it: the same JSON, plain or
   * sealed as asked (a sealed one opened, and sealed with the current key).
   */
  private holds(stored: string, json: string, sealed?: boolean): boolean {
    if (!sealed) return stored === json;
    if (!this.atRest || !isSealed(stored) || this.atRest.state(stored) !== 'current') return false;
    return this.atRest.open(stored) === json;
  }

  private decode<T>(stored: string): T {
    if (!isSealed(stored)) return JSON.parse(stored) as T;
    if (!this.atRest)
      throw Object.assign(
        new Error('a sealed value of this plugin instance cannot be read here (no secret key given)'),
        { code: 'CONFIG' },
      );
    return JSON.parse(this.atRest.open(stored, 'a value this plugin instance stored sealed')) as T;
  }

  private expiry(ttl?: number): string | null {
    return ttl ? new Date(this.now().getTime() + ttl * 1000).toISOString() : null;
  }

  /**
   * A key the core wrote on an event for a webhook provider (its replay key, value 1: see
   * migrations/0024) reads like one set here, so a plugin's duplicate check sees both in one query.
   */
  async get<T>(key: string): Promise<T | undefined> {
    const rows = await this.db.all<{ value: string; expires_at: string | null }>(
      `SELECT value, expires_at FROM plugin_store WHERE instance_id = ? AND key = ?
      UNION ALL SELECT '1' AS value, replay_expires_at AS expires_at FROM event_log WHERE provider_id = ? AND replay_key
      = ?`,
      [this.instanceId, key, this.instanceId, key],
    );
    const now = this.now().toISOString();
    const row = rows.find((r) => !r.expires_at || r.expires_at > now);
    return row ? this.decode<T>(row.value) : undefined;
  }

  /**
   * A value set again unchanged (same JSON, no expiry before or now) is not written: plugins that
   * save their state after every poll cost a read then, not a write commit.
   */
  async set(key: string, value: unknown, o?: StoreSetOptions): Promise<void> {
    const json = JSON.stringify(value ?? null);
    const expires = this.expiry(o?.ttlSeconds);
    if (expires === null) {
      const current = await this.db.get<{ value: string; expires_at: string | null }>(
        'SELECT value, expires_at FROM plugin_store WHERE instance_id = ? AND key = ?',
        [this.instanceId, key],
      );
      if (current && current.expires_at === null && this.holds(current.value, json, o?.sealed)) return;
    }
    await this.db.run(
      `INSERT INTO plugin_store (instance_id, key, value, expires_at) VALUES (?, ?, ?, ?)
      ON CONFLICT (instance_id, key) DO UPDATE SET value = excluded.value, expires_at = excluded.expires_at`,
      [this.instanceId, key, this.encode(json, o?.sealed), expires],
    );
  }

  async setIfAbsent(key: string, value: unknown, o?: StoreSetOptions): Promise<boolean> {
    const now = this.now().toISOString();
    await this.db.run(
      'DELETE FROM plugin_store WHERE instance_id = ? AND key = ? AND expires_at IS NOT NULL AND expires_at <= ?',
      [this.instanceId, key, now],
    );
    const n = await this.db.run(
      `INSERT INTO plugin_store (instance_id, key, value, expires_at) SELECT ?, ?, ?, ?
      WHERE NOT EXISTS (SELECT 1 FROM event_log WHERE provider_id = ? AND replay_key = ? AND (replay_expires_at IS NULL
      OR replay_expires_at > ?)) ON CONFLICT DO NOTHING`,
      [
        this.instanceId,
        key,
        this.encode(JSON.stringify(value ?? null), o?.sealed),
        this.expiry(o?.ttlSeconds),
        this.instanceId,
        key,
        now,
      ],
    );
    return n > 0;
  }

  async delete(key: string): Promise<void> {
    await this.db.run('DELETE FROM plugin_store WHERE instance_id = ? AND key = ?', [this.instanceId, key]);
    await this.db.run(
      'UPDATE event_log SET replay_key = NULL, replay_expires_at = NULL WHERE provider_id = ? AND replay_key = ?',
      [this.instanceId, key],
    );
  }
}
