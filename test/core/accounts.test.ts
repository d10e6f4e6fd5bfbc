/**
 * Accounts: changing one's own password, an administrator setting a user's password (also for a
 * user restored from a backup without one), and signing out, each checked by which tokens still work.
 */
import t from 'tap';
import { NO_PASSWORD } from '../../core/src/backup/plan-core.ts';
import { startService } from '../helpers/service.ts';

t.test('accounts: own password, administrator password, sign-out', async (t) => {
  const s = await startService();
  t.teardown(() => s.stop());
  const me = (token: string) => s.request('GET', '/api/v1/users/me', { token }).then((r) => r.status);
  const login = (email: string, password: string) =>
    s.request('POST', '/api/auth/login', { body: { email, password } });

  t.test("changing one's own password needs the current one and retires every other token", async (t) => {
    const u = await s.user();
    const other = (await login(u.email, 'user password 1')).body.access_token as string;
    t.equal(await me(other), 200);
    const wrong = await s.request('POST', '/api/auth/password', {
      token: u.token,
      body: { current_password: 'not it at all', password: 'a brand new password' },
    });
    t.equal(wrong.status, 422);
    t.equal(wrong.body.code, 'current_password_wrong');
    t.equal(await me(other), 200, 'a refused change revokes nothing');
    const short = await s.request('POST', '/api/auth/password', {
      token: u.token,
      body: { current_password: 'user password 1', password: 'short' },
    });
    t.equal(short.status, 422);
    t.equal(short.body.code, 'password_too_short');

    const changed = await s.request('POST', '/api/auth/password', {
      token: u.token,
      body: { current_password: 'user password 1', password: 'a brand new password' },
    });
    t.equal(changed.status, 200);
    t.equal(await me(other), 401, 'the token of another session stops working');
    t.equal(await me(changed.body.access_token), 200, 'the session that changed it goes on with the token it got back');
    t.equal((await login(u.email, 'user password 1')).status, 401, 'the old password is refused');
    t.equal((await login(u.email, 'a brand new password')).status, 200, 'the new one logs in');
  });

  t.test("an administrator sets a user's password", async (t) => {
    const u = await s.user();
    const put = (id: string, password: string, token = s.admin.token) =>
      s.request('PUT', `/api/v1/admin/users/${id}/password`, { token, body: { password } });
    t.equal((await put(u.id, 'set by the admin', u.token)).status, 403, 'not by a user');
    t.equal(await me(u.token), 200);
    t.equal((await put('01900000-0000-7000-8000-000000000000', 'set by the admin')).status, 404, 'unknown user');
    const short = await put(u.id, 'short');
    t.equal(short.status, 422);
    t.equal(short.body.code, 'password_too_short');

    const set = await put(u.id, 'set by the admin');
    t.equal(set.status, 200);
    t.equal(set.body.password_set, true);
    t.notOk('password_hash' in set.body);
    t.equal(await me(u.token), 401, "the user's tokens stop working");
    t.equal(await me(s.admin.token), 200, "the administrator's do not");
    t.equal((await login(u.email, 'user password 1')).status, 401);
    t.equal((await login(u.email, 'set by the admin')).status, 200, 'the user logs in with the new password');
  });

  t.test('a user restored without a password is inactive until an administrator sets one', async (t) => {
    const u = await s.user();
    // What a restore from a backup made without secrets writes (backup/plan-core.ts).
    await s.service.core.db.run('UPDATE users SET password_hash = ?, is_active = ? WHERE id = ?', [
      NO_PASSWORD,
      false,
      u.id,
    ]);
    const listed = (await s.request('GET', `/api/v1/admin/users/${u.id}`, { token: s.admin.token })).body;
    t.match(listed, { is_active: false, password_set: false }, 'the administrator sees why');
    const set = await s.request('PUT', `/api/v1/admin/users/${u.id}/password`, {
      token: s.admin.token,
      body: { password: 'welcome back again' },
    });
    t.equal(set.status, 200);
    t.match(set.body, { is_active: true, password_set: true }, 'activated by the password');
    t.equal((await login(u.email, 'welcome back again')).status, 200);

    const v = await s.user();
    await s.service.core.db.run('UPDATE users SET is_active = ? WHERE id = ?', [false, v.id]);
    const kept = await s.request('PUT', `/api/v1/admin/users/${v.id}/password`, {
      token: s.admin.token,
      body: { password: 'still switched off' },
    });
    t.equal(kept.body.is_active, false, 'a user deactivated on purpose stays inactive');
  });

  t.test('signing out revokes the token on the server', async (t) => {
    const u = await s.user();
    const second = (await login(u.email, 'user password 1')).body.access_token as string;
    t.equal((await s.request('POST', '/api/auth/logout', { token: u.token })).status, 204);
    t.equal(await me(u.token), 401, 'the signed-out token is refused');
    t.equal(await me(second), 200, 'another session stays');
  });
});
