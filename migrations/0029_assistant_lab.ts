import type { Migration } from './types.ts';

/** The columns of `actions` as 0002 created them, copied as they are when SQLite rebuilds the table. */
const ACTION_COLUMNS =
  'id, user_id, name, kind, schedule, timezone, config, enabled, last_run_at, last_status, last_error, ' +
  'next_run_at, created_at, updated_at';

/**
 * The assistant meets the relay.
 *
 * - `event_search`: the words of each event as its messages read (rendered titles and bodies in
 *   both languages, provider and type), one row per event, written by the assistant's event
 *   search before it searches (events that have none yet are indexed then) and gone with the
 *   event. Full-text indexed like memory entries: FTS5 on SQLite, a GIN `simple` index on
 *   PostgreSQL.
 * - `assistant_tool_calls`: what the assistant proposed to do (send a notification, schedule a
 *   message) and what the user decided: `pending` until approved, refused or expired (10 minutes),
 *   then `done` or `failed` with its result.
 * - `chats.event_id`: a chat opened with "Ask the assistant" on an event; its replies carry that event.
 * - `actions.kind` may be `ai_digest`. SQLite cannot change a CHECK constraint, so the table is
 *   rebuilt with the same columns and rows; PostgreSQL swaps the constraint.
 *
 * SQLite has no `ADD COLUMN IF NOT EXISTS`: skipped once `chats.event_id` exists.
 */
export default {
  id: '0029_assistant_lab',
  pending: (d) =>
    d.name === 'sqlite'
      ? `SELECT 1 - COUNT(*) AS n FROM pragma_table_info('chats') WHERE name = 'event_id'`
      : 'SELECT 1 AS n',
  up: (d) => {
    const common = [
      `CREATE TABLE IF NOT EXISTS event_search (
        event_id TEXT PRIMARY KEY REFERENCES event_log(id) ON DELETE CASCADE,
        user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        content TEXT NOT NULL
      )`,
      'CREATE INDEX IF NOT EXISTS event_search_user ON event_search (user_id)',
      `CREATE TABLE IF NOT EXISTS assistant_tool_calls (
        id TEXT PRIMARY KEY,
        user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        chat_id TEXT NOT NULL REFERENCES chats(id) ON DELETE CASCADE,
        message_id TEXT NOT NULL,
        name TEXT NOT NULL,
        arguments ${d.json} NOT NULL,
        status TEXT NOT NULL DEFAULT 'pending',
        result ${d.json} NULL,
        expires_at TEXT NOT NULL,
        decided_at TEXT NULL,
        created_at TEXT NOT NULL
      )`,
      'CREATE INDEX IF NOT EXISTS assistant_tool_calls_chat ON assistant_tool_calls (chat_id, id)',
    ];
    if (d.name === 'postgresql') {
      return [
        ...common,
        `CREATE INDEX IF NOT EXISTS event_search_fts ON event_search USING GIN (to_tsvector('simple', content))`,
        'ALTER TABLE chats ADD COLUMN IF NOT EXISTS event_id TEXT NULL',
        'ALTER TABLE actions DROP CONSTRAINT IF EXISTS actions_kind_check',
        `ALTER TABLE actions ADD CONSTRAINT actions_kind_check CHECK (kind IN ('digest', 'message', 'ai_digest'))`,
      ];
    }
    return [
      ...common,
      `CREATE VIRTUAL TABLE IF NOT EXISTS event_search_fts USING fts5(content, content='event_search', ` +
        `content_rowid='rowid', tokenize='unicode61 remove_diacritics 2')`,
      `CREATE TRIGGER IF NOT EXISTS event_search_fts_ai AFTER INSERT ON event_search BEGIN
        INSERT INTO event_search_fts (rowid, content) VALUES (new.rowid, new.content);
      END`,
      `CREATE TRIGGER IF NOT EXISTS event_search_fts_ad AFTER DELETE ON event_search BEGIN
        INSERT INTO event_search_fts (event_search_fts, rowid, content) VALUES ('delete', old.rowid, old.content);
      END`,
      `CREATE TRIGGER IF NOT EXISTS event_search_fts_au AFTER UPDATE OF content ON event_search BEGIN
        INSERT INTO event_search_fts (event_search_fts, rowid, content) VALUES ('delete', old.rowid, old.content);
        INSERT INTO event_search_fts (rowid, content) VALUES (new.rowid, new.content);
      END`,
      'ALTER TABLE chats ADD COLUMN event_id TEXT NULL',
      `CREATE TABLE actions_0029 (
        id TEXT PRIMARY KEY,
        user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        name TEXT NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('digest', 'message', 'ai_digest')),
        schedule TEXT NOT NULL,
        timezone TEXT NOT NULL DEFAULT 'UTC',
        config ${d.json} NOT NULL DEFAULT '{}',
        enabled ${d.bool} NOT NULL DEFAULT ${d.t},
        last_run_at TEXT NULL,
        last_status TEXT NULL,
        last_error TEXT NULL,
        next_run_at TEXT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      )`,
      `INSERT INTO actions_0029 (${ACTION_COLUMNS}) SELECT ${ACTION_COLUMNS} FROM actions`,
      'DROP TABLE actions',
      'ALTER TABLE actions_0029 RENAME TO actions',
      'CREATE INDEX IF NOT EXISTS actions_due ON actions (enabled, next_run_at)',
    ];
  },
} satisfies Migration;
