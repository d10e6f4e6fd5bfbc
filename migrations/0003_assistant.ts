import type { Migration } from './types.ts';

/**
 * The assistant's records: skills, chats and messages, the primary and personal contexts, daily
 * usage counters, memory entries, uploaded documents and generated reports. Everything a user owns
 * references users(id) ON DELETE CASCADE, so deleting a user removes it all.
 */
export default {
  id: '0003_assistant',
  up: (d) => [
    `CREATE TABLE IF NOT EXISTS skills (
      id TEXT PRIMARY KEY,
      owner_id TEXT NULL REFERENCES users(id) ON DELETE CASCADE,
      scope TEXT NOT NULL CHECK (scope IN ('general', 'personal')),
      name TEXT NOT NULL,
      description TEXT NULL,
      prompt TEXT NOT NULL,
      created_at TEXT NOT NULL,
      updated_at TEXT NOT NULL,
      CHECK ((scope = 'general' AND owner_id IS NULL) OR (scope = 'personal' AND owner_id IS NOT NULL))
    )`,
    `CREATE INDEX IF NOT EXISTS skills_owner ON skills (owner_id)`,
    `CREATE TABLE IF NOT EXISTS chats (
      id TEXT PRIMARY KEY,
      user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      title TEXT NOT NULL,
      is_archived ${d.bool} NOT NULL DEFAULT ${d.f},
      skill_id TEXT NULL REFERENCES skills(id) ON DELETE SET NULL,
      created_at TEXT NOT NULL,
      updated_at TEXT NOT NULL
    )`,
    `CREATE INDEX IF NOT EXISTS chats_user ON chats (user_id, id)`,
    `CREATE INDEX IF NOT EXISTS chats_skill ON chats (skill_id)`,
    `CREATE TABLE IF NOT EXISTS chat_messages (
      id TEXT PRIMARY KEY,
      chat_id TEXT NOT NULL REFERENCES chats(id) ON DELETE CASCADE,
      user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      role TEXT NOT NULL CHECK (role IN ('user', 'assistant')),
      content TEXT NOT NULL,
      status TEXT NOT NULL DEFAULT 'complete' CHECK (status IN ('complete', 'interrupted', 'error')),
      prompt_tokens INTEGER NULL,
      completion_tokens INTEGER NULL,
      total_tokens INTEGER NULL,
      usage_estimated ${d.bool} NOT NULL DEFAULT ${d.f},
      context_version INTEGER NULL,
      error TEXT NULL,
      created_at TEXT NOT NULL
    )`,
    `CREATE INDEX IF NOT EXISTS chat_messages_chat ON chat_messages (chat_id, id)`,
    `CREATE INDEX IF NOT EXISTS chat_messages_user ON chat_messages (user_id)`,
    `CREATE TABLE IF NOT EXISTS primary_context (
      id INTEGER PRIMARY KEY CHECK (id = 1),
      content TEXT NOT NULL,
      version INTEGER NOT NULL,
      updated_by TEXT NULL REFERENCES users(id) ON DELETE SET NULL,
      updated_at TEXT NOT NULL
    )`,
    `CREATE TABLE IF NOT EXISTS personal_contexts (
      user_id TEXT PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
      content TEXT NOT NULL,
      updated_at TEXT NOT NULL
    )`,
    `CREATE TABLE IF NOT EXISTS ai_usage_daily (
      user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      day TEXT NOT NULL,
      messages INTEGER NOT NULL DEFAULT 0,
      tokens INTEGER NOT NULL DEFAULT 0,
      updated_at TEXT NOT NULL,
      PRIMARY KEY (user_id, day)
    )`,
    `CREATE INDEX IF NOT EXISTS ai_usage_daily_day ON ai_usage_daily (day)`,
    `CREATE TABLE IF NOT EXISTS memory_entries (
      id TEXT PRIMARY KEY,
      user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      content TEXT NOT NULL,
      category TEXT NULL,
      recorded_at TEXT NULL,
      search_text TEXT NOT NULL,
      created_at TEXT NOT NULL,
      updated_at TEXT NOT NULL
    )`,
    `CREATE INDEX IF NOT EXISTS memory_entries_user ON memory_entries (user_id, id)`,
    `CREATE TABLE IF NOT EXISTS documents (
      id TEXT PRIMARY KEY,
      user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      filename TEXT NOT NULL,
      media_type TEXT NOT NULL,
      size_bytes INTEGER NOT NULL,
      content TEXT NOT NULL,
      search_text TEXT NOT NULL,
      created_at TEXT NOT NULL
    )`,
    `CREATE INDEX IF NOT EXISTS documents_user ON documents (user_id, id)`,
    `CREATE TABLE IF NOT EXISTS reports (
      id TEXT PRIMARY KEY,
      user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      title TEXT NOT NULL,
      locale TEXT NOT NULL,
      size_bytes INTEGER NOT NULL,
      created_at TEXT NOT NULL
    )`,
    `CREATE INDEX IF NOT EXISTS reports_user ON reports (user_id, id)`,
  ],
} satisfies Migration;
