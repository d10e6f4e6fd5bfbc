import type { Queryable } from '../db/database.ts';

/** Operator settings with their seeded defaults. Values are stored as strings. */
export const SETTING_DEFAULTS = {
  self_registration_enabled: 'false',
  default_max_chats: '20',
  default_max_ai_messages_per_day: '100',
  default_max_ai_tokens_per_day: '500000',
  backup_scheduled_enabled: 'false',
  backup_scheduled_interval_hours: '24',
  backup_secrets_mode: 'exclude',
  backup_retention_count: '7',
} as const;

export type SettingKey = keyof typeof SETTING_DEFAULTS;

export class Settings {
  private db: Queryable;
  constructor(db: Queryable) {
    this.db = db;
  }

  async get(key: SettingKey): Promise<string> {
    const row = await this.db.get<{ value: string }>('SELECT value FROM settings WHERE key = ?', [key]);
    return row?.value ?? SETTING_DEFAULTS[key];
  }

  async all(): Promise<Record<SettingKey, string>> {
    const out: Record<string, string> = { ...SETTING_DEFAULTS };
    for (const r of await this.db.all<{ key: string; value: string }>('SELECT key, value FROM settings'))
      if (r.key in out) out[r.key] = r.value;
    return out as Record<SettingKey, string>;
  }

  async getInt(key: SettingKey): Promise<number> {
    return Number.parseInt(await this.get(key), 10);
  }
  async getBool(key: SettingKey): Promise<boolean> {
    return (await this.get(key)) === 'true';
  }

  async set(values: Partial<Record<SettingKey, string>>, q: Queryable = this.db): Promise<void> {
    const now = new Date().toISOString();
    for (const [key, value] of Object.entries(values)) {
      if (value === undefined) continue;
      await q.run(
        'INSERT INTO settings (key, value, updated_at) VALUES (?, ?, ?) ON CONFLICT (key) DO UPDATE SET ' +
          'value = excluded.value, updated_at = excluded.updated_at',
        [key, value, now],
      );
    }
  }
}
