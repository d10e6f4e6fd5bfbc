import Type from 'typebox';
import { caller, requireUser } from '../auth/guard.ts';
import type { Core } from '../core.ts';
import type { Queryable } from '../db/database.ts';
import { newId } from '../http/ids.ts';
import { HttpError } from '../http/problem.ts';
import { noContent, ok } from '../http/schemas.ts';
import type { App } from '../http/server.ts';
import { ChatParams, ownChat } from './chats.ts';
import { MessagePage } from './definitions/chat.ts';
import type { ToolEvent } from './exchange.ts';
import { bool } from './paths.ts';

export { MessagePage, MessageSchema } from './definitions/chat.ts';

export type MessageStatus = 'complete' | 'interrupted' | 'error';
export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

export interface MessageRow {
  id: string;
  chat_id: string;
  user_id: string;
  role: 'user' | 'assistant';
  content: string;
  status: MessageStatus;
  prompt_tokens: number | null;
  completion_tokens: number | null;
  total_tokens: number | null;
  usage_estimated: unknown;
  context_version: number | null;
  error: string | null;
  created_at: string;
  /** The reply's tool calls (JSON array of ToolEvent), or null. */
  tools?: string | null;
  parent_id: string | null;
  active: unknown;
  model: string | null;
  attachments: string | null;
}

/**
 * Something a message carries besides its text: a generated report (its download card), or a document the user
 * attached in the composer (its chip).
 */
export type Attachment =
  | { type: 'report'; report_id: string; title: string }
  | { type: 'document'; document_id: string; name: string };

const parseAttachments = (raw: string | null): Attachment[] => {
  if (!raw) return [];
  try {
    const v = JSON.parse(raw);
    return Array.isArray(v) ? v : [];
  } catch {
    return [];
  }
};

/** The documents a message carries (attached in the composer). */
export const documentAttachments = (r: Pick<MessageRow, 'attachments'>) =>
  parseAttachments(r.attachments).filter((a) => a.type === 'document');

/** The stored tool calls of a reply, without the results the model read (those stay in the database). */
function parseTools(raw: string | null | undefined): ToolEvent[] {
  if (!raw) return [];
  try {
    const v = JSON.parse(raw) as (ToolEvent & { result?: unknown })[];
    return Array.isArray(v) ? v.map(({ result: _result, ...call }) => call) : [];
  } catch {
    return [];
  }
}

/**
 * The API shape: assistant messages carry `usage` (with `estimated` when the model did not report it) and
 * `context_version`.
 */
export function publicMessage(r: MessageRow) {
  return {
    id: r.id,
    chat_id: r.chat_id,
    role: r.role,
    content: r.content,
    status: r.status,
    usage:
      r.total_tokens === null
        ? null
        : {
            prompt_tokens: Number(r.prompt_tokens ?? 0),
            completion_tokens: Number(r.completion_tokens ?? 0),
            total_tokens: Number(r.total_tokens),
            estimated: bool(r.usage_estimated),
          },
    context_version: r.context_version === null ? null : Number(r.context_version),
    error: r.error,
    created_at: r.created_at,
    tools: parseTools(r.tools),
    parent_id: r.parent_id ?? null,
    model: r.model ?? null,
    attachments: parseAttachments(r.attachments) as ShownAttachment[],
    /** The ids of this message and its alternatives (siblings of the same role), oldest first. */
    alternatives: [r.id],
  };
}
export type PublicMessage = ReturnType<typeof publicMessage>;
type ShownAttachment =
  | { type: 'report'; report_id: string; title: string; available?: boolean; size_bytes?: number }
  | { type: 'document'; document_id: string; name: string; available?: boolean };

export interface NewMessage {
  id?: string;
  chat_id: string;
  user_id: string;
  role: 'user' | 'assistant';
  content: string;
  status?: MessageStatus;
  usage?: Usage | null;
  usage_estimated?: boolean;
  context_version?: number | null;
  error?: string | null;
  created_at: string;
  parent_id?: string | null;
  model?: string | null;
  attachments?: Attachment[];
}

/** Inserts a message and returns its row, built from what was written (not read back: one query less per message). */
export async function insertMessage(db: Queryable, m: NewMessage): Promise<MessageRow> {
  const row: MessageRow = {
    id: m.id ?? newId(),
    chat_id: m.chat_id,
    user_id: m.user_id,
    role: m.role,
    content: m.content,
    status: m.status ?? 'complete',
    prompt_tokens: m.usage?.prompt_tokens ?? null,
    completion_tokens: m.usage?.completion_tokens ?? null,
    total_tokens: m.usage?.total_tokens ?? null,
    usage_estimated: m.usage_estimated ?? false,
    context_version: m.context_version ?? null,
    error: m.error ?? null,
    created_at: m.created_at,
    parent_id: m.parent_id ?? null,
    active: true,
    model: m.model ?? null,
    attachments: m.attachments?.length ? JSON.stringify(m.attachments) : null,
  };
  await db.run(
    `INSERT INTO chat_messages (id, chat_id, user_id, role, content, status, prompt_tokens, completion_tokens,
      total_tokens, usage_estimated, context_version, error, created_at, parent_id, active, model, attachments)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [
      row.id,
      row.chat_id,
      row.user_id,
      row.role,
      row.content,
      row.status,
      row.prompt_tokens,
      row.completion_tokens,
      row.total_tokens,
      m.usage_estimated ?? false,
      row.context_version,
      row.error,
      row.created_at,
      row.parent_id,
      true,
      row.model,
      row.attachments,
    ],
  );
  return row;
}

/** The last message of the chat's shown branch (what a new message follows), or undefined in an empty chat. */
export async function branchTail(db: Queryable, chatId: string): Promise<string | undefined> {
  return (
    await db.get<{ id: string }>(
      'SELECT id FROM chat_messages WHERE chat_id = ? AND active = ? ORDER BY id DESC LIMIT 1',
      [chatId, true],
    )
  )?.id;
}

/**
 * Hides the shown branch below `parentId` (the whole conversation when null). The shown branch is
 * one chain whose ids grow (a message is always newer than the one it follows), so what follows
 * `parentId` on it is every shown message with a greater id.
 */
export async function hideAfter(q: Queryable, chatId: string, parentId: string | null): Promise<void> {
  if (parentId)
    await q.run('UPDATE chat_messages SET active = ? WHERE chat_id = ? AND active = ? AND id > ?', [
      false,
      chatId,
      true,
      parentId,
    ]);
  else await q.run('UPDATE chat_messages SET active = ? WHERE chat_id = ? AND active = ?', [false, chatId, true]);
}

/**
 * Shows `message`'s branch instead of its siblings': the message, then below it at each step the
 * reply that was on screen there last (`shown_at`, stamped whenever a flip shows a message; one
 * never flipped to was last on screen when it was written), so flipping back returns to the
 * conversation as it was left. `now` stamps the messages shown.
 */
export async function showBranch(
  q: Queryable,
  chatId: string,
  message: Pick<MessageRow, 'id' | 'parent_id'>,
  now: string,
): Promise<void> {
  await hideAfter(q, chatId, message.parent_id);
  let id: string | undefined = message.id;
  const seen = new Set<string>();
  while (id && !seen.has(id)) {
    seen.add(id);
    await q.run('UPDATE chat_messages SET active = ?, shown_at = ? WHERE id = ?', [true, now, id]);
    id = (
      await q.get<{ id: string }>(
        'SELECT id FROM chat_messages WHERE chat_id = ? AND parent_id = ? ORDER BY COALESCE(shown_at, ' +
          'created_at) DESC, id DESC LIMIT 1',
        [chatId, id],
      )
    )?.id;
  }
}

/** A message of the chat, or 404. */
export async function chatMessage(db: Queryable, chatId: string, messageId: string): Promise<MessageRow> {
  const row = await db.get<MessageRow>('SELECT * FROM chat_messages WHERE id = ? AND chat_id = ?', [messageId, chatId]);
  if (!row) throw new HttpError(404, 'message_not_found', 'Message was not found.');
  return row;
}

/**
 * The page as the API shows it: each message with its alternatives (siblings of the same role,
 * oldest first) and its report attachments marked `available` (false once the report is deleted).
 */
async function present(db: Queryable, chatId: string, rows: MessageRow[]): Promise<PublicMessage[]> {
  const out = rows.map(publicMessage);
  if (!rows.length) return out;
  const parents = [...new Set(rows.map((r) => r.parent_id).filter((p): p is string => Boolean(p)))];
  const roots = rows.some((r) => !r.parent_id);
  const where = [
    parents.length ? `parent_id IN (${parents.map(() => '?').join(', ')})` : '',
    roots ? 'parent_id IS NULL' : '',
  ]
    .filter(Boolean)
    .join(' OR ');
  const siblings = await db.all<{ id: string; parent_id: string | null; role: string }>(
    `SELECT id, parent_id, role FROM chat_messages WHERE chat_id = ? AND (${where}) ORDER BY id`,
    [chatId, ...parents],
  );
  const groups = new Map<string, string[]>();
  for (const s of siblings) {
    const key = `${s.parent_id ?? ''}/${s.role}`;
    groups.set(key, [...(groups.get(key) ?? []), s.id]);
  }
  const reportIds = [
    ...new Set(out.flatMap((m) => m.attachments.flatMap((a) => (a.type === 'report' ? [a.report_id] : [])))),
  ];
  const reports = new Map<string, number>();
  if (reportIds.length) {
    for (const r of await db.all<{ id: string; size_bytes: number | string }>(
      `SELECT id, size_bytes FROM reports WHERE id IN (${reportIds.map(() => '?').join(', ')})`,
      reportIds,
    ))
      reports.set(r.id, Number(r.size_bytes));
  }
  const docIds = [
    ...new Set(out.flatMap((m) => m.attachments.flatMap((a) => (a.type === 'document' ? [a.document_id] : [])))),
  ];
  const docs = new Set<string>();
  if (docIds.length) {
    for (const d of await db.all<{ id: string }>(
      `SELECT id FROM documents WHERE id IN (${docIds.map(() => '?').join(', ')})`,
      docIds,
    ))
      docs.add(d.id);
  }
  for (const m of out) {
    m.alternatives = groups.get(`${m.parent_id ?? ''}/${m.role}`) ?? [m.id];
    m.attachments = m.attachments.map((a) =>
      a.type === 'document'
        ? { ...a, available: docs.has(a.document_id) }
        : reports.has(a.report_id)
          ? { ...a, available: true, size_bytes: reports.get(a.report_id) }
          : { ...a, available: false },
    );
  }
  return out;
}

const HistoryQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
  before: Type.Optional(Type.String({ format: 'uuid' })),
});

/**
 * `GET /api/v1/chats/{chat_id}/messages`: the shown branch's newest page first (the `limit` newest messages
 * older than `before`), each page in chronological order. Ids are UUIDv7, so id order is a
 * stable creation order; pass the first message's id as `before` for the next older page.
 */
export async function historyRoutes(app: App, core: Core): Promise<void> {
  app.get(
    '/api/v1/chats/:chat_id/messages',
    {
      schema: {
        tags: ['assistant'],
        params: ChatParams,
        querystring: HistoryQuery,
        response: {
          ...ok(
            'A page of the shown branch (`messages`, oldest first) and whether older ones exist (`has_more`).',
            MessagePage,
          ),
        },
      },
      preHandler: requireUser(core),
    },
    async (req) => {
      const chat = await ownChat(core.db, caller(req).id, req.params.chat_id);
      const q = req.query;
      const limit = q.limit ?? 50;
      const rows = await core.db.all<MessageRow>(
        `SELECT * FROM chat_messages WHERE chat_id = ? AND active = ?${q.before ? ' AND id < ?' : ''} ` +
          'ORDER BY id DESC LIMIT ?',
        q.before ? [chat.id, true, q.before, limit + 1] : [chat.id, true, limit + 1],
      );
      const has_more = rows.length > limit;
      return { messages: await present(core.db, chat.id, rows.slice(0, limit).reverse()), has_more };
    },
  );

  const MessageParams = Type.Object({
    chat_id: Type.String({ format: 'uuid' }),
    message_id: Type.String({ format: 'uuid' }),
  });
  app.post(
    '/api/v1/chats/:chat_id/messages/:message_id/show',
    {
      schema: {
        tags: ['assistant'],
        summary: 'Show this alternative (and the conversation that follows it) instead of its siblings',
        params: MessageParams,
        response: { ...noContent('This alternative is shown now.') },
      },
      preHandler: requireUser(core),
    },
    async (req, reply) => {
      const p = req.params;
      const chat = await ownChat(core.db, caller(req).id, p.chat_id);
      const message = await chatMessage(core.db, chat.id, p.message_id);
      await core.db.tx((q) => showBranch(q, chat.id, message, core.clock.now().toISOString()));
      return reply.code(204).send();
    },
  );
}
