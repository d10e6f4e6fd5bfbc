import crypto from 'node:crypto';

export const TOKEN_TTL_SECONDS = 12 * 3600;
export const SESSION_COOKIE = 'herald_session';

/** What a valid access token says: whose it is, its own id, the user's token version it was issued under, and when it expires. */
export interface TokenClaims {
  sub: string;
  jti: string;
  /** `users.token_version` at issue; a token from before versions existed counts as 0. */
  ver: number;
  /** Expiry, seconds since the epoch. */
  exp: number;
}

const ISSUER = 'herald';
const HEADER = Buffer.from(JSON.stringify({ alg: 'HS256', typ: 'JWT' })).toString('base64url');
const B64URL = /^[A-Za-z0-9_-]*$/;

function json(part: string): Record<string, unknown> | undefined {
  if (!B64URL.test(part)) return undefined;
  try {
    const v: unknown = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Signs and verifies HS256 access tokens (RFC 7519 compact JWS) keyed from SERVICE_SECRET_KEY (HKDF,
 * so the raw key is never the JWT key). Whether a valid token is still honoured (not signed out, not
 * revoked by a password, role or activation change) is the guard's question: it needs the database
 * (auth/revocation.ts).
 *
 * Both run synchronously on node:crypto's HMAC (about 6 µs of CPU per verify): every authenticated
 * request pays for a verify, and WebCrypto's asynchronous job (through jose) cost eight times that
 * plus a hop through the thread pool. Only what this service issues is accepted: header exactly
 * `alg` HS256 (optionally `typ` JWT), no `crit`, issuer and audience `herald`, an expiry, subject and id.
 */
export class TokenService {
  private key: crypto.KeyObject;
  private clock: () => Date;
  constructor(secretKey: string, clock: () => Date = () => new Date()) {
    this.key = crypto.createSecretKey(Buffer.from(crypto.hkdfSync('sha256', secretKey, 'herald', 'jwt-hs256', 32)));
    this.clock = clock;
  }

  private mac(input: string): Buffer {
    return crypto.createHmac('sha256', this.key).update(input).digest();
  }

  async issue(userId: string, role: string, version: number, ttlSeconds = TOKEN_TTL_SECONDS): Promise<string> {
    const now = Math.floor(this.clock().getTime() / 1000);
    const claims = {
      role,
      ver: version,
      sub: userId,
      iat: now,
      exp: now + ttlSeconds,
      iss: ISSUER,
      aud: ISSUER,
      jti: crypto.randomUUID(),
    };
    const input = `${HEADER}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;
    return `${input}.${this.mac(input).toString('base64url')}`;
  }

  /** The claims, or undefined for a bad, expired or foreign token, or one without an expiry, subject or id. */
  async verify(token: string): Promise<TokenClaims | undefined> {
    if (typeof token !== 'string' || token.length > 8192) return undefined;
    const parts = token.split('.');
    if (parts.length !== 3) return undefined;
    const [h, p, s] = parts as [string, string, string];
    const header = json(h);
    if (!header || header.alg !== 'HS256' || 'crit' in header || (header.typ !== undefined && header.typ !== 'JWT'))
      return undefined;
    if (!B64URL.test(s)) return undefined;
    const given = Buffer.from(s, 'base64url');
    const expected = this.mac(`${h}.${p}`);
    if (given.length !== expected.length || !crypto.timingSafeEqual(given, expected)) return undefined;
    const c = json(p);
    if (!c) return undefined;
    const now = Math.floor(this.clock().getTime() / 1000);
    const { sub, jti, exp, nbf, iat, iss, aud, ver = 0 } = c;
    if (iss !== ISSUER) return undefined;
    if (!(aud === ISSUER || (Array.isArray(aud) && aud.includes(ISSUER)))) return undefined;
    if (typeof exp !== 'number' || !Number.isFinite(exp) || exp <= now) return undefined;
    if (nbf !== undefined && (typeof nbf !== 'number' || nbf > now)) return undefined;
    if (iat !== undefined && typeof iat !== 'number') return undefined;
    if (typeof sub !== 'string' || !sub || typeof jti !== 'string' || !jti || !Number.isSafeInteger(ver))
      return undefined;
    return { sub, jti, exp, ver: ver as number };
  }
}
