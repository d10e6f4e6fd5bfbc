/**
 * Same-origin check for apply-restart: both `Origin` and `Referer` must name one of this service's
 * own origins, which come from its configuration and never from the request: `SERVICE_PUBLIC_URL`,
 * the origins of `SERVICE_CORS_ALLOWED_ORIGINS`, and the address it listens on (for an unspecified
 * host such as `0.0.0.0`: the machine's own addresses, `localhost` and its host name), with the
 * scheme the request came with (`https` only from a trusted proxy's `X-Forwarded-Proto`). A
 * cross-site form or script cannot restart the service with an administrator's session cookie, and a
 * forged `Host` header does not make another site "same origin".
 */
import os from 'node:os';
import type { FastifyRequest } from 'fastify';

const originOf = (value: string): string | undefined => {
  try {
    const u = new URL(value);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.origin : undefined;
  } catch {
    return undefined;
  }
};

/** What the check needs from the configuration and the listening server. */
export interface OwnOrigins {
  publicUrl?: string;
  corsOrigins: string[];
  /** The configured listen host. */
  host: string;
  /** The port the server is listening on (the configured one, or the one bound for port 0). */
  port: () => number | undefined;
}

const UNSPECIFIED = new Set(['0.0.0.0', '::', '[::]', '']);

/** The host names (IPv6 in brackets) the listen address is reachable by. */
function listenHosts(host: string): string[] {
  if (!UNSPECIFIED.has(host)) return [host.includes(':') && !host.startsWith('[') ? `[${host}]` : host];
  const out = new Set(['localhost', '127.0.0.1', '[::1]', os.hostname()]);
  for (const list of Object.values(os.networkInterfaces())) {
    for (const a of list ?? [])
      if (!a.address.startsWith('fe80:')) out.add(a.family === 'IPv6' ? `[${a.address}]` : a.address);
  }
  return [...out];
}

/** The origins the request may come from; the listen address's with the scheme the request has. */
export function ownOrigins(o: OwnOrigins, scheme: string): Set<string> {
  const out = new Set<string>();
  const pub = o.publicUrl ? originOf(o.publicUrl) : undefined;
  if (pub) out.add(pub);
  for (const c of o.corsOrigins) {
    const x = originOf(c);
    if (x) out.add(x);
  }
  const port = o.port();
  if (port)
    for (const h of listenHosts(o.host)) {
      const x = originOf(`${scheme}://${h}:${port}`);
      if (x) out.add(x);
    }
  return out;
}

/** Why the request is not same-origin (undefined when it is). */
export function sameOriginProblem(req: FastifyRequest, own: OwnOrigins): string | undefined {
  const allowed = ownOrigins(own, req.protocol);
  const named = own.publicUrl ? ` (${originOf(own.publicUrl)})` : '';
  const origin = req.headers.origin;
  if (typeof origin !== 'string' || !origin || origin === 'null')
    return 'This request must carry an Origin header of this site.';
  if (!allowed.has(originOf(origin) ?? ''))
    return `The Origin ${JSON.stringify(origin.slice(0, 200))} is not this site${named}.`;
  const referer = req.headers.referer;
  if (typeof referer !== 'string' || !referer) return 'This request must carry a Referer header of this site.';
  if (!allowed.has(originOf(referer) ?? '')) return `The Referer is not a page of this site${named}.`;
  return undefined;
}
