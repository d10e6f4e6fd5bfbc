import Type from 'typebox';
import { caller, requireUser } from '../auth/guard.ts';
import type { Core } from '../core.ts';
import { insertRow, updateRow } from '../db/rows.ts';
import { newId } from '../http/ids.ts';
import { notFound } from '../http/problem.ts';
import { created, errors, noContent, ok, IdParams as Params } from '../http/schemas.ts';
import type { App } from '../http/server.ts';
import {
  MemoryCreateBody,
  MemoryEntryList,
  type MemoryEntryRow,
  MemoryEntryView,
  MemoryPatchBody,
  publicEntry,
} from './definitions/memory-entry.ts';
import { bool, collection, likePattern, searchable } from './paths.ts';
import { reserveStorage, storedBytes } from './storage.ts';

const ListQuery = Type.Object({
  q: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  category: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
  before: Type.Optional(Type.String({ format: 'uuid' })),
});

/** Instants are stored in UTC ISO form; bare dates stay dates. */
const normalizeWhen = (v: string | null | undefined) => (v && v.length > 10 ? new Date(v).toISOString() : (v ?? null));
const clean = (v: string | null | undefined) => (v?.trim() ? v.trim() : null);

/**
 * Memory entries: the user's health notes, measurements and dated events. The PDF report compiles
 * them, the assistant finds them with its search_memory tool, and those marked `always_include`
 * go into every reply's personal layer. Owner-only; `?q=` searches content and category case-insensitively.
 * Content and category count against the user's storage limit: 422 `storage_quota_exceeded` past it.
 */
export async function memoryRoutes(app: App, core: Core): Promise<void> {
  const opts = { preHandler: requireUser(core) };
  const tags = ['assistant'];
  const own = async (userId: string, id: string) => {
    const row = await core.db.get<MemoryEntryRow>('SELECT * FROM memory_entries WHERE id = ? AND user_id = ?', [
      id,
      userId,
    ]);
    if (!row) throw notFound('Memory entry');
    return row;
  };

  collection(
    app,
    'GET',
    '/api/v1/memory',
    {
      ...opts,
      schema: {
        tags,
        querystring: ListQuery,
        response: {
          ...ok(
            'Your memory entries (`entries`), newest first; with `q` or `category`, those that match.',
            MemoryEntryList,
          ),
        },
      },
    },
    async (req) => {
      const q = req.query;
      const where = ['user_id = ?'];
      const params: (string | number)[] = [caller(req).id];
      if (q.q) {
        where.push(`search_text LIKE ? ESCAPE '\\'`);
        params.push(likePattern(q.q));
      }
      if (q.category) {
        where.push('category = ?');
        params.push(q.category);
      }
      if (q.before) {
        where.push('id < ?');
        params.push(q.before);
      }
      params.push(q.limit ?? 50);
      const rows = await core.db.all<MemoryEntryRow>(
        `SELECT * FROM memory_entries WHERE ${where.join(' AND ')} ORDER BY id DESC LIMIT ?`,
        params,
      );
      return { entries: rows.map(publicEntry) };
    },
  );

  collection(
    app,
    'POST',
    '/api/v1/memory',
    {
      ...opts,
      schema: {
        tags,
        body: MemoryCreateBody,
        response: {
          ...created('The new entry.', MemoryEntryView),
          ...errors([
            422,
            'The request does not pass validation, or the entry does not fit your storage limit ' +
              '(`storage_quota_exceeded`).',
          ]),
        },
      },
    },
    async (req, reply) => {
      const b = req.body;
      const id = newId();
      const now = core.clock.now().toISOString();
      const category = clean(b.category);
      // The entry counts against the user's storage (storage.ts): 422 when it does not fit.
      await core.db.tx(async (q) => {
        await reserveStorage(core, q, caller(req), storedBytes(q.dialect, b.content, category), 'memory entry');
        const row: MemoryEntryRow = {
          id,
          user_id: caller(req).id,
          content: b.content,
          category,
          recorded_at: normalizeWhen(b.recorded_at),
          always_include: b.always_include ?? false,
          search_text: searchable(b.content, category),
          created_at: now,
          updated_at: now,
        };
        await insertRow(q, 'memory_entries', { ...row });
      });
      reply.code(201);
      return publicEntry(await own(caller(req).id, id));
    },
  );

  app.get(
    '/api/v1/memory/:id',
    { ...opts, schema: { tags, params: Params, response: { ...ok('The entry.', MemoryEntryView) } } },
    async (req) => publicEntry(await own(caller(req).id, req.params.id)),
  );

  app.patch(
    '/api/v1/memory/:id',
    {
      ...opts,
      schema: {
        tags,
        params: Params,
        body: MemoryPatchBody,
        response: {
          ...ok('The entry as changed.', MemoryEntryView),
          ...errors([
            422,
            'The request does not pass validation, or the change does not fit your storage limit ' +
              '(`storage_quota_exceeded`).',
          ]),
        },
      },
    },
    async (req) => {
      const row = await own(caller(req).id, req.params.id);
      const b = req.body;
      const content = b.content ?? row.content;
      const category = b.category === undefined ? row.category : clean(b.category);
      const recorded = b.recorded_at === undefined ? row.recorded_at : normalizeWhen(b.recorded_at);
      const always = b.always_include ?? bool(row.always_include);
      // Only what the change adds counts: an entry that shrinks or stays the size is always saved.
      await core.db.tx(async (q) => {
        await reserveStorage(
          core,
          q,
          caller(req),
          storedBytes(q.dialect, content, category) - storedBytes(q.dialect, row.content, row.category),
          'memory entry',
        );
        const set: Omit<MemoryEntryRow, 'id' | 'user_id' | 'created_at'> = {
          content,
          category,
          recorded_at: recorded,
          always_include: always,
          search_text: searchable(content, category),
          updated_at: core.clock.now().toISOString(),
        };
        await updateRow(q, 'memory_entries', { ...set }, { id: row.id });
      });
      return publicEntry(await own(row.user_id, row.id));
    },
  );

  app.delete(
    '/api/v1/memory/:id',
    { ...opts, schema: { tags, params: Params, response: { ...noContent('Deleted.') } } },
    async (req, reply) => {
      const row = await own(caller(req).id, req.params.id);
      await core.db.run('DELETE FROM memory_entries WHERE id = ?', [row.id]);
      return reply.code(204).send();
    },
  );
}
