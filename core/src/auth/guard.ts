import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Core } from '../core.ts';
import { Database } from '../db/database.ts';
import { forbidden, unauthorized } from '../http/problem.ts';
import { SESSION_COOKIE } from './tokens.ts';
import { publicUser, type PublicUser, type UserRow } from '../users/users.ts';

declare module 'fastify' {
  interface FastifyRequest { user?: PublicUser }
}

function bearer(req: FastifyRequest): string | undefined {
  const h = req.headers.authorization;
  if (h) {
    const m = /^Bearer\s+(\S+)$/i.exec(h);
    return m ? m[1] : undefined;
  }
  return req.cookies?.[SESSION_COOKIE];
}

/** Resolves the caller from a bearer token or the session cookie; a deleted or inactive user is refused. */
export async function authenticate(core: Core, req: FastifyRequest): Promise<PublicUser> {
  const token = bearer(req);
  if (!token) throw unauthorized('Authentication is required: send a bearer token or log in.');
  const userId = await core.tokens.verify(token);
  if (!userId) throw unauthorized('The access token is invalid or has expired; log in again.');
  const row = await core.db.get<UserRow>('SELECT * FROM users WHERE id = ?', [userId]);
  if (!row) throw unauthorized('The account behind this token no longer exists.');
  if (!Database.bool(row.is_active)) throw unauthorized('This account is deactivated.');
  const user = publicUser(row);
  req.user = user;
  return user;
}

export const requireUser = (core: Core) => async (req: FastifyRequest, _reply: FastifyReply) => { await authenticate(core, req); };
export const requireAdmin = (core: Core) => async (req: FastifyRequest, _reply: FastifyReply) => {
  const u = await authenticate(core, req);
  if (u.role !== 'admin') throw forbidden('This needs an administrator.');
};

/** The authenticated caller (after requireUser/requireAdmin ran). */
export function caller(req: FastifyRequest): PublicUser {
  if (!req.user) throw unauthorized();
  return req.user;
}
