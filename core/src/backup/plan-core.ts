/**
 * Planning the restore of users, operator settings and the assistant's operator configuration
 * (skills, primary context, personal contexts, the models users may choose). Users are matched by email; everything
 * else by id
 * or its unique key.
 */

import { SKILL_FIELDS, type SkillRow } from '../assistant/definitions/skill.ts';
import { readModelSettings, writeModelSettings } from '../assistant/model-settings.ts';
import { revokeAllTokens } from '../auth/revocation.ts';
import type { Queryable } from '../db/database.ts';
import { Database as Db } from '../db/database.ts';
import { insertRow, updateRow } from '../db/rows.ts';
import { newId } from '../http/ids.ts';
import { conflict } from '../http/problem.ts';
import { SETTING_DEFAULTS, type SettingKey, Settings } from '../settings/settings.ts';
import { USER_BACKUP_FIELDS, type UserRow } from '../users/definition.ts';
import { tableExists } from './export.ts';
import { type Planner, pickFields } from './planner.ts';
import type { AssistantModelsRec, ConfigurationT, UserRec } from './schema.ts';

/**
 * Stored as the password hash of a user restored without one: bcrypt never matches it, so nobody can log in as them.
 */
export const NO_PASSWORD = '!restored-without-password';

export async function planUsers(p: Planner, users: UserRec[]): Promise<void> {
  // Who is an active administrator once the restore is applied: there must be at least one left.
  const activeAdmin = new Map<string, boolean>();
  for (const r of await p.q.all<{ id: string; role: string; is_active: unknown }>(
    'SELECT id, role, is_active FROM users',
  ))
    activeAdmin.set(r.id, r.role === 'admin' && Db.bool(r.is_active));
  for (const u of users) {
    const email = u.email.trim().toLowerCase();
    const existing = await p.get<UserRow>('SELECT * FROM users WHERE email = ?', [email]);
    let id = existing?.id ?? u.id;
    // Another user already has this id (a different email): the restored user gets a fresh one.
    if (!existing && (await p.get<{ x: number }>('SELECT 1 AS x FROM users WHERE id = ?', [u.id]))) id = newId();
    p.maps.users.set(u.id, id);
    const rec: Record<string, unknown> = { password_hash: u.password_hash };
    const missing = p.fillSecrets(
      rec,
      u.secrets_omitted,
      existing ? { password_hash: existing.password_hash } : undefined,
    );
    const desired: Record<string, unknown> = {
      ...pickFields(u, USER_BACKUP_FIELDS),
      email,
      is_active: missing.length ? false : u.is_active,
    };
    if (typeof rec.password_hash === 'string') desired.password_hash = rec.password_hash;
    const d = p.decide('users', u.id, existing, desired);
    if (missing.length && d === 'insert') p.disabled('users', id);
    if (d === 'insert' || d === 'update') activeAdmin.set(id, desired.role === 'admin' && desired.is_active === true);
    if (d === 'insert') {
      p.step((q) =>
        insertRow(q, 'users', {
          id,
          ...desired,
          password_hash: desired.password_hash ?? NO_PASSWORD,
          created_at: u.created_at,
          updated_at: u.updated_at,
        }),
      );
    } else if (d === 'update') {
      // A restored password, role or activation that differs retires the tokens issued before, as an administrator's
      // change does.
      const revoke =
        (desired.password_hash !== undefined && desired.password_hash !== existing?.password_hash) ||
        desired.role !== existing?.role ||
        desired.is_active !== Db.bool(existing?.is_active);
      p.step(async (q) => {
        await updateRow(q, 'users', { ...desired, updated_at: p.now }, { id });
        if (revoke) await revokeAllTokens(q, id);
      });
    }
  }
  if (![...activeAdmin.values()].some(Boolean)) {
    throw conflict(
      'The restore was refused: it would leave no active administrator. Keep an administrator in the ' +
        'backup or restore with conflict_mode "skip".',
      'no_admin_left',
    );
  }
}

export async function planSettings(p: Planner, settings: Record<string, string>): Promise<void> {
  const write: Partial<Record<SettingKey, string>> = {};
  for (const [key, value] of Object.entries(settings)) {
    const stored = await p.get<{ value: string }>('SELECT value FROM settings WHERE key = ?', [key]);
    const fallback = SETTING_DEFAULTS[key as SettingKey];
    // A value equal to the default needs no row; a different one is new, not a conflict.
    const existing = stored ? { value: stored.value } : value === fallback ? { value } : undefined;
    const d = p.decide('settings', key, existing, { value });
    if (d === 'insert' || d === 'update') write[key as SettingKey] = value;
  }
  if (Object.keys(write).length) p.step((q) => new Settings(q).set(write, q));
}

/**
 * The assistant's model choice, planned as one record (`assistant_models`, id `1`): the list and
 * the default go together, so whatever the conflict mode the default stays one of the allowed
 * models. No stored rows mean the empty choice (every model the endpoint lists, AI_MODEL as the
 * default): a backup holding that is unchanged, one holding a choice is new, not a conflict. A
 * backup without the section (written before it travelled) leaves the models as they are.
 */
export async function planAssistantModels(p: Planner, m: AssistantModelsRec | undefined): Promise<void> {
  if (!m) return;
  const stored = await readModelSettings(p.q);
  const desired = { models_allowed: m.models_allowed, default_model: m.default_model };
  const empty = !m.models_allowed.length && m.default_model === null;
  const existing = stored.stored
    ? { models_allowed: stored.allowed, default_model: stored.default || null }
    : empty
      ? desired
      : undefined;
  const d = p.decide('assistant_models', '1', existing, desired);
  if (d === 'insert' || d === 'update')
    p.step((q) => writeModelSettings(q, { allowed: m.models_allowed, default: m.default_model ?? '' }, p.now));
}

export async function planAssistant(p: Planner, c: ConfigurationT): Promise<void> {
  if (!(await tableExists(p.q, 'skills'))) {
    if (c.skills.length || c.primary_context || c.personal_contexts.length)
      p.summary.warnings.push('the assistant is not installed here; its skills and contexts were not restored');
    return;
  }
  for (const s of c.skills) {
    const existing = await p.get<SkillRow>('SELECT * FROM skills WHERE id = ?', [s.id]);
    const desired = {
      owner_id: s.owner_id ? p.map('users', s.owner_id) : null,
      scope: s.scope,
      ...pickFields(s, SKILL_FIELDS),
    };
    const d = p.decide('skills', s.id, existing, desired);
    if (d === 'insert')
      p.step((q) =>
        insertRow(q, 'skills', { id: s.id, ...desired, created_at: s.created_at, updated_at: s.updated_at }),
      );
    else if (d === 'update') p.step((q) => updateRow(q, 'skills', { ...desired, updated_at: p.now }, { id: s.id }));
  }
  const pc = c.primary_context;
  if (pc) {
    const existing = await p.get<{ content: string }>('SELECT content FROM primary_context WHERE id = 1', []);
    const updatedBy = pc.updated_by ? p.map('users', pc.updated_by) : null;
    const d = p.decide('primary_context', '1', existing, { content: pc.content });
    if (d === 'insert')
      p.step((q) =>
        insertRow(q, 'primary_context', {
          id: 1,
          content: pc.content,
          version: Math.max(1, pc.version),
          updated_by: updatedBy,
          updated_at: pc.updated_at,
        }),
      );
    // The version only grows, so messages that recorded an older version stay distinguishable.
    else if (d === 'update')
      p.step((q: Queryable) =>
        q
          .run(
            'UPDATE primary_context SET content = ?, version = version + 1, updated_by = ?, updated_at = ? ' +
              'WHERE id = 1',
            [pc.content, updatedBy, p.now],
          )
          .then(() => {}),
      );
  }
  for (const x of c.personal_contexts) {
    const userId = p.map('users', x.user_id);
    const existing = await p.get<{ content: string }>('SELECT content FROM personal_contexts WHERE user_id = ?', [
      userId,
    ]);
    const d = p.decide('personal_contexts', userId, existing, { content: x.content });
    if (d === 'insert')
      p.step((q) =>
        insertRow(q, 'personal_contexts', { user_id: userId, content: x.content, updated_at: x.updated_at }),
      );
    else if (d === 'update')
      p.step((q) => updateRow(q, 'personal_contexts', { content: x.content, updated_at: p.now }, { user_id: userId }));
  }
}
