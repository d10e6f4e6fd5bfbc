import crypto from 'node:crypto';
import { SignJWT, jwtVerify } from 'jose';

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

/**
 * Signs and verifies HS256 access tokens keyed from SERVICE_SECRET_KEY (HKDF, so the raw key is never
 * the JWT key). Whether a valid token is still honoured (not signed out, not revoked by a password,
 * role or activation change) is the guard's question: it needs the database (auth/revocation.ts).
 */
export class TokenService {
  /**
   * The HMAC key, imported once: handed raw bytes, jose imports them into a CryptoKey on every
   * verify (about half the CPU of a verify, paid by every authenticated request).
   */
  private key: Promise<CryptoKey>;
  private clock: () => Date;
  constructor(secretKey: string, clock: () => Date = () => new Date()) {
    const raw = new Uint8Array(crypto.hkdfSync('sha256', secretKey, 'herald', 'jwt-hs256', 32));
    this.key = globalThis.crypto.subtle.importKey('raw', raw, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign', 'verify']);
    this.clock = clock;
  }

  async issue(userId: string, role: string, version: number, ttlSeconds = TOKEN_TTL_SECONDS): Promise<string> {
    const now = Math.floor(this.clock().getTime() / 1000);
    return new SignJWT({ role, ver: version }).setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(userId).setIssuedAt(now).setExpirationTime(now + ttlSeconds).setIssuer('herald').setAudience('herald')
      .setJti(crypto.randomUUID()).sign(await this.key);
  }

  /** The claims, or undefined for a bad, expired or foreign token, or one without an expiry, subject or id. */
  async verify(token: string): Promise<TokenClaims | undefined> {
    try {
      const { payload } = await jwtVerify(token, await this.key, {
        algorithms: ['HS256'], issuer: 'herald', audience: 'herald', currentDate: this.clock(), requiredClaims: ['exp', 'sub', 'jti'],
      });
      const { sub, jti, exp, ver = 0 } = payload;
      if (typeof sub !== 'string' || typeof jti !== 'string' || typeof exp !== 'number' || !Number.isSafeInteger(ver)) return undefined;
      return { sub, jti, exp, ver: ver as number };
    } catch { return undefined; }
  }
}
