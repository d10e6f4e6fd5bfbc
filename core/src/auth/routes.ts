import Type from 'typebox';
import type { App } from '../http/server.ts';
import type { Core } from '../core.ts';
import { createUser, normalizeEmail, publicUser, userCount, type UserRow } from '../users/users.ts';
import { hashPassword, verifyPassword } from './passwords.ts';
import { SESSION_COOKIE, TOKEN_TTL_SECONDS } from './tokens.ts';
import { conflict, forbidden, tooMany, unauthorized, unprocessable } from '../http/problem.ts';
import { Database } from '../db/database.ts';
import { requireUser, caller } from './guard.ts';
import { selfMonitoringOf } from '../plugins/self-monitoring.ts';
import { Locale } from '../http/schemas.ts';
import type { FastifyReply, FastifyRequest } from 'fastify';

const Credentials = Type.Object({
  email: Type.String({ format: 'email', maxLength: 254 }),
  password: Type.String({ minLength: 1, maxLength: 1024 }),
  locale: Type.Optional(Locale),
}, { additionalProperties: false });

const LoginBody = Type.Object({ email: Type.String({ minLength: 1, maxLength: 254 }), password: Type.String({ minLength: 1, maxLength: 1024 }) }, { additionalProperties: false });

export default async function authRoutes(app: App, core: Core): Promise<void> {
  const secureCookie = (req: FastifyRequest) => req.protocol === 'https';
  const issue = async (req: FastifyRequest, reply: FastifyReply, row: UserRow) => {
    const token = await core.tokens.issue(row.id, row.role);
    reply.setCookie(SESSION_COOKIE, token, { httpOnly: true, sameSite: 'strict', secure: secureCookie(req), path: '/', maxAge: TOKEN_TTL_SECONDS });
    return { access_token: token, token_type: 'bearer' as const, expires_in: TOKEN_TTL_SECONDS, user: publicUser(row) };
  };

  app.get('/api/setup', { schema: { tags: ['auth'], security: [] } }, async () => ({ needs_setup: (await userCount(core.db)) === 0 }));

  app.post('/api/setup', { schema: { tags: ['auth'], security: [], body: Credentials } }, async (req, reply) => {
    if ((await userCount(core.db)) > 0) throw conflict('Setup is already done; log in instead.', 'setup_done');
    const b = req.body as { email: string; password: string; locale?: string };
    const user = await createUser(core.db, { email: b.email, password: b.password, role: 'admin', locale: b.locale, max_chats: await core.settings.getInt('default_max_chats'), onlyIfFirst: true }, selfMonitoringOf(core));
    reply.code(201);
    return issue(req, reply, user);
  });

  app.post('/api/auth/login', { schema: { tags: ['auth'], security: [], body: LoginBody } }, async (req, reply) => {
    const b = req.body as { email: string; password: string };
    const email = normalizeEmail(b.email);
    const keys = [`ip:${req.ip}`, `email:${email}`];
    const wait = core.loginLimiter.retryAfter(keys);
    if (wait > 0) throw tooMany(`Too many failed logins; try again in ${wait} seconds.`, wait, 'login_throttled');
    const row = await core.db.get<UserRow>('SELECT * FROM users WHERE email = ?', [email]);
    const ok = await verifyPassword(b.password, row?.password_hash);
    if (!ok || !row || !Database.bool(row.is_active)) {
      core.loginLimiter.fail(keys);
      throw unauthorized('The email or password is wrong, or the account is deactivated.');
    }
    core.loginLimiter.succeed(keys);
    return issue(req, reply, row);
  });

  app.post('/api/auth/logout', { schema: { tags: ['auth'], security: [] } }, async (_req, reply) => {
    reply.clearCookie(SESSION_COOKIE, { path: '/' });
    return reply.code(204).send();
  });

  app.get('/api/v1/users/me', { schema: { tags: ['auth'] }, preHandler: requireUser(core) }, async (req) => caller(req));

  app.patch('/api/v1/users/me', {
    schema: {
      tags: ['auth'],
      body: Type.Object({
        locale: Type.Optional(Locale),
        password: Type.Optional(Type.String({ minLength: 1, maxLength: 1024 })),
        current_password: Type.Optional(Type.String({ minLength: 1, maxLength: 1024 })),
      }, { additionalProperties: false }),
    },
    preHandler: requireUser(core),
  }, async (req) => {
    const u = caller(req);
    const b = req.body as { locale?: string; password?: string; current_password?: string };
    if (b.password !== undefined) {
      const row = await core.db.get<UserRow>('SELECT * FROM users WHERE id = ?', [u.id]);
      if (!b.current_password || !(await verifyPassword(b.current_password, row?.password_hash))) {
        throw unprocessable('The current password is wrong; send it as current_password to set a new one.', [{ path: 'body/current_password', message: 'is wrong or missing' }], 'current_password_wrong');
      }
      await core.db.run('UPDATE users SET password_hash = ?, updated_at = ? WHERE id = ?', [await hashPassword(b.password), new Date().toISOString(), u.id]);
    }
    if (b.locale) await core.db.run('UPDATE users SET locale = ?, updated_at = ? WHERE id = ?', [b.locale, new Date().toISOString(), u.id]);
    return publicUser((await core.db.get<UserRow>('SELECT * FROM users WHERE id = ?', [u.id]))!);
  });

  app.post('/api/v1/auth/register', { schema: { tags: ['auth'], security: [], body: Credentials } }, async (req, reply) => {
    if (!(await core.settings.getBool('self_registration_enabled'))) throw forbidden('Self-registration is disabled; ask an administrator for an account.');
    const b = req.body as { email: string; password: string; locale?: string };
    const user = await createUser(core.db, { email: b.email, password: b.password, role: 'user', locale: b.locale, max_chats: await core.settings.getInt('default_max_chats') }, selfMonitoringOf(core));
    reply.code(201);
    return issue(req, reply, user);
  });
}
