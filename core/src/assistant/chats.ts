import Type from 'typebox';
import { caller, requireUser } from '../auth/guard.ts';
import type { Core } from '../core.ts';
import type { Queryable } from '../db/database.ts';
import { newId } from '../http/ids.ts';
import { conflict, HttpError, notFound, unprocessable } from '../http/problem.ts';
import { created, errors, noContent, ok } from '../http/schemas.ts';
import type { App } from '../http/server.ts';
import { ChatList, ChatSchema, MAX_FOLDER } from './definitions/chat.ts';
import { eventMessage, ownEvent } from './event-context.ts';
import { lab } from './lab-strings.ts';
import type { Models } from './models.ts';
import { bool, collection, int } from './paths.ts';
import { visibleSkill } from './skills.ts';
import { say } from './titles.ts';

export { ChatList, ChatSchema, MAX_FOLDER } from './definitions/chat.ts';

export interface ChatRow {
  id: string;
  user_id: string;
  title: string;
  is_archived: unknown;
  skill_id: string | null;
  model?: string | null;
  event_id?: string | null;
  pinned?: unknown;
  folder?: string | null;
  created_at: string;
  updated_at: string;
}

export const ChatParams = Type.Object({ chat_id: Type.String({ format: 'uuid' }) });
const Title = Type.String({ minLength: 1, maxLength: 200 });
const SkillRef = Type.Union([Type.String({ format: 'uuid' }), Type.Null()]);
/**
 * Without a title the chat is called "New chat" (in the caller's language) until a title is generated after the first
 * exchange.
 */
/**
 * With `event_id` (one of the caller's events), every reply carries that event: "Ask the assistant" on the event log.
 */
const CreateBody = Type.Object(
  {
    title: Type.Optional(Title),
    skill_id: Type.Optional(SkillRef),
    event_id: Type.Optional(Type.String({ format: 'uuid' })),
  },
  { additionalProperties: false },
);
const PatchBody = Type.Object(
  {
    title: Type.Optional(Title),
    is_archived: Type.Optional(Type.Boolean()),
    skill_id: Type.Optional(SkillRef),
    model: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 200 }), Type.Null()])),
    pinned: Type.Optional(Type.Boolean()),
    /** The folder to put the chat in; null takes it out of its folder. */
    folder: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: MAX_FOLDER }), Type.Null()])),
  },
  { additionalProperties: false },
);
const ListQuery = Type.Object({
  archived: Type.Optional(Type.Boolean()),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
  before: Type.Optional(Type.String({ format: 'uuid' })),
});

export const publicChat = (r: ChatRow) => ({
  id: r.id,
  title: r.title,
  is_archived: bool(r.is_archived),
  skill_id: r.skill_id,
  model: r.model ?? null,
  event_id: r.event_id ?? null,
  pinned: bool(r.pinned),
  folder: r.folder ?? null,
  created_at: r.created_at,
  updated_at: r.updated_at,
});

/** The caller's chat, or 404 (another user's chat does not exist for them). */
export async function ownChat(db: Queryable, userId: string, chatId: string): Promise<ChatRow> {
  const row = await db.get<ChatRow>('SELECT * FROM chats WHERE id = ? AND user_id = ?', [chatId, userId]);
  if (!row) throw notFound('Chat');
  return row;
}

/**
 * Binding to a skill the caller cannot see answers 404 (code `skill_not_found`), like any
 * resource that is missing or not theirs.
 */
async function checkSkill(db: Queryable, userId: string, skillId: string | null | undefined): Promise<void> {
  if (!skillId) return;
  if (!(await visibleSkill(db, userId, skillId))) throw new HttpError(404, 'skill_not_found', 'Skill was not found.');
}

/** Chat CRUD under `/api/v1/chats/`. A user holds at most `max_chats` chats, archived ones included (409 beyond). */
export async function chatRoutes(app: App, core: Core, models?: Pick<Models, 'check'>): Promise<void> {
  const opts = { preHandler: requireUser(core) };
  const tags = ['assistant'];

  collection(
    app,
    'POST',
    '/api/v1/chats',
    {
      ...opts,
      schema: {
        tags,
        body: CreateBody,
        response: {
          ...created('The new chat.', ChatSchema),
          ...errors(
            [404, 'The skill or event named is not one you can use (`skill_not_found`, `event_not_found`).'],
            [409, 'You have the most chats your account allows (`chat_limit_reached`).'],
          ),
        },
      },
    },
    async (req, reply) => {
      const user = caller(req);
      const b = req.body;
      await checkSkill(core.db, user.id, b.skill_id);
      // Another user's event is not found, as any resource that is not theirs.
      const event = b.event_id ? await ownEvent(core, user.id, b.event_id) : undefined;
      if (b.event_id && !event) throw new HttpError(404, 'event_not_found', 'Event was not found.');
      const title =
        b.title ??
        (event
          ? lab(user.locale, 'event_chat_title', {
              message: (await eventMessage(core, user.id, event, user.locale)) || event.event_type,
            }).slice(0, 200)
          : undefined);
      const id = newId();
      const now = core.clock.now().toISOString();
      await core.db.tx(async (q) => {
        // Serialise a user's chat creations on PostgreSQL; SQLite transactions already are.
        if (q.dialect === 'postgresql') await q.get('SELECT id FROM users WHERE id = ? FOR UPDATE', [user.id]);
        const n = int((await q.get<{ n: unknown }>('SELECT COUNT(*) AS n FROM chats WHERE user_id = ?', [user.id]))?.n);
        if (n >= user.max_chats)
          throw conflict(
            `You already have ${n} chats, the most your account allows (${user.max_chats}); delete one first.`,
            'chat_limit_reached',
            { count: n, limit: user.max_chats },
          );
        await q.run(
          'INSERT INTO chats (id, user_id, title, title_auto, is_archived, skill_id, event_id, created_at, ' +
            'updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
          [
            id,
            user.id,
            title ?? say(user.locale, 'untitled_chat'),
            title === undefined,
            false,
            b.skill_id ?? null,
            event?.id ?? null,
            now,
            now,
          ],
        );
      });
      reply.code(201);
      return publicChat(await ownChat(core.db, user.id, id));
    },
  );

  collection(
    app,
    'GET',
    '/api/v1/chats',
    {
      ...opts,
      schema: {
        tags,
        querystring: ListQuery,
        response: {
          ...ok(
            'Your chats (`chats`): pinned ones first, then the others, each group newest first. `before` (the last ' +
              "chat's id of a page) continues in that order.",
            ChatList,
          ),
        },
      },
    },
    async (req) => {
      const q = req.query;
      const userId = caller(req).id;
      const where = ['user_id = ?'];
      const params: (string | boolean | number)[] = [userId];
      if (q.archived !== undefined) {
        where.push('is_archived = ?');
        params.push(q.archived);
      }
      if (q.before) {
        // Keyset paging over (pinned, id): after a pinned chat come older pinned ones and then every unpinned one.
        const from = await core.db.get<ChatRow>('SELECT pinned FROM chats WHERE id = ? AND user_id = ?', [
          q.before,
          userId,
        ]);
        if (from && bool(from.pinned)) {
          where.push('((pinned = ? AND id < ?) OR pinned = ?)');
          params.push(true, q.before, false);
        } else {
          where.push('pinned = ? AND id < ?');
          params.push(false, q.before);
        }
      }
      params.push(q.limit ?? 50);
      const rows = await core.db.all<ChatRow>(
        `SELECT * FROM chats WHERE ${where.join(' AND ')} ORDER BY pinned DESC, id DESC LIMIT ?`,
        params,
      );
      return { chats: rows.map(publicChat) };
    },
  );

  app.get(
    '/api/v1/chats/:chat_id',
    { ...opts, schema: { tags, params: ChatParams, response: { ...ok('The chat.', ChatSchema) } } },
    async (req) => publicChat(await ownChat(core.db, caller(req).id, req.params.chat_id)),
  );

  app.patch(
    '/api/v1/chats/:chat_id',
    {
      ...opts,
      schema: { tags, params: ChatParams, body: PatchBody, response: { ...ok('The chat as changed.', ChatSchema) } },
    },
    async (req) => {
      const user = caller(req);
      const chat = await ownChat(core.db, user.id, req.params.chat_id);
      const b = req.body;
      await checkSkill(core.db, user.id, b.skill_id);
      if (b.model !== undefined) {
        await models?.check(b.model);
        await core.db.run('UPDATE chats SET model = ? WHERE id = ?', [b.model, chat.id]);
      }
      // A title the user chose is never replaced by a generated one.
      if (b.title !== undefined) await core.db.run('UPDATE chats SET title_auto = ? WHERE id = ?', [false, chat.id]);
      const folder = b.folder === undefined ? (chat.folder ?? null) : b.folder === null ? null : b.folder.trim();
      if (folder === '')
        throw unprocessable('The folder name is blank; give it a name or null to take the chat out of its folder.', [
          { path: 'body/folder', message: 'must not be blank' },
        ]);
      await core.db.run(
        'UPDATE chats SET title = ?, is_archived = ?, skill_id = ?, pinned = ?, folder = ?, updated_at = ? ' +
          'WHERE id = ?',
        [
          b.title ?? chat.title,
          b.is_archived ?? bool(chat.is_archived),
          b.skill_id === undefined ? chat.skill_id : b.skill_id,
          b.pinned ?? bool(chat.pinned),
          folder,
          // Pinning or filing a chat is not a change to it: its place among the others stays where it was.
          Object.keys(b).every((k) => k === 'pinned' || k === 'folder')
            ? chat.updated_at
            : core.clock.now().toISOString(),
          chat.id,
        ],
      );
      return publicChat(await ownChat(core.db, user.id, chat.id));
    },
  );

  app.delete(
    '/api/v1/chats/:chat_id',
    { ...opts, schema: { tags, params: ChatParams, response: { ...noContent('Deleted, with its messages.') } } },
    async (req, reply) => {
      const chat = await ownChat(core.db, caller(req).id, req.params.chat_id);
      await core.db.run('DELETE FROM chats WHERE id = ?', [chat.id]);
      return reply.code(204).send();
    },
  );
}
