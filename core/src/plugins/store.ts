import type { InstanceStore } from '../plugin-api/index.ts';
import type { Queryable } from '../db/database.ts';

/** The per-instance key/value store, in the database so it survives restarts and is shared by replicas. */
export class DbInstanceStore implements InstanceStore {
  private db: Queryable;
  private instanceId: string;
  private now: () => Date;
  constructor(db: Queryable, instanceId: string, now: () => Date = () => new Date()) {
    this.db = db; this.instanceId = instanceId; this.now = now;
  }

  private expiry(ttl?: number): string | null { return ttl ? new Date(this.now().getTime() + ttl * 1000).toISOString() : null; }

  /**
   * A key the core wrote on an event for a webhook provider (its replay key, value 1: see
   * migrations/0024) reads like one set here, so a plugin's duplicate check sees both in one query.
   */
  async get<T>(key: string): Promise<T | undefined> {
    const rows = await this.db.all<{ value: string; expires_at: string | null }>(`SELECT value, expires_at FROM plugin_store WHERE instance_id = ? AND key = ?
      UNION ALL SELECT '1' AS value, replay_expires_at AS expires_at FROM event_log WHERE provider_id = ? AND replay_key = ?`, [this.instanceId, key, this.instanceId, key]);
    const now = this.now().toISOString();
    const row = rows.find((r) => !r.expires_at || r.expires_at > now);
    return row ? JSON.parse(row.value) as T : undefined;
  }

  async set(key: string, value: unknown, o?: { ttlSeconds?: number }): Promise<void> {
    await this.db.run(`INSERT INTO plugin_store (instance_id, key, value, expires_at) VALUES (?, ?, ?, ?)
      ON CONFLICT (instance_id, key) DO UPDATE SET value = excluded.value, expires_at = excluded.expires_at`, [this.instanceId, key, JSON.stringify(value ?? null), this.expiry(o?.ttlSeconds)]);
  }

  async setIfAbsent(key: string, value: unknown, o?: { ttlSeconds?: number }): Promise<boolean> {
    const now = this.now().toISOString();
    await this.db.run('DELETE FROM plugin_store WHERE instance_id = ? AND key = ? AND expires_at IS NOT NULL AND expires_at <= ?', [this.instanceId, key, now]);
    const n = await this.db.run(`INSERT INTO plugin_store (instance_id, key, value, expires_at) SELECT ?, ?, ?, ?
      WHERE NOT EXISTS (SELECT 1 FROM event_log WHERE provider_id = ? AND replay_key = ? AND (replay_expires_at IS NULL OR replay_expires_at > ?)) ON CONFLICT DO NOTHING`,
    [this.instanceId, key, JSON.stringify(value ?? null), this.expiry(o?.ttlSeconds), this.instanceId, key, now]);
    return n > 0;
  }

  async delete(key: string): Promise<void> {
    await this.db.run('DELETE FROM plugin_store WHERE instance_id = ? AND key = ?', [this.instanceId, key]);
    await this.db.run('UPDATE event_log SET replay_key = NULL, replay_expires_at = NULL WHERE provider_id = ? AND replay_key = ?', [this.instanceId, key]);
  }
}
