import type { Migration } from './types.ts';

/** Users, settings, per-instance plugin storage and the job-slot ledger. Timestamps are ISO 8601 UTC text. */
export default {
  id: '0001_core',
  up: (d) => [
    `CREATE TABLE IF NOT EXISTS users (
      id TEXT PRIMARY KEY,
      email TEXT NOT NULL UNIQUE,
      password_hash TEXT NOT NULL,
      role TEXT NOT NULL DEFAULT 'user' CHECK (role IN ('user', 'admin')),
      is_active ${d.bool} NOT NULL DEFAULT ${d.t},
      locale TEXT NOT NULL DEFAULT 'en',
      max_chats INTEGER NOT NULL DEFAULT 20,
      max_ai_messages_per_day INTEGER NULL,
      max_ai_tokens_per_day INTEGER NULL,
      created_at TEXT NOT NULL,
      updated_at TEXT NOT NULL
    )`,
    `CREATE TABLE IF NOT EXISTS settings (
      key TEXT PRIMARY KEY,
      value TEXT NOT NULL,
      updated_at TEXT NOT NULL
    )`,
    `CREATE TABLE IF NOT EXISTS plugin_store (
      instance_id TEXT NOT NULL,
      key TEXT NOT NULL,
      value TEXT NOT NULL,
      expires_at TEXT NULL,
      PRIMARY KEY (instance_id, key)
    )`,
    `CREATE TABLE IF NOT EXISTS job_runs (
      job TEXT NOT NULL,
      slot TEXT NOT NULL,
      replica TEXT NOT NULL,
      started_at TEXT NOT NULL,
      finished_at TEXT NULL,
      outcome TEXT NULL,
      PRIMARY KEY (job, slot)
    )`,
  ],
} satisfies Migration;
