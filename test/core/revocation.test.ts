/**
 * Revocable tokens: sign-out revokes the token sent, a password change every other token of the
 * user, and an administrator's password, role or activation change all of them; a token without
 * an expiry (or an id) is refused. Runs on SQLite and, in the suite's second pass, on PostgreSQL;
 * test/scale/revocation.test.ts checks the same across two replicas.
 */

import crypto from 'node:crypto';
import { SignJWT } from 'jose';
import t from 'tap';
import { applyRetention } from '../../core/src/relay/feature.ts';
import { startService, type TestService } from '../helpers/service.ts';

const login = async (s: TestService, email: string, password = 'user password 1') => {
  const r = await s.request('POST', '/api/auth/login', { body: { email, password } });
  return {
    status: r.status,
    token: r.body?.access_token as string,
    cookie: r.headers.get('set-cookie')?.split(';')[0] ?? '',
  };
};
const me = async (s: TestService, token: string) => (await s.request('GET', '/api/v1/users/me', { token })).status;

t.test('a token without an expiry or an id is refused', async (t) => {
  const s = await startService();
  t.teardown(() => s.stop());
  const key = new Uint8Array(crypto.hkdfSync('sha256', s.service.core.config.secretKey, 'herald', 'jwt-hs256', 32));
  const base = () =>
    new SignJWT({ role: 'admin', ver: 0 })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject(s.admin.id)
      .setIssuer('herald')
      .setAudience('herald')
      .setIssuedAt();
  t.equal(
    await me(s, await base().setJti(crypto.randomUUID()).setExpirationTime('1h').sign(key)),
    200,
    'a complete token works',
  );
  const noExp = await s.request('GET', '/api/v1/users/me', {
    token: await base().setJti(crypto.randomUUID()).sign(key),
  });
  t.equal(noExp.status, 401, 'no exp');
  t.match(noExp.body.detail, /invalid or has expired/);
  t.equal(await me(s, await base().setExpirationTime('1h').sign(key)), 401, 'no jti');
  t.equal(
    await me(s, await base().setJti(crypto.randomUUID()).setExpirationTime('1h').setSubject('').sign(key)),
    401,
    'empty subject',
  );
});

t.test('sign-out revokes the token sent, bearer or cookie, and no other', async (t) => {
  const s = await startService();
  t.teardown(() => s.stop());
  const u = await s.user();
  const other = await login(s, u.email);
  const web = await login(s, u.email);
  t.equal(await me(s, u.token), 200);

  t.equal((await s.request('POST', '/api/auth/logout', { token: u.token })).status, 204);
  const gone = await s.request('GET', '/api/v1/users/me', { token: u.token });
  t.equal(gone.status, 401, 'the signed-out token is refused');
  t.match(gone.body.detail, /signed out/);
  t.equal(await me(s, other.token), 200, 'another session of the same user is untouched');

  t.equal((await s.request('GET', '/api/v1/users/me', { headers: { cookie: web.cookie } })).status, 200);
  const out = await s.request('POST', '/api/auth/logout', { headers: { cookie: web.cookie } });
  t.equal(out.status, 204);
  t.match(out.headers.get('set-cookie'), /herald_session=;/, 'the cookie is cleared');
  t.equal(
    (await s.request('GET', '/api/v1/users/me', { headers: { cookie: web.cookie } })).status,
    401,
    'the cookie token is revoked too, not only cleared',
  );
  t.equal((await s.request('GET', '/api/v1/users/me', { token: web.token })).status, 401, 'whichever way it is sent');

  t.equal((await s.request('POST', '/api/auth/logout')).status, 204, 'signing out without a token is fine');
  t.equal((await s.request('POST', '/api/auth/logout', { token: 'not-a-jwt' })).status, 204);
  t.equal((await s.request('POST', '/api/auth/logout', { token: u.token })).status, 204, 'twice is fine');
  t.equal(await me(s, other.token), 200);

  // The sign-out is kept until the token would have expired, then the daily retention job forgets it.
  const rows = async () =>
    Number((await s.service.core.db.get<{ n: unknown }>('SELECT COUNT(*) AS n FROM revoked_tokens'))!.n);
  t.equal(await rows(), 2);
  await applyRetention(s.service.core);
  t.equal(await rows(), 2, 'kept while the tokens are valid');
  s.clock.advance(12 * 3600_000 + 60_000);
  await applyRetention(s.service.core);
  t.equal(await rows(), 0, 'purged once they have expired');
});

t.test("changing one's password revokes every other token of the user", async (t) => {
  const s = await startService();
  t.teardown(() => s.stop());
  const u = await s.user();
  const phone = await login(s, u.email);
  const laptop = await login(s, u.email);
  const bystander = await s.user();

  const wrong = await s.request('POST', '/api/auth/password', {
    token: u.token,
    body: { current_password: 'not the password', password: 'a new password 2' },
  });
  t.equal(wrong.status, 422);
  t.equal(wrong.body.code, 'current_password_wrong');
  t.equal(await me(s, phone.token), 200, 'a failed change revokes nothing');

  const changed = await s.request('POST', '/api/auth/password', {
    token: u.token,
    body: { current_password: 'user password 1', password: 'a new password 2' },
  });
  t.equal(changed.status, 200);
  t.equal(changed.body.token_type, 'bearer');
  t.equal(changed.body.user.id, u.id);
  t.match(changed.headers.get('set-cookie'), /herald_session=/);
  t.equal(await me(s, changed.body.access_token), 200, 'the caller carries on with the new token');
  for (const [name, token] of [
    ['the calling token', u.token],
    ['phone', phone.token],
    ['laptop', laptop.token],
  ]) {
    const r = await s.request('GET', '/api/v1/users/me', { token });
    t.equal(r.status, 401, `${name} is revoked`);
    t.match(r.body.detail, /revoked/);
  }
  t.equal(await me(s, bystander.token), 200, 'other users keep their sessions');
  t.equal((await login(s, u.email)).status, 401, 'the old password is gone');
  t.equal((await login(s, u.email, 'a new password 2')).status, 200);

  // The older route, PATCH /api/v1/users/me with current_password, revokes the same way and renews the cookie.
  const tablet = await login(s, u.email, 'a new password 2');
  const patched = await s.request('PATCH', '/api/v1/users/me', {
    token: changed.body.access_token,
    body: { password: 'third password 3', current_password: 'a new password 2', locale: 'ru' },
  });
  t.equal(patched.status, 200);
  t.equal(patched.body.locale, 'ru');
  t.equal(await me(s, tablet.token), 401, 'another session is revoked');
  t.equal(await me(s, changed.body.access_token), 401, 'the calling bearer token too');
  const cookie = patched.headers.get('set-cookie')!.split(';')[0]!;
  t.equal(
    (await s.request('GET', '/api/v1/users/me', { headers: { cookie } })).status,
    200,
    'the renewed session cookie works',
  );
});

t.test(
  "an administrator's password, role or activation change revokes the user's tokens; other edits do not",
  async (t) => {
    const s = await startService();
    t.teardown(() => s.stop());
    const patch = (id: string, body: object) =>
      s.request('PATCH', `/api/v1/admin/users/${id}`, { token: s.admin.token, body });

    const u = await s.user();
    t.equal((await patch(u.id, { max_chats: 3, max_ai_messages_per_day: 5 })).status, 200);
    t.equal(await me(s, u.token), 200, 'limits do not touch sessions');
    t.equal((await patch(u.id, { role: 'user', is_active: true })).status, 200);
    t.equal(await me(s, u.token), 200, 'setting what is already set neither');

    t.equal((await patch(u.id, { password: 'set by the admin' })).status, 200);
    t.equal(await me(s, u.token), 401, 'password set by an administrator');
    let token = (await login(s, u.email, 'set by the admin')).token;
    t.equal(await me(s, token), 200);

    t.equal((await patch(u.id, { role: 'admin' })).status, 200);
    t.equal(await me(s, token), 401, 'promotion');
    token = (await login(s, u.email, 'set by the admin')).token;
    t.equal(
      (await s.request('GET', '/api/v1/admin/users', { token })).status,
      200,
      "the new token is an administrator's",
    );
    t.equal((await patch(u.id, { role: 'user' })).status, 200);
    t.equal(
      (await s.request('GET', '/api/v1/admin/users', { token })).status,
      401,
      'demotion: the administrator token is dead at once',
    );

    token = (await login(s, u.email, 'set by the admin')).token;
    t.equal((await patch(u.id, { is_active: false })).status, 200);
    t.equal((await patch(u.id, { is_active: true })).status, 200);
    t.equal(await me(s, token), 401, 'deactivation, even once reactivated');
    t.equal(await me(s, s.admin.token), 200, "the administrator's own token is untouched");
  },
);
