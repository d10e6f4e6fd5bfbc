import crypto from 'node:crypto';
import { SignJWT } from 'jose';
import t from 'tap';
import { startService } from '../helpers/service.ts';

t.test('setup, login, me, logout and bad input', async (t) => {
  const s = await startService({}, { setup: false });
  t.teardown(() => s.stop());
  t.same((await s.request('GET', '/api/setup')).body, { needs_setup: true });
  const long = 'é'.repeat(37); // 74 bytes
  const tooLong = await s.request('POST', '/api/setup', { body: { email: 'a@example.test', password: long } });
  t.equal(tooLong.status, 422);
  t.match(tooLong.body.detail, /72 bytes/);
  t.equal((await s.request('GET', '/api/setup')).body.needs_setup, true, 'nothing half-written');
  const setup = await s.request('POST', '/api/setup', {
    body: { email: 'Admin@Example.test', password: 'a good password' },
  });
  t.equal(setup.status, 201);
  t.equal(setup.body.token_type, 'bearer');
  t.equal(setup.body.user.role, 'admin');
  t.match(setup.headers.get('set-cookie'), /herald_session=.*HttpOnly.*SameSite=Strict/i);
  const again = await s.request('POST', '/api/setup', {
    body: { email: 'b@example.test', password: 'a good password' },
  });
  t.equal(again.status, 409);
  t.equal(again.body.status, 409);
  t.type(again.body.detail, 'string');

  const bridge = await s.service.core.db.all(`SELECT id FROM providers WHERE user_id = ? AND kind = 'bridge_self'`, [
    setup.body.user.id,
  ]);
  t.equal(bridge.length, 1, 'setup created exactly one bridge_self provider');

  const me = await s.request('GET', '/api/v1/users/me', { token: setup.body.access_token });
  t.equal(me.status, 200);
  t.equal(me.body.email, 'admin@example.test');
  t.notOk('password_hash' in me.body);
  const cookie = setup.headers.get('set-cookie')!.split(';')[0]!;
  t.equal((await s.request('GET', '/api/v1/users/me', { headers: { cookie } })).status, 200, 'session cookie works');

  const wrong = await s.request('POST', '/api/auth/login', {
    body: { email: 'admin@example.test', password: 'nope nope nope' },
  });
  const ghost = await s.request('POST', '/api/auth/login', {
    body: { email: 'ghost@example.test', password: 'nope nope nope' },
  });
  t.equal(wrong.status, 401);
  t.same(wrong.body, ghost.body, 'same body whether or not the email exists');

  t.equal((await s.request('GET', '/api/v1/users/me')).status, 401);
  t.equal((await s.request('GET', '/api/v1/users/me', { token: 'not-a-jwt' })).status, 401);
  const key = new Uint8Array(crypto.hkdfSync('sha256', s.service.core.config.secretKey, 'herald', 'jwt-hs256', 32));
  const expired = await new SignJWT({ role: 'admin' })
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject(setup.body.user.id)
    .setIssuer('herald')
    .setAudience('herald')
    .setIssuedAt(1000)
    .setExpirationTime(2000)
    .sign(key);
  const e = await s.request('GET', '/api/v1/users/me', { token: expired });
  t.equal(e.status, 401);
  t.match(e.body.detail, /expired/);
  const forged = await new SignJWT({ role: 'admin' })
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject(setup.body.user.id)
    .setIssuer('herald')
    .setAudience('herald')
    .setExpirationTime('1h')
    .sign(crypto.randomBytes(32));
  t.equal((await s.request('GET', '/api/v1/users/me', { token: forged })).status, 401, 'foreign key refused');

  const malformed = await s.request('POST', '/api/auth/login', {
    raw: '{"email":',
    headers: { 'content-type': 'application/json' },
  });
  t.equal(malformed.status, 400);
  t.equal(malformed.headers.get('content-type'), 'application/problem+json; charset=utf-8');
  const unknown = await s.request('POST', '/api/auth/login', { body: { email: 'a@b.c', password: 'x', admin: true } });
  t.equal(unknown.status, 422);
  t.match(unknown.body.errors[0].path, /admin/);
  const wrongType = await s.request('POST', '/api/auth/login', { body: { email: 5, password: 'x' } });
  t.equal(wrongType.status, 422);
  const huge = await s.request('POST', '/api/auth/login', {
    raw: JSON.stringify({ email: 'a@b.c', password: 'x'.repeat(2 * 1024 * 1024) }),
    headers: { 'content-type': 'application/json' },
  });
  t.equal(huge.status, 413);

  const out = await s.request('POST', '/api/auth/logout', { headers: { cookie } });
  t.equal(out.status, 204);
  t.match(out.headers.get('set-cookie'), /herald_session=;/);
});

t.test('inactive and deleted users lose access; failed logins are throttled', async (t) => {
  const s = await startService();
  t.teardown(() => s.stop());
  const u = await s.user();
  t.equal((await s.request('GET', '/api/v1/users/me', { token: u.token })).status, 200);
  await s.service.core.db.run('UPDATE users SET is_active = ? WHERE id = ?', [false, u.id]);
  t.equal((await s.request('GET', '/api/v1/users/me', { token: u.token })).status, 401, 'inactive');
  await s.service.core.db.run('DELETE FROM users WHERE id = ?', [u.id]);
  const gone = await s.request('GET', '/api/v1/users/me', { token: u.token });
  t.equal(gone.status, 401, 'deleted');
  t.equal(
    (await s.service.core.db.all('SELECT id FROM providers WHERE user_id = ?', [u.id])).length,
    0,
    'owned rows removed with the user',
  );

  let last;
  for (let i = 0; i < 12; i++)
    last = await s.request('POST', '/api/auth/login', {
      body: { email: s.admin.email, password: `wrong ${i} password` },
    });
  t.equal(last!.status, 429);
  t.ok(Number(last!.headers.get('retry-after')) > 0, 'Retry-After given');
});

t.test('security headers, CORS with credentials, OpenAPI', async (t) => {
  const s = await startService({ SERVICE_CORS_ALLOWED_ORIGINS: 'https://app.example.test' });
  t.teardown(() => s.stop());
  const h = await s.request('GET', '/api/health', { headers: { origin: 'https://app.example.test' } });
  t.equal(h.headers.get('access-control-allow-origin'), 'https://app.example.test');
  t.equal(h.headers.get('access-control-allow-credentials'), 'true');
  t.equal(h.headers.get('x-content-type-options'), 'nosniff');
  t.ok(h.headers.get('content-security-policy'));
  const other = await s.request('GET', '/api/health', { headers: { origin: 'https://evil.example.test' } });
  t.equal(other.headers.get('access-control-allow-origin'), null);
  const doc = await s.request('GET', '/api/docs/json');
  t.equal(doc.status, 200);
  t.ok(doc.body.paths['/api/auth/login']);
  t.ok(doc.body.paths['/api/health']);
});

t.test('forwarded-for is honoured only from trusted proxies', async (t) => {
  const s = await startService({ SERVICE_FORWARDED_ALLOW_IPS: '10.9.9.9' });
  t.teardown(() => s.stop());
  const ips: string[] = [];
  for (let i = 0; i < 11; i++) {
    const r = await s.request('POST', '/api/auth/login', {
      body: { email: 'x@example.test', password: `bad pass ${i}` },
      headers: { 'x-forwarded-for': `203.0.113.${i}` },
    });
    ips.push(String(r.status));
  }
  t.equal(ips.at(-1), '429', 'spoofed forwarded-for from an untrusted peer does not reset the per-address throttle');
});

t.test('password changes: by the user with the current one, by an administrator', async (t) => {
  const s = await startService();
  t.teardown(() => s.stop());
  const u = await s.user();
  const wrong = await s.request('PATCH', '/api/v1/users/me', {
    token: u.token,
    body: { password: 'brand new password', current_password: 'not it at all' },
  });
  t.equal(wrong.status, 422);
  const long = await s.request('PATCH', '/api/v1/users/me', {
    token: u.token,
    body: { password: 'я'.repeat(40), current_password: 'user password 1' },
  });
  t.equal(long.status, 422, 'over 72 bytes');
  t.match(long.body.detail, /72 bytes/);
  const ok = await s.request('PATCH', '/api/v1/users/me', {
    token: u.token,
    body: { password: 'brand new password', current_password: 'user password 1' },
  });
  t.equal(ok.status, 200);
  t.equal(
    (await s.request('POST', '/api/auth/login', { body: { email: u.email, password: 'brand new password' } })).status,
    200,
  );
  const byAdmin = await s.request('PATCH', `/api/v1/admin/users/${u.id}`, {
    token: s.admin.token,
    body: { password: 'set by the admin' },
  });
  t.equal(byAdmin.status, 200);
  t.equal(
    (await s.request('POST', '/api/auth/login', { body: { email: u.email, password: 'set by the admin' } })).status,
    200,
  );
  t.equal(
    (await s.request('POST', '/api/auth/login', { body: { email: u.email, password: 'brand new password' } })).status,
    401,
  );
});

t.test('a password of exactly 72 bytes is accepted and signs in; 73 bytes are refused everywhere', async (t) => {
  const s = await startService();
  t.teardown(() => s.stop());
  const u = await s.user();
  const at72 = `${'я'.repeat(35)}ok`; // 70 + 2 bytes
  const at73 = `${at72}!`;
  t.equal(Buffer.byteLength(at72), 72);
  const login = (password: string) => s.request('POST', '/api/auth/login', { body: { email: u.email, password } });

  const over = await s.request('PATCH', '/api/v1/users/me', {
    token: u.token,
    body: { password: at73, current_password: 'user password 1' },
  });
  t.equal(over.status, 422, '73 bytes refused');
  t.equal(over.body.code, 'password_too_long');
  t.match(over.body.detail, /73 bytes long; the limit is 72 bytes/);
  const mine = await s.request('PATCH', '/api/v1/users/me', {
    token: u.token,
    body: { password: at72, current_password: 'user password 1' },
  });
  t.equal(mine.status, 200, '72 bytes accepted');
  t.equal((await login(at72)).status, 200, 'and it signs in');
  t.equal((await login(at73)).status, 401, 'one byte more does not, although bcrypt reads only the first 72');

  const byAdmin73 = await s.request('PATCH', `/api/v1/admin/users/${u.id}`, {
    token: s.admin.token,
    body: { password: `${at73.slice(0, -3)}ab!` },
  });
  t.equal(byAdmin73.status, 422, 'an administrator cannot set 73 bytes either');
  const byAdmin72 = await s.request('PATCH', `/api/v1/admin/users/${u.id}`, {
    token: s.admin.token,
    body: { password: `${at72.slice(0, -2)}OK` },
  });
  t.equal(byAdmin72.status, 200, 'nor is 72 refused to an administrator');
  t.equal((await login(`${at72.slice(0, -2)}OK`)).status, 200);

  const fresh = await startService({}, { setup: false });
  t.teardown(() => fresh.stop());
  t.equal(
    (await fresh.request('POST', '/api/setup', { body: { email: 'first@example.test', password: at73 } })).status,
    422,
    'setup refuses 73 bytes',
  );
  t.equal(
    (await fresh.request('POST', '/api/setup', { body: { email: 'first@example.test', password: at72 } })).status,
    201,
    'setup takes 72',
  );
  t.equal(
    (await fresh.request('POST', '/api/auth/login', { body: { email: 'first@example.test', password: at72 } })).status,
    200,
  );
});
