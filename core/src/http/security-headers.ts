import type { IncomingMessage, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import type { App } from './server.ts';

/** helmet, as @fastify/helmet itself resolves it. */
type Helmet = (
  opts: Record<string, unknown>,
) => (req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void) => void;
const helmetModule = createRequire(createRequire(import.meta.url).resolve('@fastify/helmet'))('helmet') as Helmet & {
  default?: Helmet;
};
const helmet: Helmet = helmetModule.default ?? helmetModule;

/**
 * helmet's security headers for one configuration, worked out once. The headers do not depend on
 * the request (no CSP nonces here), yet @fastify/helmet rebuilds helmet's middleware, parsing the
 * whole policy, on every request: a few percent of the relay's CPU under load.
 */
export function securityHeaders(options: Record<string, unknown>): { set: [string, string][]; remove: string[] } {
  const set = new Map<string, string>();
  const remove: string[] = [];
  const res = {
    setHeader(name: string, value: string | number | string[]) {
      set.set(name.toLowerCase(), Array.isArray(value) ? value.join(', ') : String(value));
    },
    removeHeader(name: string) {
      set.delete(name.toLowerCase());
      remove.push(name.toLowerCase());
    },
    getHeader(name: string) {
      return set.get(name.toLowerCase());
    },
  } as unknown as ServerResponse;
  let failed: unknown;
  helmet(options)({ headers: {} } as IncomingMessage, res, (err) => {
    failed = err;
  });
  if (failed) throw failed;
  return { set: [...set], remove };
}

/** Applies the headers of `options` to every response, as @fastify/helmet would, computed once. */
export function registerSecurityHeaders(app: App, options: Record<string, unknown>): void {
  const { set, remove } = securityHeaders(options);
  app.addHook('onRequest', (_req, reply, done) => {
    const raw = reply.raw;
    for (const [k, v] of set) raw.setHeader(k, v);
    for (const k of remove) raw.removeHeader(k);
    done();
  });
}
