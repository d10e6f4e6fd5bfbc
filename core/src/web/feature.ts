import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Feature } from '../features.ts';
import { acceptsGzip, matches, type StaticFile, StaticFiles } from './static.ts';

const DIST = path.resolve(fileURLToPath(new URL('../../web/dist', import.meta.url)));

/** Answers with a file of the build: 304 when the browser holds it, gzipped when it takes that. */
async function send(req: FastifyRequest, reply: FastifyReply, file: StaticFile): Promise<FastifyReply> {
  reply.header('cache-control', file.cacheControl).header('etag', file.etag).header('vary', 'accept-encoding');
  if (matches(req.headers['if-none-match'], file.etag)) return reply.code(304).send();
  reply.type(file.type);
  if (file.gzipped && acceptsGzip(req.headers['accept-encoding']))
    return reply.header('content-encoding', 'gzip').send(file.gzipped);
  return reply.send(file.body);
}

/** Serves the built web client at `/`, with the single-page fallback for client-side routes. */
export default {
  name: 'web',
  async register(app) {
    if (!fs.existsSync(path.join(DIST, 'index.html'))) {
      // A page for people, not an API operation: left out of the OpenAPI document.
      app.get('/', { schema: { hide: true } }, async (_req, reply) =>
        reply.type('text/plain').send('Herald is running. The web client is not built: run `npm run build:web`.'),
      );
      return;
    }
    const files = new StaticFiles(DIST);
    const page = (req: FastifyRequest, reply: FastifyReply) =>
      files.get('index.html')!.then((f) => send(req, reply, f));
    // The web client's files and pages, not API operations: left out of the OpenAPI document.
    app.get('/', { schema: { hide: true } }, page);
    app.get('/*', { schema: { hide: true } }, async (req, reply) => {
      const name = req.url.split('?')[0]!.slice(1);
      if (name.startsWith('api/')) return reply.callNotFound();
      const file = files.get(name);
      if (file) return send(req, reply, await file);
      // A missing script or stylesheet is a 404, never the page (which a browser would fail to run as code).
      if (name.startsWith('assets/')) return reply.callNotFound();
      return page(req, reply);
    });
  },
} satisfies Feature;
