/**
 * Revoking access tokens, with all state in the database so every replica honours it at once.
 *
 * - All of a user's tokens: `users.token_version` is raised. Each token carries the version it was
 *   issued under (`ver`), and the guard, which loads the user row anyway, refuses a token whose
 *   version is not the current one. Used on a password change, a role change and (de)activation.
 * - One token (sign-out): its id (`jti`) goes into `revoked_tokens` until the token would have
 *   expired anyway; the guard looks it up in the same query as the user row. Rows past their expiry
 *   are deleted by the daily retention job (`purgeRevokedTokens`).
 */
import type { Queryable } from '../db/database.ts';
import type { TokenClaims } from './tokens.ts';

/** Every token the user holds stops working (a new one is issued with the new version). */
export async function revokeAllTokens(q: Queryable, userId: string): Promise<void> {
  await q.run('UPDATE users SET token_version = token_version + 1 WHERE id = ?', [userId]);
}

/** This one token stops working before it expires. A token of a deleted user needs nothing. */
export async function revokeToken(q: Queryable, claims: TokenClaims): Promise<void> {
  await q.run(
    'INSERT INTO revoked_tokens (jti, user_id, expires_at) SELECT ?, id, ? FROM users WHERE id = ? ON ' +
      'CONFLICT (jti) DO NOTHING',
    [claims.jti, new Date(claims.exp * 1000).toISOString(), claims.sub],
  );
}

/** Forgets revocations of tokens that have expired by now (the signature check refuses those anyway). */
export async function purgeRevokedTokens(q: Queryable, now: Date): Promise<number> {
  return q.run('DELETE FROM revoked_tokens WHERE expires_at < ?', [now.toISOString()]);
}
