/**
 * `herald user …` against a real database (SQLite file, or PostgreSQL in the second pass): a
 * password reset while the service runs (old tokens refused, the new password logs in), an
 * administrator created on an empty database, (de)activation and ended sessions seen by the running
 * service at once.
 */
import t from 'tap';
import fs from 'node:fs';
import { readStoppedDatabase, startService } from '../helpers/service.ts';
import { emptyDataDir, herald, randomEmail, runOnDatabase, serviceEnv } from './support.ts';

t.test('an administrator created on an empty database, with their self-monitoring provider; the service then starts on it', async (t) => {
  const dir = await emptyDataDir();
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const env = await serviceEnv(dir);
  const email = randomEmail('first-admin');

  const list = await herald(['user', 'list'], env);
  t.equal(list.code, 1, 'other commands refuse a database that is not there');
  t.match(list.stderr, /^herald: (there is no database at .*Check SERVICE_DATA_DIR and SERVICE_DATABASE_URL|the PostgreSQL database .* has no Herald tables\. Check SERVICE_DATABASE_URL)/);

  const made = await herald(['user', 'create', '--admin', email.toUpperCase(), '--password-stdin'], env, 'first admin password\n');
  t.equal(made.code, 0, made.stderr);
  t.equal(made.stdout, `Administrator ${email} created. They can log in now.\n`);
  t.match(made.stderr, /A new database was set up at/);

  const row = await readStoppedDatabase(dir, 'SELECT id, role, is_active, password_hash FROM users WHERE email = ?', [email]);
  t.equal(row?.role, 'admin');
  t.match(String(row?.password_hash), /^\$2[aby]\$/, 'a bcrypt hash');
  const own = await readStoppedDatabase<{ n: number | string }>(dir, 'SELECT COUNT(*) AS n FROM providers p JOIN trackers t ON t.provider_id = p.id WHERE p.user_id = ?', [row!.id]);
  t.equal(Number(own?.n), 1, 'the self-monitoring provider and its tracker were made with the user, as the API makes them');

  const again = await herald(['user', 'create', email, '--password-stdin'], env, 'another password\n');
  t.equal(again.code, 1);
  t.equal(again.stderr, `herald: a user with the email ${email} exists already; to set their password: herald user reset-password ${email}\n`);

  // A database behind this version (as after an upgrade, before the service's start migrates it) is refused unless --migrate.
  const { migrations } = await import('../../migrations/index.ts');
  const newest = migrations.at(-1)!.id;
  t.equal(await runOnDatabase(dir, 'DELETE FROM schema_migrations WHERE id = ?', [newest]), 1);
  const behind = await herald(['user', 'list'], env);
  t.equal(behind.code, 1);
  t.match(behind.stderr, new RegExp(`^herald: the database .* is behind this version: 1 migration is not applied \\(${newest}\\)\\. Start or restart the service once .* run this command again with --migrate\\.\\n$`));
  const migrated = await herald(['--migrate', 'user', 'list'], env);
  t.equal(migrated.code, 0, migrated.stderr);
  t.match(migrated.stderr, /was brought to this version's schema first \(1 migration\), as the service's start does/);
  t.match(migrated.stdout, new RegExp(`^Email .*\\n${email.replace(/[.]/g, '\\.')} +administrator `));
  t.ok(await readStoppedDatabase(dir, 'SELECT id FROM schema_migrations WHERE id = ?', [newest]), 'the migration is recorded again');

  const s = await startService({}, { dataDir: dir, setup: false });
  t.teardown(() => s.stop());
  t.same((await s.request('GET', '/api/setup')).body, { needs_setup: false }, 'first-run setup is done');
  const login = await s.request('POST', '/api/auth/login', { body: { email, password: 'first admin password' } });
  t.equal(login.status, 200, login.text);
  t.equal(login.body.user.role, 'admin');
});

t.test('with the service running', async (t) => {
  const s = await startService();
  t.teardown(() => s.stop());
  const env = await serviceEnv(s.dataDir);

  t.test('reset-password: the old tokens are refused at once, the new password logs in', async (t) => {
    const u = await s.user();
    t.equal((await s.request('GET', '/api/v1/users/me', { token: u.token })).status, 200, 'the token works before');

    const r = await herald(['user', 'reset-password', u.email, '--password-stdin'], env, 'a brand new password\n');
    t.equal(r.code, 0, r.stderr);
    t.equal(r.stdout, `Password of ${u.email} set. Every session they had has ended; they log in with the new password.\n`);
    t.equal((await s.request('GET', '/api/v1/users/me', { token: u.token })).status, 401, 'the old token is refused');
    t.equal((await s.request('POST', '/api/auth/login', { body: { email: u.email, password: 'user password 1' } })).status, 401, 'the old password is refused');
    const login = await s.request('POST', '/api/auth/login', { body: { email: u.email, password: 'a brand new password' } });
    t.equal(login.status, 200, 'the new password logs in');
    t.equal((await s.request('GET', '/api/v1/users/me', { token: login.body.access_token })).status, 200);
    t.equal((await s.request('GET', '/api/v1/users/me', { token: s.admin.token })).status, 200, 'other users keep their sessions');
  });

  t.test('deactivate, activate and revoke-sessions take effect at once; the last administrator stays', async (t) => {
    const u = await s.user();

    const off = await herald(['user', 'deactivate', u.email], env);
    t.equal(off.code, 0, off.stderr);
    t.equal(off.stdout, `${u.email} is deactivated: they cannot log in, and every session they had has ended.\n`);
    t.equal((await s.request('GET', '/api/v1/users/me', { token: u.token })).status, 401, 'their token is refused');
    t.equal((await s.request('POST', '/api/auth/login', { body: { email: u.email, password: 'user password 1' } })).status, 401, 'they cannot log in');

    const on = await herald(['user', 'activate', u.email], env);
    t.equal(on.code, 0, on.stderr);
    const login = await s.request('POST', '/api/auth/login', { body: { email: u.email, password: 'user password 1' } });
    t.equal(login.status, 200, 'they log in again');

    const revoked = await herald(['user', 'revoke-sessions', u.email], env);
    t.equal(revoked.code, 0, revoked.stderr);
    t.equal(revoked.stdout, `Every session of ${u.email} has ended; they log in again.\n`);
    t.equal((await s.request('GET', '/api/v1/users/me', { token: login.body.access_token })).status, 401, 'the session token is refused');

    const last = await herald(['user', 'deactivate', s.admin.email], env);
    t.equal(last.code, 1);
    t.equal(last.stderr, 'herald: This would leave no active administrator; promote or activate another one first.\n', 'the API\'s text');
    t.equal((await s.request('GET', '/api/v1/users/me', { token: s.admin.token })).status, 200, 'the administrator is untouched');

    const listed = await herald(['user', 'list', '--json'], env);
    t.equal(listed.code, 0, listed.stderr);
    const users = JSON.parse(listed.stdout) as { email: string; role: string; is_active: boolean; password_set: boolean }[];
    const mine = (email: string) => users.filter((x) => x.email === email).map((x) => [x.role, x.is_active, x.password_set]);
    t.same(mine(s.admin.email), [['admin', true, true]]);
    t.same(mine(u.email), [['user', true, true]]);
    t.notOk(listed.stdout.includes('$2'), 'no password hash is printed');
    const text = await herald(['user', 'list'], env);
    t.match(text.stdout, new RegExp(`^Email +Role +Active +Password set +Created\\n(.*\\n)*${s.admin.email.replace('.', '\\.')} +administrator +yes +yes `));
  });
});
