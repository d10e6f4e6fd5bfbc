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

  async get<T>(key: string): Promise<T | undefined> {
    const row = await this.db.get<{ value: string; expires_at: string | null }>('SELECT value, expires_at FROM plugin_store WHERE instance_id = ? AND key = ?', [this.instanceId, key]);
    if (!row || (row.expires_at && row.expires_at <= this.now().toISOString())) return undefined;
    return JSON.parse(row.value) as T;
  }

  async set(key: string, value: unknown, o?: { ttlSeconds?: number }): Promise<void> {
    await this.db.run(`INSERT INTO plugin_store (instance_id, key, value, expires_at) VALUES (?, ?, ?, ?)
      ON CONFLICT (instance_id, key) DO UPDATE SET value = excluded.value, expires_at = excluded.expires_at`, [this.instanceId, key, JSON.stringify(value ?? null), this.expiry(o?.ttlSeconds)]);
  }

  async setIfAbsent(key: string, value: unknown, o?: { ttlSeconds?: number }): Promise<boolean> {
    const now = this.now().toISOString();
    await this.db.run('DELETE FROM plugin_store WHERE instance_id = ? AND key = ? AND expires_at IS NOT NULL AND expires_at <= ?', [this.instanceId, key, now]);
    const n = await this.db.run('INSERT INTO plugin_store (instance_id, key, value, expires_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING',
      [this.instanceId, key, JSON.stringify(value ?? null), this.expiry(o?.ttlSeconds)]);
    return n > 0;
  }

  async delete(key: string): Promise<void> {
    await this.db.run('DELETE FROM plugin_store WHERE instance_id = ? AND key = ?', [this.instanceId, key]);
  }
}
