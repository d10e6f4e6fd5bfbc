import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { Feature } from '../features.ts';

const DIST = path.resolve(fileURLToPath(new URL('../../web/dist', import.meta.url)));

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
    await app.register(fastifyStatic, {
      root: DIST,
      prefix: '/',
      wildcard: false,
      index: ['index.html'],
      maxAge: '1h',
      immutable: false,
    });
    // The web client's pages, not an API operation: left out of the OpenAPI document.
    app.get('/*', { schema: { hide: true } }, async (req, reply) => {
      if (req.url.startsWith('/api/')) return reply.callNotFound();
      return reply.type('text/html').header('cache-control', 'no-cache').sendFile('index.html');
    });
  },
} satisfies Feature;
