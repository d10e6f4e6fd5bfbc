import type { Migration } from './types.ts';

/**
 * Full-text search over memory entries, and the "always include" flag (entries that go into every
 * reply's personal layer). SQLite: an FTS5 index over `memory_entries` (external content, kept in
 * sync by triggers, unicode61 tokens with diacritics folded). PostgreSQL: a GIN index over the
 * `simple` text-search configuration (no stemming: queries match word prefixes, see fts.ts).
 */
export default {
  id: '0017_memory_search',
  // SQLite cannot guard ADD COLUMN: skipped when the column is already there.
  pending: (d) =>
    d.name === 'sqlite'
      ? `SELECT 1 - COUNT(*) AS n FROM pragma_table_info('memory_entries') WHERE name = 'always_include'`
      : 'SELECT 1 AS n',
  up: (d) =>
    d.name === 'sqlite'
      ? [
          `ALTER TABLE memory_entries ADD COLUMN always_include INTEGER NOT NULL DEFAULT 0`,
          `CREATE VIRTUAL TABLE IF NOT EXISTS memory_fts USING fts5(content, category, content='memory_entries', ` +
            `content_rowid='rowid', tokenize='unicode61 remove_diacritics 2')`,
          `CREATE TRIGGER IF NOT EXISTS memory_fts_ai AFTER INSERT ON memory_entries BEGIN
        INSERT INTO memory_fts (rowid, content, category) VALUES (new.rowid, new.content, new.category);
      END`,
          `CREATE TRIGGER IF NOT EXISTS memory_fts_ad AFTER DELETE ON memory_entries BEGIN
        INSERT INTO memory_fts (memory_fts, rowid, content, category) VALUES ('delete', old.rowid, ` +
            `old.content, old.category);
      END`,
          `CREATE TRIGGER IF NOT EXISTS memory_fts_au AFTER UPDATE OF content, category ON memory_entries BEGIN
        INSERT INTO memory_fts (memory_fts, rowid, content, category) VALUES ('delete', old.rowid, ` +
            `old.content, old.category);
        INSERT INTO memory_fts (rowid, content, category) VALUES (new.rowid, new.content, ` +
            `new.category);
      END`,
          `INSERT INTO memory_fts (memory_fts) VALUES ('rebuild')`,
        ]
      : [
          `ALTER TABLE memory_entries ADD COLUMN IF NOT EXISTS always_include BOOLEAN NOT NULL DEFAULT FALSE`,
          `CREATE INDEX IF NOT EXISTS memory_entries_fts ON memory_entries USING GIN (to_tsvector('simple', ` +
            `content || ' ' || coalesce(category, '')))`,
        ],
} satisfies Migration;
