import Type from 'typebox';
import { caller, requireAdmin, requireUser } from '../auth/guard.ts';
import type { Core } from '../core.ts';
import type { Queryable } from '../db/database.ts';
import { ok } from '../http/schemas.ts';
import type { App } from '../http/server.ts';
import {
  PersonalContextText,
  PersonalContextView,
  PrimaryContextText,
  PrimaryContextView,
} from './definitions/context.ts';
import { int } from './paths.ts';

/** The primary context; version 0 means it was never written. */
export interface PrimaryContextValue {
  content: string;
  version: number;
  updated_at: string | null;
}

export async function primaryContext(db: Queryable): Promise<PrimaryContextValue> {
  const row = await db.get<{ content: string; version: number | string; updated_at: string }>(
    'SELECT content, version, updated_at FROM primary_context WHERE id = 1',
  );
  return row
    ? { content: row.content, version: int(row.version), updated_at: row.updated_at }
    : { content: '', version: 0, updated_at: null };
}

export async function personalContext(
  db: Queryable,
  userId: string,
): Promise<{ content: string; updated_at: string | null }> {
  const row = await db.get<{ content: string; updated_at: string }>(
    'SELECT content, updated_at FROM personal_contexts WHERE user_id = ?',
    [userId],
  );
  return row ? { content: row.content, updated_at: row.updated_at } : { content: '', updated_at: null };
}

/** Contexts may be empty (clears them); the primary one may be long, a personal one is message-sized. */
const PrimaryBody = Type.Object({ content: PrimaryContextText }, { additionalProperties: false });
const PersonalBody = Type.Object({ content: PersonalContextText }, { additionalProperties: false });

/** `GET, PUT /api/v1/admin/context` and `GET, PUT /api/v1/users/me/context`. */
export async function contextRoutes(app: App, core: Core): Promise<void> {
  app.get(
    '/api/v1/admin/context',
    {
      schema: {
        tags: ['admin'],
        response: { ...ok('The primary context every chat starts with.', PrimaryContextView) },
      },
      preHandler: requireAdmin(core),
    },
    async () => primaryContext(core.db),
  );

  app.put(
    '/api/v1/admin/context',
    {
      schema: {
        tags: ['admin'],
        body: PrimaryBody,
        response: { ...ok('The primary context as saved, with its new version.', PrimaryContextView) },
      },
      preHandler: requireAdmin(core),
    },
    async (req) => {
      const { content } = req.body;
      // One statement, so two concurrent updates still get distinct versions.
      await core.db.run(
        `INSERT INTO primary_context (id, content, version, updated_by, updated_at) VALUES (1, ?, 1, ?, ?)
      ON CONFLICT (id) DO UPDATE SET content = excluded.content, version = primary_context.version + 1, updated_by =
      excluded.updated_by, updated_at = excluded.updated_at`,
        [content, caller(req).id, core.clock.now().toISOString()],
      );
      return primaryContext(core.db);
    },
  );

  app.get(
    '/api/v1/users/me/context',
    {
      schema: { tags: ['assistant'], response: { ...ok('Your personal context.', PersonalContextView) } },
      preHandler: requireUser(core),
    },
    async (req) => personalContext(core.db, caller(req).id),
  );

  app.put(
    '/api/v1/users/me/context',
    {
      schema: {
        tags: ['assistant'],
        body: PersonalBody,
        response: { ...ok('Your personal context as saved.', PersonalContextView) },
      },
      preHandler: requireUser(core),
    },
    async (req) => {
      const { content } = req.body;
      const userId = caller(req).id;
      await core.db.run(
        `INSERT INTO personal_contexts (user_id, content, updated_at) VALUES (?, ?, ?)
      ON CONFLICT (user_id) DO UPDATE SET content = excluded.content, updated_at = excluded.updated_at`,
        [userId, content, core.clock.now().toISOString()],
      );
      return personalContext(core.db, userId);
    },
  );
}
