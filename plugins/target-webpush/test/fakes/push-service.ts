/**
 * A Web Push service on loopback, as a browser's push service (FCM, Mozilla autopush, Apple) sees
 * an application server: it hands out subscriptions the way `pushManager.subscribe()` would (a
 * P-256 key pair and a 16-byte auth secret per browser, the private half kept here), and accepts
 * push messages on each subscription's endpoint (RFC 8030 §5) only when
 *
 * - `Authorization: vapid t=<JWT>, k=<public key>` (RFC 8292) carries an ES256 JWT signed by `k`,
 *   whose `aud` is the endpoint's origin, whose `exp` is in the future and at most 24 hours away,
 *   whose `sub` is a `mailto:` or `https:` URI, and `k` is the key the subscription was made with
 *   (401 without a token, 403 for a bad one, as RFC 8292 §4 says);
 * - `TTL` is present (400 otherwise, RFC 8030 §5.2), `Urgency` is one of the four values, `Topic`
 *   at most 32 base64url characters;
 * - the body is at most 4096 bytes (413 beyond, RFC 8030 §7.2) and decrypts as one `aes128gcm`
 *   record (RFC 8188) with the keys RFC 8291 derives from the subscription's private key and auth
 *   secret (400 when it does not).
 *
 * It records every message it accepted with its plaintext, and can be told to answer 404, 410,
 * 429 or 500 instead (for the next requests or for one subscription).
 */
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeSubscription {
  /** What the browser hands the application server (`PushSubscription.toJSON()`, without expirationTime). */
  endpoint: string;
  keys: { p256dh: string; auth: string };
}

export interface ReceivedPush {
  /** The subscription's token (the endpoint's last path segment). */
  token: string;
  endpoint: string;
  headers: http.IncomingHttpHeaders;
  /** The JWT's claims. */
  claims: { aud: string; exp: number; sub?: string };
  /** The VAPID public key from `k=`. */
  vapidKey: string;
  bodyBytes: number;
  plaintext: string;
}

export interface Refusal {
  status: number;
  headers?: Record<string, string>;
  body?: string;
}

interface Browser {
  token: string;
  ecdh: crypto.ECDH;
  publicKey: Buffer;
  auth: Buffer;
  serverKey?: string;
  gone: boolean;
}

const b64u = (b: Buffer | Uint8Array) => Buffer.from(b).toString('base64url');

/** RFC 8291 §3.4 and RFC 8188 §2: the content encryption key and nonce of one message. */
export function deriveKeys(
  uaPrivate: crypto.ECDH,
  uaPublic: Buffer,
  asPublic: Buffer,
  auth: Buffer,
  salt: Buffer,
): { cek: Buffer; nonce: Buffer } {
  const ecdhSecret = uaPrivate.computeSecret(asPublic);
  const keyInfo = Buffer.concat([Buffer.from('WebPush: info\0', 'latin1'), uaPublic, asPublic]);
  const ikm = Buffer.from(crypto.hkdfSync('sha256', ecdhSecret, auth, keyInfo, 32));
  const cek = Buffer.from(
    crypto.hkdfSync('sha256', ikm, salt, Buffer.from('Content-Encoding: aes128gcm\0', 'latin1'), 16),
  );
  const nonce = Buffer.from(
    crypto.hkdfSync('sha256', ikm, salt, Buffer.from('Content-Encoding: nonce\0', 'latin1'), 12),
  );
  return { cek, nonce };
}

/** Decrypts an `aes128gcm` push message body for a browser; throws saying what is wrong. */
export function decryptPush(body: Buffer, ua: { ecdh: crypto.ECDH; publicKey: Buffer; auth: Buffer }): string {
  if (body.length < 21) throw new Error('body shorter than the aes128gcm header');
  const salt = body.subarray(0, 16);
  const rs = body.readUInt32BE(16);
  const idlen = body[20]!;
  if (idlen !== 65) throw new Error(`keyid is ${idlen} bytes, RFC 8291 wants the 65-byte sender public key`);
  const asPublic = body.subarray(21, 21 + idlen);
  if (asPublic[0] !== 4) throw new Error('keyid is not an uncompressed P-256 point');
  const record = body.subarray(21 + idlen);
  if (rs < 18) throw new Error(`record size ${rs} is below 18`);
  // RFC 8291 §4: one record only.
  if (record.length > rs) throw new Error(`the message has more than one record (${record.length} bytes, rs ${rs})`);
  if (record.length < 17) throw new Error('record shorter than its tag and delimiter');
  const { cek, nonce } = deriveKeys(ua.ecdh, ua.publicKey, Buffer.from(asPublic), ua.auth, Buffer.from(salt));
  const decipher = crypto.createDecipheriv('aes-128-gcm', cek, nonce); // sequence number 0: the nonce as derived
  decipher.setAuthTag(record.subarray(record.length - 16));
  const padded = Buffer.concat([decipher.update(record.subarray(0, record.length - 16)), decipher.final()]);
  let end = padded.length - 1;
  while (end >= 0 && padded[end] === 0) end--;
  if (end < 0 || padded[end] !== 2) throw new Error('the last record does not end with the 0x02 delimiter');
  return padded.subarray(0, end).toString('utf8');
}

/** Checks an ES256 JWT signed by the uncompressed P-256 public key `k` (base64url); returns its claims or throws. */
export function verifyVapidJwt(
  jwt: string,
  k: string,
): { header: Record<string, unknown>; claims: { aud: string; exp: number; sub?: string } } {
  const parts = jwt.split('.');
  if (parts.length !== 3) throw new Error('the token is not a JWS compact serialization');
  const [h, p, s] = parts as [string, string, string];
  const header = JSON.parse(Buffer.from(h, 'base64url').toString('utf8')) as Record<string, unknown>;
  if (header.alg !== 'ES256') throw new Error(`alg is ${String(header.alg)}, not ES256`);
  const point = Buffer.from(k, 'base64url');
  if (point.length !== 65 || point[0] !== 4) throw new Error('k is not a 65-byte uncompressed P-256 point');
  const key = crypto.createPublicKey({
    key: { kty: 'EC', crv: 'P-256', x: b64u(point.subarray(1, 33)), y: b64u(point.subarray(33)) },
    format: 'jwk',
  });
  const ok = crypto.verify(
    'sha256',
    Buffer.from(`${h}.${p}`),
    { key, dsaEncoding: 'ieee-p1363' },
    Buffer.from(s, 'base64url'),
  );
  if (!ok) throw new Error('the signature does not verify with k');
  return { header, claims: JSON.parse(Buffer.from(p, 'base64url').toString('utf8')) };
}

export interface FakePushService {
  url: string;
  origin: string;
  /**
   * A new browser subscription, as `pushManager.subscribe({ applicationServerKey })` would make; the key, when given,
   * is enforced.
   */
  subscribe(applicationServerKey?: string): FakeSubscription;
  /** Messages accepted, in order. */
  received: ReceivedPush[];
  /** Every request, accepted or not, with the status answered. */
  requests: { token: string; status: number; reason?: string }[];
  /** Answers the next `times` requests (default: every request until `reset`) with `refusal`. */
  refuse(refusal: Refusal, times?: number): void;
  /** Answers requests to one subscription (by endpoint) with `refusal`. */
  refuseFor(endpoint: string, refusal: Refusal): void;
  /** The browser unsubscribed: its endpoint answers 410 from now on. */
  unsubscribe(endpoint: string): void;
  reset(): void;
  close(): Promise<void>;
}

export async function startFakePushService(o: { maxBodyBytes?: number } = {}): Promise<FakePushService> {
  const maxBody = o.maxBodyBytes ?? 4096;
  const browsers = new Map<string, Browser>();
  const received: ReceivedPush[] = [];
  const requests: FakePushService['requests'] = [];
  let queued: { refusal: Refusal; times: number } | undefined;
  const perEndpoint = new Map<string, Refusal>();
  let origin = '';

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= maxBody + 1024) chunks.push(c);
    });
    req.on('end', () => {
      const token = (req.url ?? '').replace(/^\/push\//, '').split('?')[0]!;
      const answer = (status: number, reason?: string, headers: Record<string, string> = {}, text = reason ?? '') => {
        requests.push({ token, status, ...(reason ? { reason } : {}) });
        res.writeHead(status, { 'content-type': 'text/plain', ...headers });
        res.end(text);
      };
      const browser = browsers.get(token);
      if (req.method !== 'POST' || !req.url?.startsWith('/push/') || !browser)
        return answer(404, 'no such subscription');
      if (queued) {
        const r = queued.refusal;
        if (--queued.times <= 0) queued = undefined;
        return answer(r.status, `told to answer ${r.status}`, r.headers, r.body ?? '');
      }
      const endpoint = `${origin}/push/${token}`;
      const forThis = perEndpoint.get(endpoint);
      if (forThis)
        return answer(forThis.status, `told to answer ${forThis.status}`, forThis.headers, forThis.body ?? '');
      if (browser.gone) return answer(410, 'the subscription expired');
      // RFC 8292: the vapid scheme.
      const auth = /^vapid\s+t=([^,\s]+)\s*,\s*k=([A-Za-z0-9_-]+)\s*$/i.exec(req.headers.authorization ?? '');
      if (!auth) return answer(401, 'missing vapid authorization', { 'www-authenticate': 'vapid' });
      let claims: ReceivedPush['claims'];
      try {
        const v = verifyVapidJwt(auth[1]!, auth[2]!);
        claims = v.claims;
      } catch (err) {
        return answer(403, `bad VAPID token: ${(err as Error).message}`);
      }
      const now = Math.floor(Date.now() / 1000);
      if (claims.aud !== origin) return answer(403, `aud ${claims.aud} is not ${origin}`);
      if (typeof claims.exp !== 'number' || claims.exp <= now || claims.exp > now + 24 * 3600)
        return answer(403, `exp ${claims.exp} is not within the next 24 hours`);
      if (claims.sub !== undefined && !/^(mailto:|https:)/.test(claims.sub))
        return answer(403, `sub ${claims.sub} is neither mailto: nor https:`);
      if (browser.serverKey && browser.serverKey !== auth[2])
        return answer(403, 'k is not the key this subscription was made with');
      // RFC 8030.
      const ttl = req.headers.ttl;
      if (typeof ttl !== 'string' || !/^\d+$/.test(ttl)) return answer(400, 'missing or malformed TTL');
      const urgency = req.headers.urgency;
      if (urgency !== undefined && !['very-low', 'low', 'normal', 'high'].includes(String(urgency)))
        return answer(400, `bad Urgency ${String(urgency)}`);
      const topic = req.headers.topic;
      if (topic !== undefined && !/^[A-Za-z0-9_-]{1,32}$/.test(String(topic)))
        return answer(400, `bad Topic ${String(topic)}`);
      if (size > maxBody) return answer(413, `payload of ${size} bytes exceeds ${maxBody}`);
      if (req.headers['content-encoding'] !== 'aes128gcm')
        return answer(415, `content-encoding ${String(req.headers['content-encoding'])} is not aes128gcm`);
      let plaintext: string;
      try {
        plaintext = decryptPush(Buffer.concat(chunks), browser);
      } catch (err) {
        return answer(400, `cannot decrypt: ${(err as Error).message}`);
      }
      received.push({ token, endpoint, headers: req.headers, claims, vapidKey: auth[2]!, bodyBytes: size, plaintext });
      answer(201, undefined, { location: `${origin}/message/${crypto.randomUUID()}` }, '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url: origin,
    origin,
    received,
    requests,
    subscribe(applicationServerKey) {
      const token = crypto.randomBytes(24).toString('base64url');
      const ecdh = crypto.createECDH('prime256v1');
      ecdh.generateKeys();
      const b: Browser = {
        token,
        ecdh,
        publicKey: ecdh.getPublicKey(),
        auth: crypto.randomBytes(16),
        serverKey: applicationServerKey,
        gone: false,
      };
      browsers.set(token, b);
      return { endpoint: `${origin}/push/${token}`, keys: { p256dh: b64u(b.publicKey), auth: b64u(b.auth) } };
    },
    refuse(refusal, times = Number.POSITIVE_INFINITY) {
      queued = { refusal, times };
    },
    refuseFor(endpoint, refusal) {
      perEndpoint.set(endpoint, refusal);
    },
    unsubscribe(endpoint) {
      const b = browsers.get(endpoint.split('/').pop()!);
      if (b) b.gone = true;
    },
    reset() {
      queued = undefined;
      perEndpoint.clear();
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
