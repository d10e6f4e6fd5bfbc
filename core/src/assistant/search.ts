/**
 * Full-text searches over what a user owns: memory entries, document chunks, chat titles and
 * messages. Every query is bound to the caller's user id; the words come from fts.ts, so no
 * input can change the query syntax. `GET /api/v1/search` searches the caller's chats.
 */
import Type from 'typebox';
import { caller, requireUser } from '../auth/guard.ts';
import type { Core } from '../core.ts';
import type { Database, Queryable } from '../db/database.ts';
import { newId } from '../http/ids.ts';
import { ok } from '../http/schemas.ts';
import type { App } from '../http/server.ts';
import { SearchResults } from './definitions/search.ts';
import { chunkDocument } from './document-text.ts';
import { excerpt, ftsQuery, ftsTerms, type Mode } from './fts.ts';
import { bool } from './paths.ts';

export interface MemoryHit {
  id: string;
  content: string;
  category: string | null;
  recorded_at: string | null;
  always_include: boolean;
}
export interface ChunkHit {
  document_id: string;
  filename: string;
  page: number | null;
  content: string;
}

const MEMORY_TSV = `to_tsvector('simple', m.content || ' ' || coalesce(m.category, ''))`;

/** The caller's memory entries matching `query`, best first. */
export async function searchMemory(
  db: Queryable,
  userId: string,
  query: string,
  limit: number,
  mode: Mode = 'any',
): Promise<MemoryHit[]> {
  const terms = ftsTerms(query);
  if (!terms.length) return [];
  const match = ftsQuery(db.dialect, terms, mode);
  const rows =
    db.dialect === 'sqlite'
      ? await db.all<MemoryHit & { always_include: unknown }>(
          `SELECT m.id, m.content, m.category, m.recorded_at, m.always_include FROM memory_fts JOIN memory_entries m ON
            m.rowid = memory_fts.rowid
       WHERE memory_fts MATCH ? AND m.user_id = ? ORDER BY bm25(memory_fts), m.id DESC LIMIT ?`,
          [match, userId, limit],
        )
      : await db.all<MemoryHit & { always_include: unknown }>(
          `SELECT m.id, m.content, m.category, m.recorded_at, m.always_include FROM memory_entries m
       WHERE m.user_id = ? AND ${MEMORY_TSV} @@ to_tsquery('simple', ?)
       ORDER BY ts_rank(${MEMORY_TSV}, to_tsquery('simple', ?)) DESC, m.id DESC LIMIT ?`,
          [userId, match, match, limit],
        );
  return rows.map((r) => ({ ...r, always_include: bool(r.always_include) }));
}

/** Whether the user has any memory entry and any document (what the search tools could find). */
export async function searchableBy(db: Queryable, userId: string): Promise<{ memory: boolean; documents: boolean }> {
  const row = await db.get<{ m: unknown; d: unknown }>(
    `SELECT (SELECT COUNT(*) FROM (SELECT 1 AS x FROM memory_entries WHERE user_id = ? LIMIT 1) a) AS m,
            (SELECT COUNT(*) FROM (SELECT 1 AS x FROM documents WHERE user_id = ? LIMIT 1) b) AS d`,
    [userId, userId],
  );
  return { memory: Number(row?.m ?? 0) > 0, documents: Number(row?.d ?? 0) > 0 };
}

/** Splits a document into chunks and stores them (in `q`, the upload's transaction). */
export async function storeChunks(
  q: Queryable,
  doc: { id: string; user_id: string; content: string },
  pages: string[] | null,
): Promise<void> {
  const chunks = chunkDocument(doc.content, pages);
  for (let i = 0; i < chunks.length; i++) {
    await q.run(
      'INSERT INTO document_chunks (id, document_id, user_id, seq, page, content) VALUES (?, ?, ?, ?, ?, ?)',
      [newId(), doc.id, doc.user_id, i, chunks[i]!.page, chunks[i]!.content],
    );
  }
}

/** Chunks the caller's documents uploaded before chunking existed (no page numbers are known for them). */
async function backfillChunks(db: Database, userId: string): Promise<void> {
  const missing = await db.all<{ id: string; user_id: string; content: string }>(
    'SELECT d.id, d.user_id, d.content FROM documents d WHERE d.user_id = ? AND NOT EXISTS (SELECT 1 FROM ' +
      'document_chunks c WHERE c.document_id = d.id)',
    [userId],
  );
  for (const doc of missing) {
    await db.tx(async (q) => {
      if (await q.get('SELECT 1 AS x FROM document_chunks WHERE document_id = ?', [doc.id])) return;
      await storeChunks(q, doc, null);
    });
  }
}

/** The caller's document chunks matching `query`, best first, each with its document's name and page. */
export async function searchChunks(
  db: Database,
  userId: string,
  query: string,
  limit: number,
  mode: Mode = 'any',
): Promise<ChunkHit[]> {
  const terms = ftsTerms(query);
  if (!terms.length) return [];
  await backfillChunks(db, userId);
  const match = ftsQuery(db.dialect, terms, mode);
  const rows =
    db.dialect === 'sqlite'
      ? await db.all<ChunkHit>(
          `SELECT c.document_id, d.filename, c.page, c.content FROM document_chunks_fts JOIN document_chunks c ON
            c.rowid = document_chunks_fts.rowid
       JOIN documents d ON d.id = c.document_id
       WHERE document_chunks_fts MATCH ? AND c.user_id = ? ORDER BY bm25(document_chunks_fts), c.id LIMIT ?`,
          [match, userId, limit],
        )
      : await db.all<ChunkHit>(
          `SELECT c.document_id, d.filename, c.page, c.content FROM document_chunks c JOIN documents d ON d.id =
            c.document_id
       WHERE c.user_id = ? AND to_tsvector('simple', c.content) @@ to_tsquery('simple', ?)
       ORDER BY ts_rank(to_tsvector('simple', c.content), to_tsquery('simple', ?)) DESC, c.id LIMIT ?`,
          [userId, match, match, limit],
        );
  return rows.map((r) => ({ ...r, page: r.page === null ? null : Number(r.page) }));
}

export interface ChatHit {
  chat_id: string;
  chat_title: string;
  message_id: string | null;
  role: 'user' | 'assistant' | null;
  snippet: string;
  created_at: string;
}

/** Longest snippet of a search result, in characters. */
const SNIPPET_CHARS = 160;

/** The caller's chats whose title matches, then messages whose text matches, each list best first. */
export async function searchChats(db: Queryable, userId: string, query: string, limit: number): Promise<ChatHit[]> {
  const terms = ftsTerms(query);
  if (!terms.length) return [];
  const match = ftsQuery(db.dialect, terms, 'all');
  type TitleRow = { id: string; title: string; updated_at: string };
  type MessageRow = {
    id: string;
    chat_id: string;
    role: 'user' | 'assistant';
    content: string;
    created_at: string;
    title: string;
  };
  const sqlite = db.dialect === 'sqlite';
  const titles = sqlite
    ? await db.all<TitleRow>(
        `SELECT c.id, c.title, c.updated_at FROM chats_fts JOIN chats c ON c.rowid = chats_fts.rowid
        WHERE chats_fts MATCH ? AND c.user_id = ? ORDER BY bm25(chats_fts), c.id DESC LIMIT ?`,
        [match, userId, limit],
      )
    : await db.all<TitleRow>(
        `SELECT c.id, c.title, c.updated_at FROM chats c
        WHERE c.user_id = ? AND to_tsvector('simple', c.title) @@ to_tsquery('simple', ?)
        ORDER BY ts_rank(to_tsvector('simple', c.title), to_tsquery('simple', ?)) DESC, c.id DESC LIMIT ?`,
        [userId, match, match, limit],
      );
  const messages = sqlite
    ? await db.all<MessageRow>(
        `SELECT m.id, m.chat_id, m.role, m.content, m.created_at, c.title FROM chat_messages_fts
        JOIN chat_messages m ON m.rowid = chat_messages_fts.rowid JOIN chats c ON c.id = m.chat_id
        WHERE chat_messages_fts MATCH ? AND m.user_id = ? ORDER BY bm25(chat_messages_fts), m.id DESC LIMIT ?`,
        [match, userId, limit],
      )
    : await db.all<MessageRow>(
        `SELECT m.id, m.chat_id, m.role, m.content, m.created_at, c.title FROM chat_messages m JOIN chats c ON c.id =
          m.chat_id
        WHERE m.user_id = ? AND to_tsvector('simple', m.content) @@ to_tsquery('simple', ?)
        ORDER BY ts_rank(to_tsvector('simple', m.content), to_tsquery('simple', ?)) DESC, m.id DESC LIMIT ?`,
        [userId, match, match, limit],
      );
  return [
    ...titles.map((c) => ({
      chat_id: c.id,
      chat_title: c.title,
      message_id: null,
      role: null,
      snippet: excerpt(c.title, terms, SNIPPET_CHARS),
      created_at: c.updated_at,
    })),
    ...messages.map((m) => ({
      chat_id: m.chat_id,
      chat_title: m.title,
      message_id: m.id,
      role: m.role,
      snippet: excerpt(m.content, terms, SNIPPET_CHARS),
      created_at: m.created_at,
    })),
  ].slice(0, limit);
}

const SearchQuery = Type.Object({
  q: Type.String({
    minLength: 1,
    maxLength: 200,
    description: 'Words to find; every word must occur (as a word prefix).',
  }),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
});
/** `GET /api/v1/search`: the caller's chat titles and messages matching `q`. */
export async function searchRoutes(app: App, core: Core): Promise<void> {
  app.get(
    '/api/v1/search',
    {
      schema: {
        tags: ['assistant'],
        summary: "Search the caller's chats: titles first, then messages, each ranked; a message hit carries its id",
        querystring: SearchQuery,
        response: {
          ...ok('The matches (`results`), chat titles first, then messages.', SearchResults),
        },
      },
      preHandler: requireUser(core),
    },
    async (req) => {
      const q = req.query;
      return { results: await searchChats(core.db, caller(req).id, q.q, q.limit ?? 20) };
    },
  );
}
