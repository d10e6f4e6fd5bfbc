/**
 * Same-origin check for apply-restart: both `Origin` and `Referer` must name the scheme, host and
 * port the request was sent to (its `Host` header, with the scheme from a trusted proxy's
 * `X-Forwarded-Proto` when Fastify's trustProxy accepts the peer). A cross-site form or script
 * cannot restart the service with an administrator's session cookie.
 */
import type { FastifyRequest } from 'fastify';

const originOf = (value: string): string | undefined => {
  try {
    const u = new URL(value);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.origin : undefined;
  } catch { return undefined; }
};

/** Why the request is not same-origin (undefined when it is). */
export function sameOriginProblem(req: FastifyRequest): string | undefined {
  const host = req.headers.host;
  if (!host) return 'The request has no Host header.';
  const expected = originOf(`${req.protocol}://${host}`);
  if (!expected) return 'The request Host header is not a valid host.';
  const origin = req.headers.origin;
  if (typeof origin !== 'string' || !origin || origin === 'null') return 'This request must carry an Origin header of this site.';
  if (originOf(origin) !== expected) return `The Origin ${JSON.stringify(origin.slice(0, 200))} is not this site (${expected}).`;
  const referer = req.headers.referer;
  if (typeof referer !== 'string' || !referer) return 'This request must carry a Referer header of this site.';
  if (originOf(referer) !== expected) return `The Referer is not a page of this site (${expected}).`;
  return undefined;
}
