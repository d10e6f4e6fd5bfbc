import { hashPassword } from '../auth/passwords.ts';
import { revokeAllTokens } from '../auth/revocation.ts';
import type { Database, Queryable } from '../db/database.ts';
import { insertRow, updateRow } from '../db/rows.ts';
import { newId, randomToken } from '../http/ids.ts';
import { conflict, notFound } from '../http/problem.ts';
import type { SelfMonitoringReceiver } from '../plugins/self-monitoring.ts';
import { providerSettingsFrom } from '../relay/definitions/provider.ts';
import { trackerSettingsFrom } from '../relay/definitions/tracker.ts';
import { hasPassword, type Role, type UserRow } from './definition.ts';

export { hasPassword, type PublicUser, publicUser, type Role, type UserRow } from './definition.ts';

export const normalizeEmail = (email: string): string => email.trim().toLowerCase();

export interface NewUser {
  email: string;
  password: string;
  role?: Role;
  locale?: string;
  max_chats: number;
  max_ai_messages_per_day?: number | null;
  max_ai_tokens_per_day?: number | null;
  /** False: created deactivated (nobody can log in as them until an administrator activates them). */
  is_active?: boolean;
  /** The user's own storage limit in MB; null or left out follows SERVICE_USER_STORAGE_MB. */
  max_storage_mb?: number | null;
  /** First-run setup: refuse (409) when any user exists, checked inside the transaction. */
  onlyIfFirst?: boolean;
}

/**
 * Creates a user and, when a plugin receives self-monitoring signals (`selfMonitoringOf(core)`),
 * their self-monitoring provider, in one transaction. 409 when the email is taken.
 */
export async function createUser(
  db: Database,
  u: NewUser,
  selfMonitoring: SelfMonitoringReceiver | undefined,
): Promise<UserRow> {
  const hash = await hashPassword(u.password);
  const email = normalizeEmail(u.email);
  return db.tx(async (q) => {
    // Several replicas: concurrent first-run setups queue on one lock, so only the first creates an admin.
    if (u.onlyIfFirst && q.dialect === 'postgresql')
      await q.get<{ locked: unknown }>('SELECT pg_advisory_xact_lock(7226371902) AS locked');
    if (u.onlyIfFirst && (await q.get<{ x: number }>('SELECT 1 AS x FROM users LIMIT 1')))
      throw conflict('Setup is already done; log in instead.', 'setup_done');
    if (await q.get<{ x: number }>('SELECT 1 AS x FROM users WHERE email = ?', [email]))
      throw conflict('A user with this email already exists.', 'email_taken');
    const now = new Date().toISOString();
    const id = newId();
    await insertRow(q, 'users', {
      id,
      email,
      password_hash: hash,
      role: u.role ?? 'user',
      is_active: u.is_active ?? true,
      locale: u.locale ?? 'en',
      max_chats: u.max_chats,
      max_ai_messages_per_day: u.max_ai_messages_per_day ?? null,
      max_ai_tokens_per_day: u.max_ai_tokens_per_day ?? null,
      max_storage_mb: u.max_storage_mb ?? null,
      created_at: now,
      updated_at: now,
    });
    if (selfMonitoring) await ensureSelfMonitoring(q, id, selfMonitoring);
    return (await q.get<UserRow>('SELECT * FROM users WHERE id = ?', [id]))!;
  });
}

/**
 * Makes sure the user has exactly one self-monitoring provider (of the receiver's kind, named after
 * the plugin, with one tracker of the same name); returns its id. A partial unique index forbids a second.
 */
export async function ensureSelfMonitoring(q: Queryable, userId: string, r: SelfMonitoringReceiver): Promise<string> {
  const existing = await q.get<{ id: string }>('SELECT id FROM providers WHERE user_id = ? AND kind = ?', [
    userId,
    r.kind,
  ]);
  if (existing) return existing.id;
  const now = new Date().toISOString();
  const id = newId();
  // The columns its definitions name and the service's own status; the thresholds keep their column defaults.
  await insertRow(q, 'providers', {
    id,
    user_id: userId,
    kind: r.kind,
    ...providerSettingsFrom({ name: r.name, config: {} }),
    webhook_token: randomToken(),
    status: 'ok',
    created_at: now,
    updated_at: now,
  });
  await insertRow(q, 'trackers', {
    id: newId(),
    user_id: userId,
    provider_id: id,
    ...trackerSettingsFrom({ name: r.name }),
    created_at: now,
    updated_at: now,
  });
  return id;
}

/** At boot: every existing user gets their self-monitoring provider. Returns how many were created. */
export async function ensureSelfMonitoringForAll(db: Database, r: SelfMonitoringReceiver): Promise<number> {
  const missing = await db.all<{ id: string }>(
    'SELECT u.id FROM users u WHERE NOT EXISTS (SELECT 1 FROM providers p WHERE p.user_id = u.id AND p.kind = ?)',
    [r.kind],
  );
  for (const u of missing) {
    await db
      .tx((q) => ensureSelfMonitoring(q, u.id, r))
      .catch(async (err) => {
        // Replicas booting together race for the same user; the unique index lets one win, which is all we need.
        if (!(await db.get<{ id: string }>('SELECT id FROM providers WHERE user_id = ? AND kind = ?', [u.id, r.kind])))
          throw err;
      });
  }
  return missing.length;
}

export async function userCount(db: Queryable): Promise<number> {
  const r = await db.get<{ n: number | string }>('SELECT COUNT(*) AS n FROM users');
  return Number(r?.n ?? 0);
}

/**
 * An administrator sets a user's password. Every token the user holds stops working. A user who
 * had no password (restored from a backup without secrets, and kept inactive for that reason) is
 * activated: the password was all they were missing.
 */
export async function setUserPassword(db: Database, userId: string, password: string, now: Date): Promise<UserRow> {
  const hash = await hashPassword(password);
  return db.tx(async (q) => {
    const row = await q.get<UserRow>('SELECT * FROM users WHERE id = ?', [userId]);
    if (!row) throw notFound('User');
    const activate = !hasPassword(row.password_hash);
    const set = { password_hash: hash, updated_at: now.toISOString(), ...(activate ? { is_active: true } : {}) };
    await updateRow(q, 'users', set, { id: userId });
    await revokeAllTokens(q, userId);
    return (await q.get<UserRow>('SELECT * FROM users WHERE id = ?', [userId]))!;
  });
}
