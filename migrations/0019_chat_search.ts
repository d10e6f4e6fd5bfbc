import type { Migration } from './types.ts';

/**
 * Chat titles, search and tool records. `chats.title_auto` marks a chat whose title the service
 * may still generate (created without a title, never renamed); `chat_messages.tools` keeps the
 * tool calls of an assistant reply (JSON). Titles and message contents are full-text indexed
 * (FTS5 on SQLite, GIN `simple` indexes on PostgreSQL).
 */
export default {
  id: '0019_chat_search',
  // SQLite cannot guard ADD COLUMN: skipped when the column is already there.
  pending: (d) =>
    d.name === 'sqlite'
      ? `SELECT 1 - COUNT(*) AS n FROM pragma_table_info('chats') WHERE name = 'title_auto'`
      : 'SELECT 1 AS n',
  up: (d) =>
    d.name === 'sqlite'
      ? [
          `ALTER TABLE chats ADD COLUMN title_auto INTEGER NOT NULL DEFAULT 0`,
          `ALTER TABLE chat_messages ADD COLUMN tools TEXT NULL`,
          `CREATE VIRTUAL TABLE IF NOT EXISTS chats_fts USING fts5(title, content='chats', content_rowid='rowid', ` +
            `tokenize='unicode61 remove_diacritics 2')`,
          `CREATE TRIGGER IF NOT EXISTS chats_fts_ai AFTER INSERT ON chats BEGIN
        INSERT INTO chats_fts (rowid, title) VALUES (new.rowid, new.title);
      END`,
          `CREATE TRIGGER IF NOT EXISTS chats_fts_ad AFTER DELETE ON chats BEGIN
        INSERT INTO chats_fts (chats_fts, rowid, title) VALUES ('delete', old.rowid, old.title);
      END`,
          `CREATE TRIGGER IF NOT EXISTS chats_fts_au AFTER UPDATE OF title ON chats BEGIN
        INSERT INTO chats_fts (chats_fts, rowid, title) VALUES ('delete', old.rowid, old.title);
        INSERT INTO chats_fts (rowid, title) VALUES (new.rowid, new.title);
      END`,
          `INSERT INTO chats_fts (chats_fts) VALUES ('rebuild')`,
          `CREATE VIRTUAL TABLE IF NOT EXISTS chat_messages_fts USING fts5(content, content='chat_messages', ` +
            `content_rowid='rowid', tokenize='unicode61 remove_diacritics 2')`,
          `CREATE TRIGGER IF NOT EXISTS chat_messages_fts_ai AFTER INSERT ON chat_messages BEGIN
        INSERT INTO chat_messages_fts (rowid, content) VALUES (new.rowid, new.content);
      END`,
          `CREATE TRIGGER IF NOT EXISTS chat_messages_fts_ad AFTER DELETE ON chat_messages BEGIN
        INSERT INTO chat_messages_fts (chat_messages_fts, rowid, content) VALUES ('delete', old.rowid, old.content);
      END`,
          `CREATE TRIGGER IF NOT EXISTS chat_messages_fts_au AFTER UPDATE OF content ON chat_messages BEGIN
        INSERT INTO chat_messages_fts (chat_messages_fts, rowid, content) VALUES ('delete', old.rowid, old.content);
        INSERT INTO chat_messages_fts (rowid, content) VALUES (new.rowid, new.content);
      END`,
          `INSERT INTO chat_messages_fts (chat_messages_fts) VALUES ('rebuild')`,
        ]
      : [
          `ALTER TABLE chats ADD COLUMN IF NOT EXISTS title_auto BOOLEAN NOT NULL DEFAULT FALSE`,
          `ALTER TABLE chat_messages ADD COLUMN IF NOT EXISTS tools TEXT NULL`,
          `CREATE INDEX IF NOT EXISTS chats_fts ON chats USING GIN (to_tsvector('simple', title))`,
          `CREATE INDEX IF NOT EXISTS chat_messages_fts ON chat_messages USING GIN (to_tsvector('simple', content))`,
        ],
} satisfies Migration;
