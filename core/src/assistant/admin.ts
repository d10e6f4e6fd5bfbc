import Type from 'typebox';
import { caller, requireAdmin } from '../auth/guard.ts';
import { hashPassword } from '../auth/passwords.ts';
import { revokeAllTokens } from '../auth/revocation.ts';
import type { Core } from '../core.ts';
import { updateRow } from '../db/rows.ts';
import { conflict, forbidden, notFound } from '../http/problem.ts';
import { created, errors, ListQuery, noContent, ok } from '../http/schemas.ts';
import type { App } from '../http/server.ts';
import { selfMonitoringOf } from '../plugins/self-monitoring.ts';
import {
  AssistantSettingsPatch,
  AssistantSettingsView,
  assistantSettingsOf,
  storedSettings,
} from '../settings/definition.ts';
import { Password, UserCreateBody, UserList, UserParams, UserPatchBody, UserView } from '../users/definition.ts';
import { createUser, publicUser, setUserPassword, type UserRow } from '../users/users.ts';
import { bool, collection, int } from './paths.ts';
import type { Reports } from './reports.ts';

/**
 * User administration and the assistant's settings. Deleting a user removes everything they own
 * (foreign keys cascade; their report files are removed here). An administrator cannot delete
 * themselves (403), and the last active administrator cannot be demoted or deactivated (409).
 * Setting a password, changing the role or (de)activating revokes the user's tokens. `max_storage_mb`
 * overrides SERVICE_USER_STORAGE_MB for one user (null: back to it; storage.ts says what counts).
 */
export async function adminRoutes(app: App, core: Core, reports: Reports): Promise<void> {
  const opts = { preHandler: requireAdmin(core) };
  const tags = ['admin'];
  const get = async (id: string) => {
    const row = await core.db.get<UserRow>('SELECT * FROM users WHERE id = ?', [id]);
    if (!row) throw notFound('User');
    return row;
  };

  collection(
    app,
    'GET',
    '/api/v1/admin/users',
    {
      ...opts,
      schema: {
        tags,
        querystring: ListQuery,
        response: { ...ok('The users (`users`), newest first.', UserList) },
      },
    },
    async (req) => {
      const q = req.query;
      const rows = await core.db.all<UserRow>(
        `SELECT * FROM users${q.before ? ' WHERE id < ?' : ''} ORDER BY id DESC LIMIT ?`,
        q.before ? [q.before, q.limit ?? 50] : [q.limit ?? 50],
      );
      return { users: rows.map(publicUser) };
    },
  );

  collection(
    app,
    'POST',
    '/api/v1/admin/users',
    {
      ...opts,
      schema: {
        tags,
        body: UserCreateBody,
        response: {
          ...created('The new user.', UserView),
          ...errors([409, 'A user with this email exists (`email_taken`).']),
        },
      },
    },
    async (req, reply) => {
      const b = req.body;
      const row = await createUser(
        core.db,
        {
          email: b.email,
          password: b.password,
          role: b.role ?? 'user',
          locale: b.locale,
          max_chats: b.max_chats ?? (await core.settings.getInt('default_max_chats')),
          max_ai_messages_per_day: b.max_ai_messages_per_day ?? null,
          max_ai_tokens_per_day: b.max_ai_tokens_per_day ?? null,
          is_active: b.is_active,
          max_storage_mb: b.max_storage_mb,
        },
        selfMonitoringOf(core),
      );
      reply.code(201);
      return publicUser(row);
    },
  );

  app.get(
    '/api/v1/admin/users/:user_id',
    { ...opts, schema: { tags, params: UserParams, response: { ...ok('The user.', UserView) } } },
    async (req) => publicUser(await get(req.params.user_id)),
  );

  app.patch(
    '/api/v1/admin/users/:user_id',
    {
      ...opts,
      schema: {
        tags,
        params: UserParams,
        body: UserPatchBody,
        response: {
          ...ok('The user as changed.', UserView),
          ...errors([409, 'This would leave no active administrator (`last_admin`).']),
        },
      },
    },
    async (req) => {
      const row = await get(req.params.user_id);
      const b = req.body;
      const next = {
        role: b.role ?? row.role,
        max_chats: b.max_chats ?? row.max_chats,
        is_active: b.is_active ?? bool(row.is_active),
        max_ai_messages_per_day:
          b.max_ai_messages_per_day === undefined ? row.max_ai_messages_per_day : b.max_ai_messages_per_day,
        max_ai_tokens_per_day:
          b.max_ai_tokens_per_day === undefined ? row.max_ai_tokens_per_day : b.max_ai_tokens_per_day,
        max_storage_mb: b.max_storage_mb === undefined ? (row.max_storage_mb ?? null) : b.max_storage_mb,
      };
      const hash = b.password === undefined ? undefined : await hashPassword(b.password);
      // A new password, role or activation state retires every token the user holds, on every replica.
      const revoke = hash !== undefined || next.role !== row.role || next.is_active !== bool(row.is_active);
      await core.db.tx(async (q) => {
        if (revoke) await revokeAllTokens(q, row.id);
        const set = { ...next, ...(hash ? { password_hash: hash } : {}), updated_at: core.clock.now().toISOString() };
        await updateRow(q, 'users', set, { id: row.id });
        const admins = int(
          (
            await q.get<{ n: unknown }>(`SELECT COUNT(*) AS n FROM users WHERE role = 'admin' AND is_active = ?`, [
              true,
            ])
          )?.n,
        );
        if (admins === 0)
          throw conflict(
            'This would leave no active administrator; promote or activate another one first.',
            'last_admin',
          );
      });
      return publicUser(await get(row.id));
    },
  );

  app.put(
    '/api/v1/admin/users/:user_id/password',
    {
      ...opts,
      schema: {
        tags,
        params: UserParams,
        summary: "Set a user's password",
        description:
          "Sets the user's password (8 characters or more, at most 72 bytes). Every token the user holds " +
          'stops working. A user restored from a backup without a password (password_set false, kept ' +
          'inactive for that reason) is activated and can log in with it. 404 for an unknown user.',
        body: Type.Object({ password: Password }, { additionalProperties: false }),
        response: { ...ok('The user, with the new password set.', UserView) },
      },
    },
    async (req) => {
      const { user_id } = await get(req.params.user_id).then((r) => ({ user_id: r.id }));
      return publicUser(await setUserPassword(core.db, user_id, req.body.password, core.clock.now()));
    },
  );

  app.delete(
    '/api/v1/admin/users/:user_id',
    {
      ...opts,
      schema: {
        tags,
        params: UserParams,
        response: {
          ...noContent('Deleted, with everything the user owned.'),
          ...errors([403, "Not an administrator, or the administrator's own account."]),
        },
      },
    },
    async (req, reply) => {
      const row = await get(req.params.user_id);
      if (row.id === caller(req).id) throw forbidden('You cannot delete your own account; another administrator can.');
      await core.db.run('DELETE FROM users WHERE id = ?', [row.id]);
      await reports.removeUserFiles(row.id);
      return reply.code(204).send();
    },
  );

  const readSettings = async () => assistantSettingsOf(await core.settings.all());
  app.get(
    '/api/v1/admin/settings',
    { ...opts, schema: { tags, response: { ...ok("The assistant's settings.", AssistantSettingsView) } } },
    readSettings,
  );
  app.patch(
    '/api/v1/admin/settings',
    {
      ...opts,
      schema: {
        tags,
        body: AssistantSettingsPatch,
        response: { ...ok("The assistant's settings as changed.", AssistantSettingsView) },
      },
    },
    async (req) => {
      await core.settings.set(storedSettings(req.body));
      return readSettings();
    },
  );
}
