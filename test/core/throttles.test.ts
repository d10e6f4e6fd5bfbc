/**
 * Throttles that protect users rather than lock them out: the login throttle keys on the account
 * and the address together, so an attacker's failures do not keep the real user out; registration
 * is limited per address and answers the same whether or not an email is taken. Addresses are set
 * with X-Forwarded-For, which the service honours from loopback (SERVICE_FORWARDED_ALLOW_IPS).
 */

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { startService, type TestService } from '../helpers/service.ts';

const from = (ip: string) => ({ 'x-forwarded-for': ip });
const login = (s: TestService, ip: string, email: string, password: string) =>
  s.request('POST', '/api/auth/login', { body: { email, password }, headers: from(ip) });

t.test('an attacker failing from one address is locked out; the real user from another gets in', async (t) => {
  const s = await startService();
  t.teardown(() => s.stop());
  const attacker = '198.51.100.7';
  const user = '203.0.113.20';
  for (let i = 0; i < 5; i++)
    t.equal((await login(s, attacker, s.admin.email, `guess number ${i}`)).status, 401, `guess ${i + 1} is checked`);
  const locked = await login(s, attacker, s.admin.email, 'correct horse battery');
  t.equal(locked.status, 429, "the attacker's address is locked, even with the right password");
  t.equal(locked.body.code, 'login_throttled');
  t.equal(locked.headers.get('retry-after'), '30', 'for a short first lock');

  const real = await login(s, user, s.admin.email, 'correct horse battery');
  t.equal(real.status, 200, 'the real user on another address logs in');
  t.ok(real.body.access_token);
  t.equal((await login(s, attacker, s.admin.email, 'guess number 6')).status, 429, 'the attacker stays locked');

  s.clock.advance(31_000);
  t.equal((await login(s, attacker, s.admin.email, 'guess number 7')).status, 401, 'after the lock, one more guess');
  const doubled = await login(s, attacker, s.admin.email, 'guess number 8');
  t.equal(doubled.status, 429);
  t.equal(doubled.headers.get('retry-after'), '60', 'and the lock doubles');
  t.equal(
    (await login(s, user, s.admin.email, 'correct horse battery')).status,
    200,
    'the real user is never in the way',
  );
});

t.test('registration answers the same whether or not the email is taken, and is limited per address', async (t) => {
  const s = await startService();
  t.teardown(() => s.stop());
  const register = (ip: string, email: string, password = 'a good password') =>
    s.request('POST', '/api/v1/auth/register', { body: { email, password }, headers: from(ip) });
  t.equal((await register('192.0.2.1', 'new@example.test')).status, 403, 'refused while self-registration is off');
  await s.request('PATCH', '/api/v1/admin/settings', {
    token: s.admin.token,
    body: { self_registration_enabled: true },
  });

  const fresh = await register('192.0.2.1', 'New@Example.test');
  const taken = await register('192.0.2.1', 'new@example.test', 'the attacker password');
  const admin = await register('192.0.2.1', s.admin.email, 'the attacker password');
  t.equal(fresh.status, 201);
  t.same([taken.status, admin.status], [201, 201], 'a taken email is answered with the same status');
  t.same(fresh.body, { email: 'new@example.test', detail: fresh.body.detail }, 'no token, nothing about the account');
  t.same(taken.body, fresh.body, 'and the same body');
  t.same(admin.body, { ...fresh.body, email: s.admin.email });
  t.equal(fresh.headers.get('set-cookie'), null, 'no session either way');
  t.equal(taken.headers.get('set-cookie'), null);

  t.equal(
    (await login(s, '192.0.2.50', 'new@example.test', 'a good password')).status,
    200,
    'the new account logs in with its password',
  );
  t.equal(
    (await login(s, '192.0.2.50', 'new@example.test', 'the attacker password')).status,
    401,
    'registering a taken email changes nothing',
  );
  t.equal(
    (await login(s, '192.0.2.50', s.admin.email, 'correct horse battery')).status,
    200,
    'the administrator is untouched',
  );
  const n = await s.service.core.db.get<{ n: unknown }>('SELECT COUNT(*) AS n FROM users');
  t.equal(Number(n!.n), 2, 'one account was made');

  const tooLong = await register('192.0.2.1', 'other@example.test', 'é'.repeat(40));
  t.equal(tooLong.status, 422, 'a bad password is still said to be one');

  // 4 attempts so far from 192.0.2.1; the limit is 10 an hour, whatever each one asked for.
  for (let i = 0; i < 6; i++) t.equal((await register('192.0.2.1', `bulk${i}@example.test`)).status, 201);
  const limited = await register('192.0.2.1', 'one-more@example.test');
  t.equal(limited.status, 429, 'the 11th registration in an hour from one address is refused');
  t.equal(limited.body.code, 'registration_throttled');
  t.ok(Number(limited.headers.get('retry-after')) > 3000, 'until the hour is over');
  t.equal((await register('192.0.2.2', 'one-more@example.test')).status, 201, 'another address may register');
  s.clock.advance(3600_000);
  t.equal((await register('192.0.2.1', 'next-hour@example.test')).status, 201, 'and the first one again an hour later');
});

t.test('an address the user logged in from still gets through an account lock after a restart', async (t) => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-known-'));
  const first = await startService({}, { dataDir });
  const home = '203.0.113.50';
  t.equal(
    (await login(first, home, first.admin.email, 'correct horse battery')).status,
    200,
    'the real user logs in from home',
  );
  await first.stop();

  const s = await startService({}, { dataDir, setup: false });
  t.teardown(async () => {
    await s.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });
  // Ten addresses fail once each: the account is locked for every address it never logged in from.
  for (let i = 0; i < 10; i++)
    t.equal((await login(s, `198.51.100.${i + 1}`, first.admin.email, `wrong ${i}`)).status, 401);
  const stranger = await login(s, '198.51.100.200', first.admin.email, 'correct horse battery');
  t.equal(stranger.status, 429, 'a new address waits out the account lock');
  const back = await login(s, home, first.admin.email, 'correct horse battery');
  t.equal(back.status, 200, 'home, known from before the restart, gets in');

  // Known for 30 days from the last success, not longer.
  s.clock.advance(31 * 86_400_000);
  for (let i = 0; i < 10; i++) await login(s, `198.51.100.${i + 20}`, first.admin.email, `wrong again ${i}`);
  t.equal(
    (await login(s, home, first.admin.email, 'correct horse battery')).status,
    429,
    'an address unused for 31 days is not known any more',
  );
});
