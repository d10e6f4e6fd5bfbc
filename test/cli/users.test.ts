/**
 * `herald user …` beside a running service (its SQLite file, or PostgreSQL in the second pass): a
 * password reset (old tokens refused, the new password logs in), (de)activation and ended sessions
 * seen by the service at once, the last administrator kept (the first administrator on an empty
 * database: first-admin.test.ts).
 */
import t from 'tap';
import { startService } from '../helpers/service.ts';
import { herald, serviceEnv } from './support.ts';

t.test('with the service running', async (t) => {
  const s = await startService();
  t.teardown(() => s.stop());
  const env = await serviceEnv(s.dataDir);

  t.test('reset-password: the old tokens are refused at once, the new password logs in', async (t) => {
    const u = await s.user();
    t.equal((await s.request('GET', '/api/v1/users/me', { token: u.token })).status, 200, 'the token works before');

    const r = await herald(['user', 'reset-password', u.email, '--password-stdin'], env, 'a brand new password\n');
    t.equal(r.code, 0, r.stderr);
    t.equal(
      r.stdout,
      `Password of ${u.email} set. Every session they had has ended; they log in with the new password.\n`,
    );
    t.equal((await s.request('GET', '/api/v1/users/me', { token: u.token })).status, 401, 'the old token is refused');
    t.equal(
      (await s.request('POST', '/api/auth/login', { body: { email: u.email, password: 'user password 1' } })).status,
      401,
      'the old password is refused',
    );
    const login = await s.request('POST', '/api/auth/login', {
      body: { email: u.email, password: 'a brand new password' },
    });
    t.equal(login.status, 200, 'the new password logs in');
    t.equal((await s.request('GET', '/api/v1/users/me', { token: login.body.access_token })).status, 200);
    t.equal(
      (await s.request('GET', '/api/v1/users/me', { token: s.admin.token })).status,
      200,
      'other users keep their sessions',
    );
  });

  t.test('deactivate, activate and revoke-sessions take effect at once; the last administrator stays', async (t) => {
    const u = await s.user();

    const off = await herald(['user', 'deactivate', u.email], env);
    t.equal(off.code, 0, off.stderr);
    t.equal(off.stdout, `${u.email} is deactivated: they cannot log in, and every session they had has ended.\n`);
    t.equal((await s.request('GET', '/api/v1/users/me', { token: u.token })).status, 401, 'their token is refused');
    t.equal(
      (await s.request('POST', '/api/auth/login', { body: { email: u.email, password: 'user password 1' } })).status,
      401,
      'they cannot log in',
    );

    const on = await herald(['user', 'activate', u.email], env);
    t.equal(on.code, 0, on.stderr);
    const login = await s.request('POST', '/api/auth/login', { body: { email: u.email, password: 'user password 1' } });
    t.equal(login.status, 200, 'they log in again');

    const revoked = await herald(['user', 'revoke-sessions', u.email], env);
    t.equal(revoked.code, 0, revoked.stderr);
    t.equal(revoked.stdout, `Every session of ${u.email} has ended; they log in again.\n`);
    t.equal(
      (await s.request('GET', '/api/v1/users/me', { token: login.body.access_token })).status,
      401,
      'the session token is refused',
    );

    const last = await herald(['user', 'deactivate', s.admin.email], env);
    t.equal(last.code, 1);
    t.equal(
      last.stderr,
      'herald: This would leave no active administrator; promote or activate another one first.\n',
      "the API's text",
    );
    t.equal(
      (await s.request('GET', '/api/v1/users/me', { token: s.admin.token })).status,
      200,
      'the administrator is untouched',
    );

    const listed = await herald(['user', 'list', '--json'], env);
    t.equal(listed.code, 0, listed.stderr);
    const users = JSON.parse(listed.stdout) as {
      email: string;
      role: string;
      is_active: boolean;
      password_set: boolean;
    }[];
    const mine = (email: string) =>
      users.filter((x) => x.email === email).map((x) => [x.role, x.is_active, x.password_set]);
    t.same(mine(s.admin.email), [['admin', true, true]]);
    t.same(mine(u.email), [['user', true, true]]);
    t.notOk(listed.stdout.includes('$2'), 'no password hash is printed');
    const text = await herald(['user', 'list'], env);
    t.match(
      text.stdout,
      new RegExp(
        `^Email +Role +Active +Password set +Created\\n(.*\\n)*${s.admin.email.replace('.', '\\.')} ` +
          '+administrator +yes +yes ',
      ),
    );
  });
});
