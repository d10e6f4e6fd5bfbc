import crypto from 'node:crypto';
import { SignJWT, jwtVerify } from 'jose';

export const TOKEN_TTL_SECONDS = 12 * 3600;
export const SESSION_COOKIE = 'herald_session';

/** Signs and verifies HS256 access tokens keyed from SERVICE_SECRET_KEY (HKDF, so the raw key is never the JWT key). */
export class TokenService {
  private key: Uint8Array;
  private clock: () => Date;
  constructor(secretKey: string, clock: () => Date = () => new Date()) {
    this.key = new Uint8Array(crypto.hkdfSync('sha256', secretKey, 'herald', 'jwt-hs256', 32));
    this.clock = clock;
  }

  async issue(userId: string, role: string, ttlSeconds = TOKEN_TTL_SECONDS): Promise<string> {
    const now = Math.floor(this.clock().getTime() / 1000);
    return new SignJWT({ role }).setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(userId).setIssuedAt(now).setExpirationTime(now + ttlSeconds).setIssuer('herald').setAudience('herald')
      .setJti(crypto.randomUUID()).sign(this.key);
  }

  /** The user id, or undefined for a bad, expired or foreign token. */
  async verify(token: string): Promise<string | undefined> {
    try {
      const { payload } = await jwtVerify(token, this.key, { algorithms: ['HS256'], issuer: 'herald', audience: 'herald', currentDate: this.clock() });
      return typeof payload.sub === 'string' ? payload.sub : undefined;
    } catch { return undefined; }
  }
}
