import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { harness, newChat, newUser, send, upload } from './support.ts';

t.test('admin user management: list, create, update, role validation; users are refused', async (t) => {
  const { svc } = await harness(t);
  const a = svc.admin.token;
  const u = await newUser(svc);
  t.equal((await svc.request('GET', '/api/v1/admin/users', { token: u.token })).status, 403);
  t.equal((await svc.request('GET', '/api/v1/admin/users')).status, 401);

  const created = await svc.request('POST', '/api/v1/admin/users', {
    token: a,
    body: { email: 'New.Person@Example.test', password: 'long enough pw' },
  });
  t.equal(created.status, 201);
  t.match(created.body, {
    email: 'new.person@example.test',
    role: 'user',
    is_active: true,
    max_chats: 20,
    max_ai_messages_per_day: null,
    max_ai_tokens_per_day: null,
  });
  t.notOk('password_hash' in created.body);
  t.equal(
    (
      await svc.request('POST', '/api/v1/admin/users', {
        token: a,
        body: { email: 'new.person@example.test', password: 'long enough pw' },
      })
    ).status,
    409,
  );
  t.equal(
    (
      await svc.request('POST', '/api/v1/admin/users', {
        token: a,
        body: { email: 'x@example.test', password: 'long enough pw', role: 'owner' },
      })
    ).status,
    422,
  );
  t.equal(
    (
      await svc.request('POST', '/api/v1/admin/users', {
        token: a,
        body: { email: 'y@example.test', password: 'short' },
      })
    ).status,
    422,
  );
  const listed = await svc.request('GET', '/api/v1/admin/users/', { token: a });
  t.same(
    listed.body.users.map((x: any) => x.email).sort(),
    ['admin@example.test', 'new.person@example.test', u.email].sort(),
  );

  const id = created.body.id;
  const patched = await svc.request('PATCH', `/api/v1/admin/users/${id}`, {
    token: a,
    body: { role: 'admin', max_chats: 3, max_ai_messages_per_day: 10, max_ai_tokens_per_day: 1000 },
  });
  t.equal(patched.status, 200);
  t.match(patched.body, { role: 'admin', max_chats: 3, max_ai_messages_per_day: 10, max_ai_tokens_per_day: 1000 });
  t.match(
    (await svc.request('PATCH', `/api/v1/admin/users/${id}`, { token: a, body: { max_ai_messages_per_day: null } }))
      .body,
    { max_ai_messages_per_day: null, max_ai_tokens_per_day: 1000 },
  );
  for (const body of [
    { role: 'superuser' },
    { role: 'Admin' },
    { max_chats: -1 },
    { is_active: 'no' },
    { email: 'a@b.c' },
    { max_ai_tokens_per_day: 1.5 },
  ]) {
    const r = await svc.request('PATCH', `/api/v1/admin/users/${id}`, { token: a, body });
    t.equal(r.status, 422, `refused: ${JSON.stringify(body)}`);
  }
  t.equal(
    (await svc.request('PATCH', '/api/v1/admin/users/not-a-uuid', { token: a, body: { max_chats: 1 } })).status,
    404,
  );
  t.equal(
    (
      await svc.request('PATCH', '/api/v1/admin/users/0190a000-0000-7000-8000-000000000000', {
        token: a,
        body: { max_chats: 1 },
      })
    ).status,
    404,
  );

  // Deactivation stops the user's token and their logins; reactivation does not revive the old token.
  t.equal(
    (await svc.request('PATCH', `/api/v1/admin/users/${u.id}`, { token: a, body: { is_active: false } })).body
      .is_active,
    false,
  );
  t.equal((await svc.request('GET', '/api/v1/chats/', { token: u.token })).status, 401);
  t.equal(
    (await svc.request('POST', '/api/auth/login', { body: { email: u.email, password: 'user password 1' } })).status,
    401,
  );
  t.equal(
    (await svc.request('PATCH', `/api/v1/admin/users/${u.id}`, { token: a, body: { is_active: true } })).body.is_active,
    true,
  );
  t.equal(
    (await svc.request('GET', '/api/v1/chats/', { token: u.token })).status,
    401,
    'the token from before the deactivation stays revoked',
  );
  const again = await svc.request('POST', '/api/auth/login', { body: { email: u.email, password: 'user password 1' } });
  t.equal(
    (await svc.request('GET', '/api/v1/chats/', { token: again.body.access_token })).status,
    200,
    'a new login works',
  );
});

t.test('an admin cannot delete themselves, and the last active admin cannot be demoted or deactivated', async (t) => {
  const { svc } = await harness(t);
  const a = svc.admin.token;
  const self = await svc.request('DELETE', `/api/v1/admin/users/${svc.admin.id}`, { token: a });
  t.equal(self.status, 403);
  t.match(self.body.detail, /own account/);
  t.equal(
    (await svc.request('PATCH', `/api/v1/admin/users/${svc.admin.id}`, { token: a, body: { role: 'user' } })).status,
    409,
  );
  t.equal(
    (await svc.request('PATCH', `/api/v1/admin/users/${svc.admin.id}`, { token: a, body: { is_active: false } }))
      .status,
    409,
  );
  t.equal(
    (await svc.request('GET', `/api/v1/admin/users/${svc.admin.id}`, { token: a })).body.role,
    'admin',
    'unchanged',
  );
  const other = await svc.request('POST', '/api/v1/admin/users', {
    token: a,
    body: { email: 'second@example.test', password: 'long enough pw', role: 'admin' },
  });
  t.equal(
    (await svc.request('PATCH', `/api/v1/admin/users/${svc.admin.id}`, { token: a, body: { role: 'user' } })).body.role,
    'user',
    'fine with another admin',
  );
  t.equal(
    (await svc.request('GET', '/api/v1/admin/users', { token: a })).status,
    401,
    'the demotion revokes the token at once',
  );
  const relogin = await svc.request('POST', '/api/auth/login', {
    body: { email: svc.admin.email, password: 'correct horse battery' },
  });
  t.equal(
    (await svc.request('GET', '/api/v1/admin/users', { token: relogin.body.access_token })).status,
    403,
    'and a new token carries the new role',
  );
  t.ok(other.body.id);
});

t.test('deleting a user removes everything they own', async (t) => {
  const { svc } = await harness(t);
  const u = await newUser(svc);
  const keep = await newUser(svc);
  const chat = await newChat(svc, u.token);
  await send(svc, u.token, chat, 'hello');
  await send(svc, u.token, chat, 'make a report');
  await svc.request('POST', '/api/v1/skills/', { token: u.token, body: { name: 'mine', prompt: 'p' } });
  await svc.request('PUT', '/api/v1/users/me/context', { token: u.token, body: { content: 'me' } });
  await svc.request('POST', '/api/v1/memory', { token: u.token, body: { content: 'note' } });
  await upload(svc, u.token, 'a.txt', 'some text');
  await svc.request('POST', '/api/v1/reports', { token: u.token, body: {} });
  const keptChat = await newChat(svc, keep.token);
  const reportsDir = path.join(svc.dataDir, 'reports', u.id);
  t.equal(fs.readdirSync(reportsDir).length, 2, 'two report files before');

  const db = svc.service.core.db;
  const tables = [
    'chats',
    'chat_messages',
    'personal_contexts',
    'ai_usage_daily',
    'memory_entries',
    'documents',
    'reports',
    'providers',
  ];
  const count = async (table: string, col: string, id: string) =>
    Number((await db.get<{ n: number }>(`SELECT COUNT(*) AS n FROM ${table} WHERE ${col} = ?`, [id]))!.n);
  for (const table of tables) t.ok((await count(table, 'user_id', u.id)) > 0, `${table} has rows before`);
  t.equal(await count('skills', 'owner_id', u.id), 1);

  const del = await svc.request('DELETE', `/api/v1/admin/users/${u.id}`, { token: svc.admin.token });
  t.equal(del.status, 204);
  for (const table of tables) t.equal(await count(table, 'user_id', u.id), 0, `${table} has no rows after`);
  t.equal(await count('skills', 'owner_id', u.id), 0);
  t.notOk(fs.existsSync(reportsDir), 'report files are gone');
  t.equal((await svc.request('GET', '/api/v1/chats/', { token: u.token })).status, 401, 'their token no longer works');
  t.equal((await svc.request('GET', `/api/v1/admin/users/${u.id}`, { token: svc.admin.token })).status, 404);
  t.equal(
    (await svc.request('GET', `/api/v1/chats/${keptChat}`, { token: keep.token })).status,
    200,
    'other users keep their data',
  );
  t.equal((await svc.request('DELETE', `/api/v1/admin/users/${u.id}`, { token: svc.admin.token })).status, 404);
});

t.test(
  'settings read and write typed values; registration follows self_registration_enabled and default_max_chats',
  async (t) => {
    const { svc } = await harness(t);
    const a = svc.admin.token;
    t.same((await svc.request('GET', '/api/v1/admin/settings', { token: a })).body, {
      self_registration_enabled: false,
      default_max_chats: 20,
      default_max_ai_messages_per_day: 100,
      default_max_ai_tokens_per_day: 500000,
    });
    const reg = (email: string) =>
      svc.request('POST', '/api/v1/auth/register', { body: { email, password: 'long enough pw' } });
    const refused = await reg('first@example.test');
    t.equal(refused.status, 403);

    const on = await svc.request('PATCH', '/api/v1/admin/settings', {
      token: a,
      body: { self_registration_enabled: true, default_max_chats: 2 },
    });
    t.same(on.body, {
      self_registration_enabled: true,
      default_max_chats: 2,
      default_max_ai_messages_per_day: 100,
      default_max_ai_tokens_per_day: 500000,
    });
    const ok = await reg('first@example.test');
    t.equal(ok.status, 201);
    const login = await svc.request('POST', '/api/auth/login', {
      body: { email: 'first@example.test', password: 'long enough pw' },
    });
    t.equal(login.body.user.max_chats, 2, 'the new user takes default_max_chats');
    const token = login.body.access_token;
    await newChat(svc, token);
    await newChat(svc, token);
    t.equal((await svc.request('POST', '/api/v1/chats/', { token, body: { title: 'three' } })).status, 409);
    t.equal(
      (
        await svc.request('POST', '/api/v1/admin/users', {
          token: a,
          body: { email: 'made@example.test', password: 'long enough pw' },
        })
      ).body.max_chats,
      2,
      'admin-created users too',
    );

    for (const body of [
      { self_registration_enabled: 'yes' },
      { default_max_chats: -1 },
      { default_max_chats: 'many' },
      { backup_secrets_mode: 'include' },
    ]) {
      t.equal(
        (await svc.request('PATCH', '/api/v1/admin/settings', { token: a, body })).status,
        422,
        `refused: ${JSON.stringify(body)}`,
      );
    }
    t.equal((await svc.request('GET', '/api/v1/admin/settings', { token })).status, 403);
    await svc.request('PATCH', '/api/v1/admin/settings', { token: a, body: { self_registration_enabled: false } });
    t.equal((await reg('second@example.test')).status, 403);
  },
);

t.test('an administrator creates a user deactivated, with their own storage limit, in one write', async (t) => {
  const { svc } = await harness(t);
  const a = svc.admin.token;
  const body = { email: 'later@example.test', password: 'long enough pw', is_active: false, max_storage_mb: 7 };
  const created = await svc.request('POST', '/api/v1/admin/users', { token: a, body });
  t.equal(created.status, 201);
  t.match(created.body, { is_active: false, max_storage_mb: 7, password_set: true });
  t.same((await svc.request('GET', `/api/v1/admin/users/${created.body.id}`, { token: a })).body, created.body);
  const login = await svc.request('POST', '/api/auth/login', { body: { email: body.email, password: body.password } });
  t.equal(login.status, 401, 'a deactivated user cannot log in');
  const active = await svc.request('POST', '/api/v1/admin/users', {
    token: a,
    body: { email: 'now@example.test', password: 'long enough pw' },
  });
  t.match(active.body, { is_active: true, max_storage_mb: null }, 'left out: active, the service-wide limit');
});
