import type { FastifyReply, FastifyRequest } from 'fastify';
import Type from 'typebox';
import type { Core } from '../core.ts';
import { Database } from '../db/database.ts';
import { updateRow } from '../db/rows.ts';
import { conflict, forbidden, HttpError, tooMany, unprocessable } from '../http/problem.ts';
import { WindowLimiter } from '../http/rate-limit.ts';
import { created, errors, Locale, noContent, ok } from '../http/schemas.ts';
import type { App } from '../http/server.ts';
import { selfMonitoringOf } from '../plugins/self-monitoring.ts';
import { Email, Password, Registered, Session, SetupState, UserView } from '../users/definition.ts';
import { createUser, normalizeEmail, publicUser, type UserRow, userCount } from '../users/users.ts';
import { bearerToken, caller, requireUser } from './guard.ts';
import { KnownAddresses } from './login-limiter.ts';
import { checkPassword, hashPassword, verifyPassword } from './passwords.ts';
import { revokeAllTokens, revokeToken } from './revocation.ts';
import { SESSION_COOKIE, TOKEN_TTL_SECONDS } from './tokens.ts';

const Credentials = Type.Object(
  { email: Email, password: Password, locale: Type.Optional(Locale) },
  { additionalProperties: false },
);

// Any text as the email: a login with a malformed address is refused like a wrong one (401), not 422.
const LoginBody = Type.Object(
  { email: Type.String({ minLength: 1, maxLength: 254 }), password: Password },
  { additionalProperties: false },
);

/** `POST /api/auth/password`'s body: the current password and the new one (users/api-types.ts gives its type). */
export const PasswordChangeBody = Type.Object(
  { current_password: Password, password: Password },
  { additionalProperties: false },
);

/** Self-registrations accepted from one address per hour (each replica counts on its own). */
const REGISTRATIONS_PER_HOUR = 10;
const REGISTERED = 'If no account uses this email yet, it has been created: log in with this email and password.';

export default async function authRoutes(app: App, core: Core): Promise<void> {
  const secureCookie = (req: FastifyRequest) => req.protocol === 'https';
  const now = () => core.clock.now().getTime();
  const issue = async (req: FastifyRequest, reply: FastifyReply, row: UserRow): Promise<Session> => {
    const token = await core.tokens.issue(row.id, row.role, Number(row.token_version));
    reply.setCookie(SESSION_COOKIE, token, {
      httpOnly: true,
      sameSite: 'strict',
      secure: secureCookie(req),
      path: '/',
      maxAge: TOKEN_TTL_SECONDS,
    });
    return { access_token: token, token_type: 'bearer' as const, expires_in: TOKEN_TTL_SECONDS, user: publicUser(row) };
  };
  /** Counts a password check against the login throttle (auth/login-limiter.ts); 429 while locked. */
  const beginAttempt = async (email: string, req: FastifyRequest) => {
    const at = now();
    // Asked of the database only while the account is locked, the one case where it decides.
    const known =
      core.loginLimiter.accountLocked(email, at) &&
      (await KnownAddresses.has(core.db, email, req.ip, new Date(at - core.loginLimiter.knownMs)));
    const { wait, attempt } = core.loginLimiter.begin(email, req.ip, at, known);
    if (!attempt)
      throw tooMany(`Too many failed attempts; try again in ${wait} seconds.`, wait, 'login_throttled', {
        seconds: wait,
      });
    return attempt;
  };

  /**
   * The caller changes their own password, proving the current one (throttled like a login). Every
   * token of theirs stops working, the one that made this call included; the caller gets a new one.
   */
  const changeOwnPassword = async (
    req: FastifyRequest,
    reply: FastifyReply,
    current: string | undefined,
    next: string,
  ) => {
    const row = (await core.db.get<UserRow>('SELECT * FROM users WHERE id = ?', [caller(req).id]))!;
    checkPassword(next);
    const attempt = await beginAttempt(row.email, req);
    if (!current || !(await verifyPassword(current, row.password_hash))) {
      throw unprocessable(
        'The current password is wrong; send it as current_password to set a new one.',
        [{ path: 'body/current_password', message: 'is wrong or missing' }],
        'current_password_wrong',
      );
    }
    core.loginLimiter.succeeded(attempt, now());
    const hash = await hashPassword(next);
    await core.db.tx(async (q) => {
      await updateRow(q, 'users', { password_hash: hash, updated_at: core.clock.now().toISOString() }, { id: row.id });
      await revokeAllTokens(q, row.id);
    });
    return issue(req, reply, (await core.db.get<UserRow>('SELECT * FROM users WHERE id = ?', [row.id]))!);
  };

  app.get(
    '/api/setup',
    {
      schema: {
        tags: ['auth'],
        security: [],
        response: { ...ok('Whether the service still needs its first administrator (`needs_setup`).', SetupState) },
      },
    },
    async () => ({ needs_setup: (await userCount(core.db)) === 0 }),
  );

  app.post(
    '/api/setup',
    {
      schema: {
        tags: ['auth'],
        security: [],
        body: Credentials,
        response: {
          ...created('The first administrator, logged in: `access_token`, `user` (and the session cookie).', Session),
          ...errors([409, 'Setup is already done (`setup_done`).']),
        },
      },
    },
    async (req, reply) => {
      if ((await userCount(core.db)) > 0) throw conflict('Setup is already done; log in instead.', 'setup_done');
      const b = req.body;
      const user = await createUser(
        core.db,
        {
          email: b.email,
          password: b.password,
          role: 'admin',
          locale: b.locale,
          max_chats: await core.settings.getInt('default_max_chats'),
          onlyIfFirst: true,
        },
        selfMonitoringOf(core),
      );
      reply.code(201);
      return issue(req, reply, user);
    },
  );

  app.post(
    '/api/auth/login',
    {
      schema: {
        tags: ['auth'],
        security: [],
        description:
          'Logs in. 401 with the same body whether or not the email exists. Failures lock the account for ' +
          'the address they come from (after 5), the address (after 20, any account) and, when 10 ' +
          'addresses fail on one account, the account for addresses that never logged in to it; each lock ' +
          'doubles with every further failure, up to 15 minutes: 429 with Retry-After.',
        body: LoginBody,
        response: {
          ...ok('Logged in: `access_token`, `expires_in`, `user` (and the session cookie).', Session),
          ...errors(
            [401, 'The email or password is wrong, or the account is deactivated (`invalid_credentials`).'],
            [429, 'Too many failed attempts (`login_throttled`); Retry-After says when to try again.'],
          ),
        },
      },
    },
    async (req, reply) => {
      const b = req.body;
      const email = normalizeEmail(b.email);
      const attempt = await beginAttempt(email, req);
      const row = await core.db.get<UserRow>('SELECT * FROM users WHERE email = ?', [email]);
      const ok = await verifyPassword(b.password, row?.password_hash);
      if (!ok || !row || !Database.bool(row.is_active))
        throw new HttpError(
          401,
          'invalid_credentials',
          'The email or password is wrong, or the account is deactivated.',
        );
      core.loginLimiter.succeeded(attempt, now());
      await KnownAddresses.remember(core.db, email, req.ip, core.clock.now(), core.loginLimiter.knownMs);
      return issue(req, reply, row);
    },
  );

  app.post(
    '/api/auth/logout',
    {
      schema: {
        tags: ['auth'],
        security: [],
        description:
          'Signs out: the token sent (bearer header, session cookie, or both) stops working on every ' +
          'replica, and the session cookie is cleared. 204 also without a valid token.',
        response: { ...noContent('Signed out.') },
      },
    },
    async (req, reply) => {
      for (const token of new Set([bearerToken(req), req.cookies?.[SESSION_COOKIE]])) {
        const claims = token ? await core.tokens.verify(token) : undefined;
        if (claims) await revokeToken(core.db, claims);
      }
      reply.clearCookie(SESSION_COOKIE, { path: '/' });
      return reply.code(204).send();
    },
  );

  app.post(
    '/api/auth/password',
    {
      schema: {
        tags: ['auth'],
        description:
          "Changes the caller's password, given the current one. Every token of the caller stops working, " +
          'this one included; the answer carries a new token (and session cookie), as a login does. A ' +
          'wrong current password is 422 and counts as a failed login.',
        body: PasswordChangeBody,
        response: {
          ...ok('The password is changed: a new `access_token` (and session cookie), as a login answers.', Session),
          ...errors([429, 'Too many failed attempts (`login_throttled`).']),
        },
      },
      preHandler: requireUser(core),
    },
    async (req, reply) => {
      const b = req.body;
      return changeOwnPassword(req, reply, b.current_password, b.password);
    },
  );

  app.get(
    '/api/v1/users/me',
    {
      schema: { tags: ['auth'], response: { ...ok("The caller's account.", UserView) } },
      preHandler: requireUser(core),
    },
    async (req) => caller(req),
  );

  app.patch(
    '/api/v1/users/me',
    {
      schema: {
        tags: ['auth'],
        description:
          "Updates the caller's language and, with current_password, password. A password change revokes " +
          'every token of the caller and replaces the session cookie; bearer clients use POST ' +
          '/api/auth/password, which answers with the new token.',
        body: Type.Object(
          {
            locale: Type.Optional(Locale),
            password: Type.Optional(Password),
            current_password: Type.Optional(Password),
          },
          { additionalProperties: false },
        ),
        response: {
          ...ok("The caller's account as changed.", UserView),
          ...errors([429, 'Too many failed attempts at the current password (`login_throttled`).']),
        },
      },
      preHandler: requireUser(core),
    },
    async (req, reply) => {
      const u = caller(req);
      const b = req.body;
      if (b.password !== undefined) await changeOwnPassword(req, reply, b.current_password, b.password);
      if (b.locale)
        await updateRow(core.db, 'users', { locale: b.locale, updated_at: new Date().toISOString() }, { id: u.id });
      return publicUser((await core.db.get<UserRow>('SELECT * FROM users WHERE id = ?', [u.id]))!);
    },
  );

  const registrations = new WindowLimiter(REGISTRATIONS_PER_HOUR, 3_600_000);
  app.post(
    '/api/v1/auth/register',
    {
      schema: {
        tags: ['auth'],
        security: [],
        description:
          'Creates an account while self-registration is enabled (403 otherwise). The answer is the same 201 ' +
          'whether or not the email was already taken (an existing account is left untouched), so it never ' +
          `tells which addresses have accounts: log in afterwards. At most ${REGISTRATIONS_PER_HOUR} ` +
          'attempts an hour from one address (429 with Retry-After).',
        body: Credentials,
        response: {
          ...created('Registered, or the email had an account already: the same answer either way.', Registered),
          ...errors(
            [403, 'Self-registration is disabled.'],
            [429, 'Too many registrations from this address (`registration_throttled`).'],
          ),
        },
      },
    },
    async (req, reply) => {
      if (!(await core.settings.getBool('self_registration_enabled')))
        throw forbidden('Self-registration is disabled; ask an administrator for an account.');
      const wait = registrations.take(req.ip, now());
      if (wait)
        throw tooMany(
          `Too many registrations from this address; try again in ${wait} seconds.`,
          wait,
          'registration_throttled',
          { seconds: wait },
        );
      const b = req.body;
      try {
        await createUser(
          core.db,
          {
            email: b.email,
            password: b.password,
            role: 'user',
            locale: b.locale,
            max_chats: await core.settings.getInt('default_max_chats'),
          },
          selfMonitoringOf(core),
        );
      } catch (err) {
        // Taken: answered like a success (createUser hashed the password before it found out, so the time matches too).
        if (!(err instanceof HttpError && err.code === 'email_taken')) throw err;
      }
      reply.code(201);
      return { email: normalizeEmail(b.email), detail: REGISTERED };
    },
  );
}
