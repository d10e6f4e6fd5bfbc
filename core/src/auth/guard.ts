import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Core } from '../core.ts';
import { Database } from '../db/database.ts';
import { forbidden, unauthorized } from '../http/problem.ts';
import { type PublicUser, publicUser, type UserRow } from '../users/users.ts';
import { SESSION_COOKIE } from './tokens.ts';

declare module 'fastify' {
  interface FastifyRequest {
    user?: PublicUser;
  }
}

/** The token in the `Authorization: Bearer` header. */
export const bearerToken = (req: FastifyRequest): string | undefined =>
  /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '')?.[1];

/**
 * The token a request authenticates with: the bearer header when there is an Authorization header, else the session
 * cookie.
 */
function presentedToken(req: FastifyRequest): string | undefined {
  return req.headers.authorization ? bearerToken(req) : req.cookies?.[SESSION_COOKIE];
}

/**
 * Resolves the caller from a bearer token or the session cookie. Refused: a deleted or inactive
 * user, a token signed out (`revoked_tokens`), and one issued before the user's token version was
 * raised (password, role or activation change). One query reads the user row and the sign-out.
 */
export async function authenticate(core: Core, req: FastifyRequest): Promise<PublicUser> {
  const token = presentedToken(req);
  if (!token) throw unauthorized('Authentication is required: send a bearer token or log in.');
  const claims = await core.tokens.verify(token);
  if (!claims) throw unauthorized('The access token is invalid or has expired; log in again.');
  const row = await core.db.get<UserRow & { signed_out: unknown }>(
    'SELECT u.*, (SELECT 1 FROM revoked_tokens r WHERE r.jti = ?) AS signed_out FROM users u WHERE u.id = ?',
    [claims.jti, claims.sub],
  );
  if (!row) throw unauthorized('The account behind this token no longer exists.');
  if (!Database.bool(row.is_active)) throw unauthorized('This account is deactivated.');
  if (row.signed_out != null) throw unauthorized('This session was signed out; log in again.');
  if (Number(row.token_version) !== claims.ver)
    throw unauthorized('This token was revoked by a password, role or account change; log in again.');
  const user = publicUser(row);
  req.user = user;
  return user;
}

/**
 * Marks a route guard. Routes name their guards as `preHandler`; the server moves every marked one to
 * the route's `onRequest` hooks (see {@link guardsFirst}), so a request is authenticated and
 * authorized before its body is read, parsed or validated: an anonymous or unauthorized caller gets
 * 401 or 403, never a 422 that would describe the route's schema.
 */
const GUARD = Symbol('herald.guard');
/** Who a guard lets through: any signed-in user, or administrators only. */
type GuardRole = 'user' | 'admin';
type Guard = ((req: FastifyRequest, reply: FastifyReply) => Promise<void>) & { [GUARD]?: GuardRole };
const guard = (role: GuardRole, fn: (req: FastifyRequest, reply: FastifyReply) => Promise<void>): Guard =>
  Object.assign(fn, { [GUARD]: role });

export const requireUser = (core: Core) =>
  guard('user', async (req) => {
    await authenticate(core, req);
  });
export const requireAdmin = (core: Core) =>
  guard('admin', async (req) => {
    const u = await authenticate(core, req);
    if (u.role !== 'admin') throw forbidden('This needs an administrator.');
  });

/** The roles of the guards a route names (in `onRequest` or `preHandler`): what it answers 401 and 403 for. */
export function guardRoles(route: { preHandler?: unknown; onRequest?: unknown }): Set<GuardRole> {
  const list = (v: unknown): unknown[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);
  const roles = [...list(route.onRequest), ...list(route.preHandler)].map((h) =>
    typeof h === 'function' ? (h as Guard)[GUARD] : undefined,
  );
  return new Set(roles.filter((r): r is GuardRole => r !== undefined));
}

/** An `onRoute` hook: moves the route's guards from `preHandler` to the front of its `onRequest` hooks. */
export function guardsFirst(route: { preHandler?: unknown; onRequest?: unknown }): void {
  const list = (v: unknown): unknown[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);
  const pre = list(route.preHandler);
  const guards = pre.filter((h) => typeof h === 'function' && (h as Guard)[GUARD]);
  if (!guards.length) return;
  route.preHandler = pre.filter((h) => !guards.includes(h));
  route.onRequest = [...list(route.onRequest), ...guards];
}

/** The authenticated caller (after requireUser/requireAdmin ran). */
export function caller(req: FastifyRequest): PublicUser {
  if (!req.user) throw unauthorized();
  return req.user;
}
