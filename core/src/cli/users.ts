/**
 * `herald user …`: list, create, reset-password, activate, deactivate, revoke-sessions. The same
 * rules and code as the API: `createUser` (the user's self-monitoring provider made with them),
 * `setUserPassword` (bcrypt, 8 characters to 72 bytes, every token revoked), `revokeAllTokens`,
 * the last active administrator kept. Written through the database, so a running service (every
 * replica) sees each change at the user's next request.
 */

import { revokeAllTokens } from '../auth/revocation.ts';
import { type Database, Database as Db } from '../db/database.ts';
import { conflict } from '../http/problem.ts';
import { selfMonitoringOf } from '../plugins/self-monitoring.ts';
import { createUser, normalizeEmail, publicUser, setUserPassword, type UserRow } from '../users/users.ts';
import { withCore } from './context.ts';
import type { Messages } from './i18n.ts';
import { CliError, EXIT, out, printJson, table } from './output.ts';
import { newPassword } from './terminal.ts';

/** What the API's email format accepts, roughly: one @, something either side, no spaces, 254 characters at most. */
const EMAIL = /^[^\s@]+@[^\s@]+$/;

function checkEmail(email: string): string {
  const e = normalizeEmail(email);
  if (!EMAIL.test(e) || e.length > 254) throw new CliError('user.bad_email', { email }, EXIT.usage);
  return e;
}

async function findUser(db: Database, email: string): Promise<UserRow> {
  const row = await db.get<UserRow>('SELECT * FROM users WHERE email = ?', [normalizeEmail(email)]);
  if (!row) throw new CliError('user.unknown_email', { email: normalizeEmail(email) });
  return row;
}

export async function listUsers(m: Messages, o: { json?: boolean }): Promise<void> {
  await withCore(m, 'existing', 'always', async (core) => {
    const rows = (await core.db.all<UserRow>('SELECT * FROM users ORDER BY email')).map(publicUser);
    if (o.json) {
      printJson(rows);
      return;
    }
    if (!rows.length) {
      out(m.t('user.none'));
      return;
    }
    const yes = m.t('common.yes');
    const no = m.t('common.no');
    for (const line of table(
      [
        m.t('user.col_email'),
        m.t('user.col_role'),
        m.t('user.col_active'),
        m.t('user.col_password'),
        m.t('user.col_created'),
      ],
      rows.map((u) => [
        u.email,
        m.t(`user.role_${u.role}`),
        u.is_active ? yes : no,
        u.password_set ? yes : no,
        m.date(u.created_at),
      ]),
    ))
      out(line);
  });
}

export async function createUserCommand(
  m: Messages,
  email: string,
  o: { admin?: boolean; passwordStdin?: boolean; locale?: string },
): Promise<void> {
  const address = checkEmail(email);
  await withCore(m, 'create', 'always', async (core) => {
    // Asked only once it is known the user can be made: nobody types a password for nothing.
    if (await core.db.get('SELECT 1 AS one FROM users WHERE email = ?', [address]))
      throw new CliError('user.taken', { email: address });
    const password = await newPassword(m, { stdin: Boolean(o.passwordStdin), email: address });
    const row = await createUser(
      core.db,
      {
        email: address,
        password,
        role: o.admin ? 'admin' : 'user',
        locale: o.locale ?? m.lang,
        max_chats: await core.settings.getInt('default_max_chats'),
      },
      selfMonitoringOf(core),
    );
    out(m.t(o.admin ? 'user.created_admin' : 'user.created', { email: row.email }));
  });
}

export async function resetPassword(m: Messages, email: string, o: { passwordStdin?: boolean }): Promise<void> {
  await withCore(m, 'existing', 'always', async (core) => {
    const row = await findUser(core.db, email);
    const password = await newPassword(m, { stdin: Boolean(o.passwordStdin), email: row.email });
    const after = await setUserPassword(core.db, row.id, password, core.clock.now());
    out(m.t('user.password_set', { email: after.email }));
    if (!Db.bool(row.is_active) && Db.bool(after.is_active)) out(m.t('user.activated_with_password'));
    else if (!Db.bool(after.is_active)) out(m.t('user.still_inactive', { email: after.email }));
  });
}

/**
 * (De)activates as an administrator's PATCH does: the user's tokens are revoked either way, and
 * deactivating the last active administrator is refused (409 last_admin).
 */
export async function setActive(m: Messages, email: string, active: boolean): Promise<void> {
  await withCore(m, 'existing', 'always', async (core) => {
    const row = await findUser(core.db, email);
    if (Db.bool(row.is_active) === active) {
      out(m.t(active ? 'user.already_active' : 'user.already_inactive', { email: row.email }));
      return;
    }
    await core.db.tx(async (q) => {
      await q.run('UPDATE users SET is_active = ?, updated_at = ? WHERE id = ?', [
        active,
        core.clock.now().toISOString(),
        row.id,
      ]);
      await revokeAllTokens(q, row.id);
      const admins = Number(
        (await q.get<{ n: unknown }>(`SELECT COUNT(*) AS n FROM users WHERE role = 'admin' AND is_active = ?`, [true]))
          ?.n ?? 0,
      );
      if (admins === 0)
        throw conflict(
          'This would leave no active administrator; promote or activate another one first.',
          'last_admin',
        );
    });
    out(m.t(active ? 'user.activated' : 'user.deactivated', { email: row.email }));
  });
}

export async function revokeSessions(m: Messages, email: string): Promise<void> {
  await withCore(m, 'existing', 'always', async (core) => {
    const row = await findUser(core.db, email);
    await core.db.tx((q) => revokeAllTokens(q, row.id));
    out(m.t('user.sessions_revoked', { email: row.email }));
  });
}
