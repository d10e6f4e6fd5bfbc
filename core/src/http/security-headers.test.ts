import http from 'node:http';
import { createRequire } from 'node:module';
import t from 'tap';
import { securityHeaders } from './security-headers.ts';

const OPTIONS = {
  contentSecurityPolicy: { directives: { defaultSrc: ["'self'"], frameAncestors: ["'none'"], objectSrc: ["'none'"] } },
  crossOriginEmbedderPolicy: false,
};

t.test('the headers worked out once are exactly what helmet sets on a real response', async (t) => {
  const req = createRequire(createRequire(import.meta.url).resolve('@fastify/helmet'));
  const mod = req('helmet') as { default?: unknown };
  const helmet = (mod.default ?? mod) as (
    o: unknown,
  ) => (q: http.IncomingMessage, r: http.ServerResponse, n: () => void) => void;
  const server = http.createServer((q, r) => {
    r.setHeader('x-powered-by', 'something');
    helmet(OPTIONS)(q, r, () => r.end('ok'));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => server.close());
  const res = await fetch(`http://127.0.0.1:${(server.address() as { port: number }).port}/`);
  const real = Object.fromEntries(
    [...res.headers].filter(
      ([k]) => !['date', 'connection', 'keep-alive', 'content-length', 'transfer-encoding'].includes(k),
    ),
  );
  const { set, remove } = securityHeaders(OPTIONS);
  t.same(Object.fromEntries(set), real, 'same names and values');
  t.ok(remove.includes('x-powered-by'), 'x-powered-by is removed');
  t.match(real['content-security-policy'], /frame-ancestors 'none'/);
  t.equal(real['x-content-type-options'], 'nosniff');
});
