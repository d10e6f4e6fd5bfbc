/**
 * The skill, defined once: a named instruction a chat may follow, general (an administrator's, for
 * everyone) or personal (one user's). Its fields with their limits, the create and change bodies,
 * the skill as the API shows it, and the `skills` row; skills.ts and the web client's types
 * (assistant/api-types.ts) derive from here. A new field: one line in SKILL_FIELDS, one in
 * `SkillView` and `publicSkill`, its migration and the form.
 */
import Type, { type Static } from 'typebox';
import { optional } from '../../http/optional.ts';
import { Uuid } from '../../http/schemas.ts';

export const SkillScope = Type.Union([Type.Literal('general'), Type.Literal('personal')]);

/** What its author writes. */
export const SKILL_FIELDS = {
  name: Type.String({ minLength: 1, maxLength: 200 }),
  description: Type.Union([Type.String({ maxLength: 2000 }), Type.Null()]),
  prompt: Type.String({ minLength: 1, maxLength: 32000 }),
};

export const SkillView = Type.Object({
  id: Type.String(),
  scope: SkillScope,
  name: Type.String(),
  description: Type.Union([Type.String(), Type.Null()]),
  prompt: Type.String(),
  created_at: Type.String(),
  updated_at: Type.String(),
});
export type Skill = Static<typeof SkillView>;
export const SkillList = Type.Object({ skills: Type.Array(SkillView) });

/** The create body: a name and a prompt; no description is null. */
export const SkillCreateBody = Type.Object(
  { ...SKILL_FIELDS, description: Type.Optional(SKILL_FIELDS.description) },
  { additionalProperties: false },
);
/** The change body: what is left out keeps its value. */
export const SkillPatchBody = Type.Object(optional(SKILL_FIELDS), { additionalProperties: false });
export const SkillParams = Type.Object({ skill_id: Uuid });

/** A `skills` row. */
export interface SkillRow extends Skill {
  /** The personal skill's user; null for a general skill. */
  owner_id: string | null;
}

export const publicSkill = (r: SkillRow): Skill => ({
  id: r.id,
  scope: r.scope,
  name: r.name,
  description: r.description,
  prompt: r.prompt,
  created_at: r.created_at,
  updated_at: r.updated_at,
});
