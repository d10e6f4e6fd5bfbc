import type { Static } from 'typebox';
import { caller, requireAdmin, requireUser } from '../auth/guard.ts';
import type { Core } from '../core.ts';
import type { Queryable } from '../db/database.ts';
import { insertRow, updateRow } from '../db/rows.ts';
import { newId } from '../http/ids.ts';
import { forbidden, notFound } from '../http/problem.ts';
import { created, errors, noContent, ok } from '../http/schemas.ts';
import type { App } from '../http/server.ts';
import {
  publicSkill,
  SkillCreateBody,
  SkillList,
  SkillParams,
  SkillPatchBody,
  type SkillRow,
  SkillView,
} from './definitions/skill.ts';
import { collection } from './paths.ts';

/** A skill the user may use: any general skill, or one of their own personal skills. */
export async function visibleSkill(db: Queryable, userId: string, skillId: string): Promise<SkillRow | undefined> {
  return db.get<SkillRow>(`SELECT * FROM skills WHERE id = ? AND (scope = 'general' OR owner_id = ?)`, [
    skillId,
    userId,
  ]);
}

async function create(core: Core, ownerId: string | null, b: Static<typeof SkillCreateBody>): Promise<SkillRow> {
  const id = newId();
  const now = core.clock.now().toISOString();
  const row: SkillRow = {
    id,
    owner_id: ownerId,
    scope: ownerId ? 'personal' : 'general',
    name: b.name,
    description: b.description ?? null,
    prompt: b.prompt,
    created_at: now,
    updated_at: now,
  };
  await insertRow(core.db, 'skills', { ...row });
  return (await core.db.get<SkillRow>('SELECT * FROM skills WHERE id = ?', [id]))!;
}

async function update(core: Core, row: SkillRow, b: Static<typeof SkillPatchBody>): Promise<SkillRow> {
  // A JSON body holds only the fields sent: each is a column of the same name.
  await updateRow(core.db, 'skills', { ...b, updated_at: core.clock.now().toISOString() }, { id: row.id });
  return (await core.db.get<SkillRow>('SELECT * FROM skills WHERE id = ?', [row.id]))!;
}

/**
 * Personal skills under `/api/v1/skills/` (the list also shows general skills, each with `scope`)
 * and general skills under `/api/v1/admin/skills`. A general skill is read-only on the personal
 * routes (403); another user's personal skill does not exist for the caller (404).
 */
export async function skillRoutes(app: App, core: Core): Promise<void> {
  const user = { preHandler: requireUser(core) };
  const admin = { preHandler: requireAdmin(core) };
  const tags = ['assistant'];

  collection(
    app,
    'GET',
    '/api/v1/skills',
    {
      ...user,
      schema: {
        tags,
        response: { ...ok('Your personal skills and the general ones (`skills`), each with its `scope`.', SkillList) },
      },
    },
    async (req) => {
      const rows = await core.db.all<SkillRow>(
        `SELECT * FROM skills WHERE scope = 'general' OR owner_id = ? ORDER BY scope, id`,
        [caller(req).id],
      );
      return { skills: rows.map(publicSkill) };
    },
  );
  collection(
    app,
    'POST',
    '/api/v1/skills',
    {
      ...user,
      schema: { tags, body: SkillCreateBody, response: { ...created('The new personal skill.', SkillView) } },
    },
    async (req, reply) => {
      reply.code(201);
      return publicSkill(await create(core, caller(req).id, req.body));
    },
  );
  const ownPersonal = async (userId: string, skillId: string) => {
    const row = await visibleSkill(core.db, userId, skillId);
    if (!row) throw notFound('Skill');
    if (row.scope === 'general')
      throw forbidden('General skills are managed by administrators; you can use them but not change them.');
    return row;
  };
  app.get(
    '/api/v1/skills/:skill_id',
    { ...user, schema: { tags, params: SkillParams, response: { ...ok('The skill.', SkillView) } } },
    async (req) => {
      const row = await visibleSkill(core.db, caller(req).id, req.params.skill_id);
      if (!row) throw notFound('Skill');
      return publicSkill(row);
    },
  );
  app.patch(
    '/api/v1/skills/:skill_id',
    {
      ...user,
      schema: {
        tags,
        params: SkillParams,
        body: SkillPatchBody,
        response: {
          ...ok('The skill as changed.', SkillView),
          ...errors([403, 'A general skill is managed by administrators.']),
        },
      },
    },
    async (req) => publicSkill(await update(core, await ownPersonal(caller(req).id, req.params.skill_id), req.body)),
  );
  app.delete(
    '/api/v1/skills/:skill_id',
    {
      ...user,
      schema: {
        tags,
        params: SkillParams,
        response: { ...noContent('Deleted.'), ...errors([403, 'A general skill is managed by administrators.']) },
      },
    },
    async (req, reply) => {
      const row = await ownPersonal(caller(req).id, req.params.skill_id);
      await core.db.run('DELETE FROM skills WHERE id = ?', [row.id]);
      return reply.code(204).send();
    },
  );

  const general = async (skillId: string) => {
    const row = await core.db.get<SkillRow>(`SELECT * FROM skills WHERE id = ? AND scope = 'general'`, [skillId]);
    if (!row) throw notFound('Skill');
    return row;
  };
  const adminTags = ['admin'];
  collection(
    app,
    'GET',
    '/api/v1/admin/skills',
    { ...admin, schema: { tags: adminTags, response: { ...ok('The general skills (`skills`).', SkillList) } } },
    async () => ({
      skills: (await core.db.all<SkillRow>(`SELECT * FROM skills WHERE scope = 'general' ORDER BY id`)).map(
        publicSkill,
      ),
    }),
  );
  collection(
    app,
    'POST',
    '/api/v1/admin/skills',
    {
      ...admin,
      schema: { tags: adminTags, body: SkillCreateBody, response: { ...created('The new general skill.', SkillView) } },
    },
    async (req, reply) => {
      reply.code(201);
      return publicSkill(await create(core, null, req.body));
    },
  );
  app.get(
    '/api/v1/admin/skills/:skill_id',
    {
      ...admin,
      schema: { tags: adminTags, params: SkillParams, response: { ...ok('The general skill.', SkillView) } },
    },
    async (req) => publicSkill(await general(req.params.skill_id)),
  );
  app.patch(
    '/api/v1/admin/skills/:skill_id',
    {
      ...admin,
      schema: {
        tags: adminTags,
        params: SkillParams,
        body: SkillPatchBody,
        response: { ...ok('The general skill as changed.', SkillView) },
      },
    },
    async (req) => publicSkill(await update(core, await general(req.params.skill_id), req.body)),
  );
  app.delete(
    '/api/v1/admin/skills/:skill_id',
    {
      ...admin,
      schema: {
        tags: adminTags,
        params: SkillParams,
        response: { ...noContent('Deleted; chats bound to it go on without a skill.') },
      },
    },
    async (req, reply) => {
      const row = await general(req.params.skill_id);
      // Chats bound to it fall back to no skill (skill_id ON DELETE SET NULL).
      await core.db.run('DELETE FROM skills WHERE id = ?', [row.id]);
      return reply.code(204).send();
    },
  );
}
