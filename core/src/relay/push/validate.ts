/**
 * What a browser subscription must look like before it is stored: an endpoint a push service
 * could have given (https; plain http only on loopback, and only when the outbound address policy
 * lets the service reach it: the tests' fake push services), and the keys RFC 8291 needs (a P-256
 * public point and a 16-byte auth secret, base64url).
 */
import crypto from 'node:crypto';
import net from 'node:net';
import { HttpError, unprocessable } from '../../http/problem.ts';
import type { OutboundHttp } from '../../plugin-api/index.ts';
import { errorCode, OUTBOUND_REFUSED } from '../../plugin-api/index.ts';

export const MAX_ENDPOINT_LENGTH = 2048;
const B64URL = /^[A-Za-z0-9_-]+={0,2}$/;

const LOOPBACK_NAMES = new Set(['localhost', 'localhost.']);
function isLoopback(host: string): boolean {
  const bare = host.replace(/^\[(.*)\]$/, '$1');
  if (LOOPBACK_NAMES.has(bare.toLowerCase())) return true;
  if (net.isIPv4(bare)) return bare.startsWith('127.');
  return bare === '::1';
}

/** The endpoint as stored (its normalized URL), or a 422 saying what is wrong with it. */
export async function checkEndpoint(raw: string, outbound: OutboundHttp): Promise<string> {
  const malformed = (why: string) =>
    unprocessable(`The push endpoint ${why}.`, [{ path: 'body/endpoint', message: why }], 'push_endpoint_invalid');
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw malformed('is not a URL');
  }
  if (url.username || url.password) throw malformed('must not carry a user name or password');
  if (url.hash) throw malformed('must not have a fragment');
  if (url.href.length > MAX_ENDPOINT_LENGTH) throw malformed(`is longer than ${MAX_ENDPOINT_LENGTH} characters`);
  const loopback = isLoopback(url.hostname);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback)) {
    throw unprocessable(
      'The push endpoint must be an https URL: push services are reached over TLS.',
      [{ path: 'body/endpoint', message: 'must be https' }],
      'push_endpoint_not_https',
    );
  }
  // An address given as such (or loopback) is checked against the outbound policy now; a host name
  // is checked when a message is sent (resolving it here would tie subscribing to DNS).
  if (loopback || net.isIP(url.hostname.replace(/^\[(.*)\]$/, '$1'))) {
    try {
      await outbound.resolveAllowed(url.hostname);
    } catch (err) {
      if (errorCode(err) === OUTBOUND_REFUSED) {
        throw new HttpError(
          422,
          'push_endpoint_refused',
          `The push endpoint's address ${url.hostname} is not allowed by the outbound address policy.`,
          {
            errors: [{ path: 'body/endpoint', message: 'is an address the outbound policy refuses' }],
            params: { host: url.hostname },
          },
        );
      }
      throw malformed(`cannot be resolved (${(err as Error).message})`);
    }
  }
  return url.href;
}

/**
 * Checks the browser's keys: `p256dh` an uncompressed P-256 point (65 bytes), `auth` 16 bytes; both base64url. Returns
 * them without padding.
 */
export function checkKeys(keys: { p256dh: string; auth: string }): { p256dh: string; auth: string } {
  const problems: { path: string; message: string }[] = [];
  const decode = (v: string) => (B64URL.test(v) ? Buffer.from(v.replace(/=+$/, ''), 'base64url') : undefined);
  const point = decode(keys.p256dh);
  let pointOk = Boolean(point && point.length === 65 && point[0] === 4);
  if (pointOk) {
    try {
      crypto.ECDH.convertKey(point!, 'prime256v1', undefined, undefined, 'compressed');
    } catch {
      pointOk = false;
    }
  }
  if (!pointOk)
    problems.push({ path: 'body/keys/p256dh', message: 'must be a 65-byte uncompressed P-256 public key, base64url' });
  const auth = decode(keys.auth);
  if (!auth || auth.length !== 16) problems.push({ path: 'body/keys/auth', message: 'must be 16 bytes, base64url' });
  if (problems.length)
    throw unprocessable(
      `The subscription keys are invalid: ${problems.map((p) => `${p.path.slice(5)} ${p.message}`).join('; ')}.`,
      problems,
      'push_keys_invalid',
    );
  return { p256dh: point!.toString('base64url'), auth: auth!.toString('base64url') };
}
