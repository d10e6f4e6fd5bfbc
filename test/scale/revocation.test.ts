/**
 * Token revocation across replicas: two Herald processes on one PostgreSQL database. A sign-out,
 * a password change, a role change or a deactivation made through one replica is honoured by the
 * other at once, because the state is in the database (users.token_version, revoked_tokens).
 * Always runs on PostgreSQL, whatever HERALD_TEST_DB says.
 */

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { postgresDatabaseUrl } from '../helpers/service.ts';
import { call, type Replica, startReplicas, stopReplicas } from './cluster.ts';

t.setTimeout(120_000);

const dbUrl = await postgresDatabaseUrl();
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-revocation-'));
const replicas: Replica[] = await startReplicas(2, {
  SERVICE_DATABASE_URL: dbUrl,
  SERVICE_DATA_DIR: dataDir,
  SERVICE_PLUGINS: '@herald/provider-bridge-self',
});
t.teardown(async () => {
  if (!t.passing())
    for (const r of replicas) t.comment(`replica ${r.index} log tail:\n${r.logs.slice(-25).join('\n')}`);
  await stopReplicas(replicas);
  fs.rmSync(dataDir, { recursive: true, force: true });
});
const [a, b] = replicas as [Replica, Replica];
const me = async (r: Replica, token: string) => (await call(r, 'GET', '/api/v1/users/me', { token })).status;
const login = async (r: Replica, email: string, password: string) => {
  const res = await call(r, 'POST', '/api/auth/login', { body: { email, password } });
  if (res.status !== 200) throw new Error(`login failed: ${res.status}`);
  return res.body.access_token as string;
};

t.test('a revocation through one replica is honoured by the other', async (t) => {
  const admin = (
    await call(a, 'POST', '/api/setup', { body: { email: 'admin@example.test', password: 'replica admin password' } })
  ).body.access_token as string;
  const user = await call(b, 'POST', '/api/v1/admin/users', {
    token: admin,
    body: { email: 'u@example.test', password: 'first password 1' },
  });
  t.equal(user.status, 201);
  const id = user.body.id as string;

  const one = await login(a, 'u@example.test', 'first password 1');
  const two = await login(b, 'u@example.test', 'first password 1');
  t.same(
    [await me(a, one), await me(b, one), await me(a, two), await me(b, two)],
    [200, 200, 200, 200],
    'tokens from either replica work on both',
  );

  t.equal((await call(a, 'POST', '/api/auth/logout', { token: one })).status, 204, 'sign-out through replica 0');
  t.equal(await me(b, one), 401, 'replica 1 refuses the signed-out token');
  t.equal(await me(b, two), 200, 'and keeps the other session');

  const changed = await call(b, 'POST', '/api/auth/password', {
    token: two,
    body: { current_password: 'first password 1', password: 'second password 2' },
  });
  t.equal(changed.status, 200, 'password changed through replica 1');
  t.equal(await me(a, two), 401, 'replica 0 refuses the tokens from before the change');
  const three = changed.body.access_token as string;
  t.equal(await me(a, three), 200, 'and accepts the new one');

  t.equal(
    (await call(a, 'PATCH', `/api/v1/admin/users/${id}`, { token: admin, body: { role: 'admin' } })).status,
    200,
    'role change through replica 0',
  );
  t.equal(await me(b, three), 401, 'replica 1 refuses the token issued for the old role');

  const four = await login(b, 'u@example.test', 'second password 2');
  t.equal(
    (await call(b, 'PATCH', `/api/v1/admin/users/${id}`, { token: admin, body: { is_active: false } })).status,
    200,
    'deactivated through replica 1',
  );
  t.equal(
    (await call(b, 'PATCH', `/api/v1/admin/users/${id}`, { token: admin, body: { is_active: true } })).status,
    200,
    'and reactivated',
  );
  t.equal(await me(a, four), 401, 'replica 0 refuses the token from before the deactivation');

  const five = await login(a, 'u@example.test', 'second password 2');
  t.equal(
    (await call(a, 'PATCH', `/api/v1/admin/users/${id}`, { token: admin, body: { password: 'set by the admin 3' } }))
      .status,
    200,
    'password set by the administrator',
  );
  t.equal(await me(b, five), 401, 'replica 1 refuses the token from before');
  t.equal(await me(b, admin), 200, 'the administrator is untouched throughout');
});
