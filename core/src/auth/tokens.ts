import crypto from 'node:crypto';
import { jwtVerify, SignJWT } from 'jose';

export const TOKEN_TTL_SECONDS = 12 * 3600;
export const SESSION_COOKIE = 'herald_session';

/**
 * What a valid access token says: whose it is, its own id, the user's token version it was issued under, and when it
 * expires.
 */
export interface TokenClaims {
  sub: string;
  jti: string;
  /** `users.token_version` at issue; a token from before versions existed counts as 0. */
  ver: number;
  /** Expiry, seconds since the epoch. */
  exp: number;
}

const ISSUER = 'herald';
const B64URL = /^[A-Za-z0-9_-]*$/;
/** Verified tokens kept at most; past it the expired ones go, then the oldest. */
const CACHE_MAX = 10_000;

/**
 * Signs and verifies HS256 access tokens (RFC 7519 compact JWS) with jose, keyed from SERVICE_SECRET_KEY (HKDF, so
 * the raw key is never the JWT key). Whether a valid token is still honoured (not signed out, not revoked by a
 * password, role or activation change) is the guard's question: it needs the database (auth/revocation.ts), and it
 * asks it on every request, cached token or not.
 *
 * Only what this service issues is accepted: header `alg` HS256 (optionally `typ` JWT), no `crit`, issuer and
 * audience `herald`, an expiry, subject and id, an integer version. Every authenticated request verifies its token,
 * and jose's WebCrypto verify is an asynchronous job (several times node:crypto's synchronous HMAC), so a token once
 * verified is remembered by its signature until it expires: the next request with it compares strings only.
 */
export class TokenService {
  private secret: ArrayBuffer;
  private key: Promise<CryptoKey> | undefined;
  private clock: () => Date;
  /** Signature → the signed part it was verified with and its claims. */
  private verified = new Map<string, { signed: string; claims: TokenClaims }>();
  constructor(secretKey: string, clock: () => Date = () => new Date()) {
    this.secret = crypto.hkdfSync('sha256', secretKey, 'herald', 'jwt-hs256', 32);
    this.clock = clock;
  }

  /** The HMAC key, imported into WebCrypto once (jose would import raw bytes on every call). */
  private cryptoKey(): Promise<CryptoKey> {
    this.key ??= globalThis.crypto.subtle.importKey('raw', this.secret, { name: 'HMAC', hash: 'SHA-256' }, false, [
      'sign',
      'verify',
    ]);
    return this.key;
  }

  private now(): number {
    return Math.floor(this.clock().getTime() / 1000);
  }

  async issue(userId: string, role: string, version: number, ttlSeconds = TOKEN_TTL_SECONDS): Promise<string> {
    const now = this.now();
    // The claims in the order the hand-written signer wrote them: a token is the same shape as before.
    return new SignJWT({ role, ver: version })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(userId)
      .setIssuedAt(now)
      .setExpirationTime(now + ttlSeconds)
      .setIssuer(ISSUER)
      .setAudience(ISSUER)
      .setJti(crypto.randomUUID())
      .sign(await this.cryptoKey());
  }

  /** The claims, or undefined for a bad, expired or foreign token, or one without an expiry, subject or id. */
  async verify(token: string): Promise<TokenClaims | undefined> {
    if (typeof token !== 'string' || token.length > 8192) return undefined;
    const parts = token.split('.');
    if (parts.length !== 3 || !parts.every((part) => B64URL.test(part))) return undefined;
    const [h, p, s] = parts as [string, string, string];
    const now = this.now();
    const cached = this.verified.get(s);
    if (cached && cached.signed === `${h}.${p}`) {
      if (cached.claims.exp > now) return { ...cached.claims };
      this.verified.delete(s);
      return undefined;
    }
    let claims: TokenClaims | undefined;
    try {
      const { payload, protectedHeader } = await jwtVerify(token, await this.cryptoKey(), {
        algorithms: ['HS256'],
        issuer: ISSUER,
        audience: ISSUER,
        currentDate: new Date(now * 1000),
      });
      if ('crit' in protectedHeader || (protectedHeader.typ !== undefined && protectedHeader.typ !== 'JWT'))
        return undefined;
      const { sub, jti, exp, ver = 0 } = payload;
      if (typeof exp !== 'number' || !Number.isFinite(exp)) return undefined;
      if (typeof sub !== 'string' || !sub || typeof jti !== 'string' || !jti || !Number.isSafeInteger(ver))
        return undefined;
      claims = { sub, jti, exp, ver: ver as number };
    } catch {
      return undefined;
    }
    this.remember(s, `${h}.${p}`, claims, now);
    return { ...claims };
  }

  private remember(signature: string, signed: string, claims: TokenClaims, now: number): void {
    if (this.verified.size >= CACHE_MAX) {
      for (const [k, v] of this.verified) if (v.claims.exp <= now) this.verified.delete(k);
      if (this.verified.size >= CACHE_MAX) this.verified.delete(this.verified.keys().next().value!);
    }
    this.verified.set(signature, { signed, claims });
  }
}
