import type { Migration } from './types.ts';

/**
 * Documents split into searchable chunks: each chunk is a bounded run of one page (PDFs) or of the
 * text (other kinds), with its page number where there is one. Full-text indexed like memory
 * entries (FTS5 on SQLite, a GIN `simple` index on PostgreSQL). Documents uploaded before this
 * migration are chunked the first time their owner searches.
 */
export default {
  id: '0018_document_chunks',
  up: (d) => [
    `CREATE TABLE IF NOT EXISTS document_chunks (
      id TEXT PRIMARY KEY,
      document_id TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
      user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      seq INTEGER NOT NULL,
      page INTEGER NULL,
      content TEXT NOT NULL
    )`,
    `CREATE INDEX IF NOT EXISTS document_chunks_document ON document_chunks (document_id, seq)`,
    `CREATE INDEX IF NOT EXISTS document_chunks_user ON document_chunks (user_id)`,
    ...(d.name === 'sqlite'
      ? [
          `CREATE VIRTUAL TABLE IF NOT EXISTS document_chunks_fts USING fts5(content, content='document_chunks', ` +
            `content_rowid='rowid', tokenize='unicode61 remove_diacritics 2')`,
          `CREATE TRIGGER IF NOT EXISTS document_chunks_fts_ai AFTER INSERT ON document_chunks BEGIN
          INSERT INTO document_chunks_fts (rowid, content) VALUES (new.rowid, new.content);
        END`,
          `CREATE TRIGGER IF NOT EXISTS document_chunks_fts_ad AFTER DELETE ON document_chunks BEGIN
          INSERT INTO document_chunks_fts (document_chunks_fts, rowid, content) VALUES ('delete', ` +
            `old.rowid, old.content);
        END`,
        ]
      : [
          `CREATE INDEX IF NOT EXISTS document_chunks_fts ON document_chunks USING GIN (to_tsvector('simple', ` +
            'content))',
        ]),
  ],
} satisfies Migration;
