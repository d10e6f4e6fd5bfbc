import Type from 'typebox';
import type { App } from '../http/server.ts';
import type { Core } from '../core.ts';
import type { Queryable } from '../db/database.ts';
import { newId } from '../http/ids.ts';
import { requireUser, caller } from '../auth/guard.ts';
import { ChatParams, ownChat } from './chats.ts';
import { bool } from './paths.ts';

export type MessageStatus = 'complete' | 'interrupted' | 'error';
export interface Usage { prompt_tokens: number; completion_tokens: number; total_tokens: number }

export interface MessageRow {
  id: string; chat_id: string; user_id: string; role: 'user' | 'assistant'; content: string; status: MessageStatus;
  prompt_tokens: number | null; completion_tokens: number | null; total_tokens: number | null; usage_estimated: unknown;
  context_version: number | null; error: string | null; created_at: string;
}

export const MessageSchema = Type.Object({
  id: Type.String(), chat_id: Type.String(), role: Type.Union([Type.Literal('user'), Type.Literal('assistant')]), content: Type.String(),
  status: Type.Union([Type.Literal('complete'), Type.Literal('interrupted'), Type.Literal('error')]),
  usage: Type.Union([Type.Object({ prompt_tokens: Type.Integer(), completion_tokens: Type.Integer(), total_tokens: Type.Integer(), estimated: Type.Boolean() }), Type.Null()]),
  context_version: Type.Union([Type.Integer(), Type.Null()]), error: Type.Union([Type.String(), Type.Null()]), created_at: Type.String(),
});

/** The API shape: assistant messages carry `usage` (with `estimated` when the model did not report it) and `context_version`. */
export function publicMessage(r: MessageRow) {
  return {
    id: r.id, chat_id: r.chat_id, role: r.role, content: r.content, status: r.status,
    usage: r.total_tokens === null ? null : { prompt_tokens: Number(r.prompt_tokens ?? 0), completion_tokens: Number(r.completion_tokens ?? 0), total_tokens: Number(r.total_tokens), estimated: bool(r.usage_estimated) },
    context_version: r.context_version === null ? null : Number(r.context_version), error: r.error, created_at: r.created_at,
  };
}
export type PublicMessage = ReturnType<typeof publicMessage>;

export interface NewMessage {
  id?: string; chat_id: string; user_id: string; role: 'user' | 'assistant'; content: string; status?: MessageStatus;
  usage?: Usage | null; usage_estimated?: boolean; context_version?: number | null; error?: string | null; created_at: string;
}

/** Inserts a message and returns its row, built from what was written (not read back: one query less per message). */
export async function insertMessage(db: Queryable, m: NewMessage): Promise<MessageRow> {
  const row: MessageRow = {
    id: m.id ?? newId(), chat_id: m.chat_id, user_id: m.user_id, role: m.role, content: m.content, status: m.status ?? 'complete',
    prompt_tokens: m.usage?.prompt_tokens ?? null, completion_tokens: m.usage?.completion_tokens ?? null, total_tokens: m.usage?.total_tokens ?? null,
    usage_estimated: m.usage_estimated ?? false, context_version: m.context_version ?? null, error: m.error ?? null, created_at: m.created_at,
  };
  await db.run(`INSERT INTO chat_messages (id, chat_id, user_id, role, content, status, prompt_tokens, completion_tokens, total_tokens, usage_estimated, context_version, error, created_at)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, [
    row.id, row.chat_id, row.user_id, row.role, row.content, row.status, row.prompt_tokens, row.completion_tokens,
    row.total_tokens, m.usage_estimated ?? false, row.context_version, row.error, row.created_at,
  ]);
  return row;
}

const HistoryQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
  before: Type.Optional(Type.String({ format: 'uuid' })),
});

/**
 * `GET /api/v1/chats/{chat_id}/messages`: the newest page first (the `limit` newest messages
 * older than `before`), each page in chronological order. Ids are UUIDv7, so id order is a
 * stable creation order; pass the first message's id as `before` for the next older page.
 */
export async function historyRoutes(app: App, core: Core): Promise<void> {
  app.get('/api/v1/chats/:chat_id/messages', {
    schema: { tags: ['assistant'], params: ChatParams, querystring: HistoryQuery },
    preHandler: requireUser(core),
  }, async (req) => {
    const chat = await ownChat(core.db, caller(req).id, (req.params as { chat_id: string }).chat_id);
    const q = req.query as { limit?: number; before?: string };
    const limit = q.limit ?? 50;
    const rows = await core.db.all<MessageRow>(
      `SELECT * FROM chat_messages WHERE chat_id = ?${q.before ? ' AND id < ?' : ''} ORDER BY id DESC LIMIT ?`,
      q.before ? [chat.id, q.before, limit + 1] : [chat.id, limit + 1]);
    const has_more = rows.length > limit;
    return { messages: rows.slice(0, limit).reverse().map(publicMessage), has_more };
  });
}
