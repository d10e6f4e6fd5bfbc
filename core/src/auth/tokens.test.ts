/**
 * The access tokens against an independent JWT implementation (jose): each accepts the other's
 * tokens, and everything this service does not issue is refused — another algorithm, a tampered
 * part, a foreign key, issuer or audience, an expired or not-yet-valid token, a missing claim.
 */
import crypto from 'node:crypto';
import { jwtVerify, SignJWT, UnsecuredJWT } from 'jose';
import t from 'tap';
import { TokenService } from './tokens.ts';

const SECRET = 'a'.repeat(64);
const key = new Uint8Array(crypto.hkdfSync('sha256', SECRET, 'herald', 'jwt-hs256', 32));
let now = new Date('2026-06-01T12:00:00Z');
const tokens = new TokenService(SECRET, () => now);
const at = Math.floor(now.getTime() / 1000);
const jose = (claims: Record<string, unknown> = {}, header: Record<string, unknown> = { alg: 'HS256' }) =>
  new SignJWT({ role: 'user', ver: 2, ...claims })
    .setProtectedHeader(header as { alg: string })
    .setSubject('u1')
    .setJti('j1')
    .setIssuer('herald')
    .setAudience('herald')
    .setIssuedAt(at)
    .setExpirationTime(at + 60);

/** A correctly signed token of any header and claims (what jose will not produce). */
const raw = (header: object, claims: object) => {
  const part = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const input = `${part(header)}.${part(claims)}`;
  return `${input}.${crypto.createHmac('sha256', key).update(input).digest('base64url')}`;
};
const complete = { sub: 'u1', jti: 'j1', iss: 'herald', aud: 'herald', exp: at + 60 };

t.test('tokens it issues verify with jose, and jose-signed ones verify here', async (t) => {
  const mine = await tokens.issue('user-1', 'admin', 3, 600);
  const { payload, protectedHeader } = await jwtVerify(mine, key, {
    issuer: 'herald',
    audience: 'herald',
    currentDate: now,
  });
  t.same(protectedHeader, { alg: 'HS256', typ: 'JWT' });
  t.match(payload, { sub: 'user-1', role: 'admin', ver: 3, iat: at, exp: at + 600, iss: 'herald', aud: 'herald' });
  t.match(payload.jti, /^[0-9a-f-]{36}$/);
  t.same(await tokens.verify(mine), { sub: 'user-1', jti: payload.jti, exp: at + 600, ver: 3 });
  t.same(await tokens.verify(await jose().sign(key)), { sub: 'u1', jti: 'j1', exp: at + 60, ver: 2 });
  t.same(
    await tokens.verify(await jose({ ver: undefined }).sign(key)),
    { sub: 'u1', jti: 'j1', exp: at + 60, ver: 0 },
    'no version counts as 0',
  );
  t.ok(
    await tokens.verify(await jose({}, { alg: 'HS256', typ: 'JWT' }).setAudience(['other', 'herald']).sign(key)),
    'an audience list naming herald',
  );
});

t.test('anything else is refused', async (t) => {
  const good = await jose().sign(key);
  const [h, p, s] = good.split('.') as [string, string, string];
  const flip = (part: string) => part.slice(0, -2) + (part.at(-2) === 'A' ? 'B' : 'A') + part.at(-1);
  const payload = JSON.parse(Buffer.from(p, 'base64url').toString());
  const forge = (claims: object) =>
    `${h}.${Buffer.from(JSON.stringify({ ...payload, ...claims })).toString('base64url')}.${s}`;
  const cases: [string, string][] = [
    [
      'an unsecured token (alg none)',
      new UnsecuredJWT({ sub: 'u1', jti: 'j1' })
        .setIssuer('herald')
        .setAudience('herald')
        .setExpirationTime(at + 60)
        .encode(),
    ],
    ['HS512', await jose({}, { alg: 'HS512' }).sign(new Uint8Array(64))],
    ['a critical header', raw({ alg: 'HS256', crit: ['x'], x: 1 }, complete)],
    ['another type', raw({ alg: 'HS256', typ: 'at+jwt' }, complete)],
    ['another key', await jose().sign(crypto.randomBytes(32))],
    ['a tampered signature', `${h}.${p}.${flip(s)}`],
    ['a tampered payload (admin role)', forge({ role: 'admin' })],
    ['a truncated signature', `${h}.${p}.${s.slice(0, 20)}`],
    ['another issuer', await jose().setIssuer('someone').sign(key)],
    ['another audience', await jose().setAudience('someone').sign(key)],
    ['expired', await jose().setExpirationTime(at).sign(key)],
    [
      'not yet valid',
      await jose()
        .setNotBefore(at + 30)
        .sign(key),
    ],
    [
      'no expiry',
      await new SignJWT({})
        .setProtectedHeader({ alg: 'HS256' })
        .setSubject('u1')
        .setJti('j1')
        .setIssuer('herald')
        .setAudience('herald')
        .sign(key),
    ],
    [
      'no id',
      await new SignJWT({})
        .setProtectedHeader({ alg: 'HS256' })
        .setSubject('u1')
        .setIssuer('herald')
        .setAudience('herald')
        .setExpirationTime(at + 60)
        .sign(key),
    ],
    [
      'no subject',
      await new SignJWT({})
        .setProtectedHeader({ alg: 'HS256' })
        .setJti('j1')
        .setIssuer('herald')
        .setAudience('herald')
        .setExpirationTime(at + 60)
        .sign(key),
    ],
    ['a string expiry', raw({ alg: 'HS256' }, { ...complete, exp: String(at + 60) })],
    ['a string not-before', raw({ alg: 'HS256' }, { ...complete, nbf: String(at) })],
    ['a fractional version', await jose({ ver: 1.5 }).sign(key)],
    ['two parts', `${h}.${p}`],
    ['four parts', `${good}.x`],
    ['not base64url', `${h}.${p}.${s}+/`],
    ['a JSON array payload', `${h}.${Buffer.from('[1]').toString('base64url')}.${s}`],
    ['empty', ''],
  ];
  t.ok(
    await tokens.verify(raw({ alg: 'HS256' }, complete)),
    'the raw signer makes valid tokens (so the refusals above are for what they change)',
  );
  for (const [what, token] of cases) t.equal(await tokens.verify(token), undefined, what);
  t.ok(await tokens.verify(good), 'the untouched token still verifies');
  now = new Date(now.getTime() + 61_000);
  t.equal(await tokens.verify(good), undefined, 'refused once the clock passes its expiry');
});

t.test('a verified token is remembered by its signature, for its signed part only and until it expires', async (t) => {
  const clockAt = new Date('2026-06-01T12:00:00Z');
  let clock = clockAt;
  const service = new TokenService(SECRET, () => clock);
  const token = await service.issue('u1', 'user', 1, 60);
  const [h, p, s] = token.split('.') as [string, string, string];
  const claims = await service.verify(token);
  t.ok(claims, 'verified once');
  t.same(await service.verify(token), claims, 'and again, the same claims');
  const payload = JSON.parse(Buffer.from(p, 'base64url').toString());
  const forged = `${h}.${Buffer.from(JSON.stringify({ ...payload, sub: 'admin' })).toString('base64url')}.${s}`;
  t.equal(await service.verify(forged), undefined, 'the remembered signature does not vouch for another payload');
  t.same(await service.verify(token), claims, 'nor does the forgery evict the real one');
  clock = new Date(clockAt.getTime() + 60_000);
  t.equal(await service.verify(token), undefined, 'refused from the moment it expires');
});
