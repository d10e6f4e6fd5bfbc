import Type, { type Static } from 'typebox';
import { caller, requireAdmin, requireUser } from '../auth/guard.ts';
import type { Core } from '../core.ts';
import type { Queryable } from '../db/database.ts';
import { newId } from '../http/ids.ts';
import { forbidden, notFound } from '../http/problem.ts';
import { created, errors, noContent, ok } from '../http/schemas.ts';
import type { App } from '../http/server.ts';
import { collection } from './paths.ts';

export interface SkillRow {
  id: string;
  owner_id: string | null;
  scope: 'general' | 'personal';
  name: string;
  description: string | null;
  prompt: string;
  created_at: string;
  updated_at: string;
}

export const SkillSchema = Type.Object({
  id: Type.String(),
  scope: Type.Union([Type.Literal('general'), Type.Literal('personal')]),
  name: Type.String(),
  description: Type.Union([Type.String(), Type.Null()]),
  prompt: Type.String(),
  created_at: Type.String(),
  updated_at: Type.String(),
});
const Name = Type.String({ minLength: 1, maxLength: 200 });
const Description = Type.Union([Type.String({ maxLength: 2000 }), Type.Null()]);
const Prompt = Type.String({ minLength: 1, maxLength: 32000 });
const CreateBody = Type.Object(
  { name: Name, description: Type.Optional(Description), prompt: Prompt },
  { additionalProperties: false },
);
const PatchBody = Type.Object(
  { name: Type.Optional(Name), description: Type.Optional(Description), prompt: Type.Optional(Prompt) },
  { additionalProperties: false },
);
const Params = Type.Object({ skill_id: Type.String({ format: 'uuid' }) });

export const publicSkill = (r: SkillRow) => ({
  id: r.id,
  scope: r.scope,
  name: r.name,
  description: r.description,
  prompt: r.prompt,
  created_at: r.created_at,
  updated_at: r.updated_at,
});

/** A skill the user may use: any general skill, or one of their own personal skills. */
export async function visibleSkill(db: Queryable, userId: string, skillId: string): Promise<SkillRow | undefined> {
  return db.get<SkillRow>(`SELECT * FROM skills WHERE id = ? AND (scope = 'general' OR owner_id = ?)`, [
    skillId,
    userId,
  ]);
}

async function create(core: Core, ownerId: string | null, b: Static<typeof CreateBody>): Promise<SkillRow> {
  const id = newId();
  const now = core.clock.now().toISOString();
  await core.db.run(
    'INSERT INTO skills (id, owner_id, scope, name, description, prompt, created_at, updated_at) VALUES ' +
      '(?, ?, ?, ?, ?, ?, ?, ?)',
    [id, ownerId, ownerId ? 'personal' : 'general', b.name, b.description ?? null, b.prompt, now, now],
  );
  return (await core.db.get<SkillRow>('SELECT * FROM skills WHERE id = ?', [id]))!;
}

async function update(core: Core, row: SkillRow, b: Static<typeof PatchBody>): Promise<SkillRow> {
  await core.db.run('UPDATE skills SET name = ?, description = ?, prompt = ?, updated_at = ? WHERE id = ?', [
    b.name ?? row.name,
    b.description === undefined ? row.description : b.description,
    b.prompt ?? row.prompt,
    core.clock.now().toISOString(),
    row.id,
  ]);
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
        response: { ...ok('Your personal skills and the general ones (`skills`), each with its `scope`.') },
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
    { ...user, schema: { tags, body: CreateBody, response: { ...created('The new personal skill.') } } },
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
    { ...user, schema: { tags, params: Params, response: { ...ok('The skill.') } } },
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
        params: Params,
        body: PatchBody,
        response: { ...ok('The skill as changed.'), ...errors([403, 'A general skill is managed by administrators.']) },
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
        params: Params,
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
    { ...admin, schema: { tags: adminTags, response: { ...ok('The general skills (`skills`).') } } },
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
    { ...admin, schema: { tags: adminTags, body: CreateBody, response: { ...created('The new general skill.') } } },
    async (req, reply) => {
      reply.code(201);
      return publicSkill(await create(core, null, req.body));
    },
  );
  app.get(
    '/api/v1/admin/skills/:skill_id',
    { ...admin, schema: { tags: adminTags, params: Params, response: { ...ok('The general skill.') } } },
    async (req) => publicSkill(await general(req.params.skill_id)),
  );
  app.patch(
    '/api/v1/admin/skills/:skill_id',
    {
      ...admin,
      schema: {
        tags: adminTags,
        params: Params,
        body: PatchBody,
        response: { ...ok('The general skill as changed.') },
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
        params: Params,
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
