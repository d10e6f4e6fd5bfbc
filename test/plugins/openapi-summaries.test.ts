/**
 * The routes a plugin author (and the operator wiring a plugin up) touches read well in the
 * OpenAPI document: every operation under these prefixes has a summary.
 */
import t from 'tap';
import { startService, TEST_PLUGINS } from '../helpers/service.ts';

const PREFIXES = [
  '/api/trackers',
  '/api/events',
  '/api/deferred',
  '/api/providers',
  '/api/targets',
  '/api/plugins',
  '/api/hooks',
];
const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

t.test(
  'every route under trackers, tracker links, events, providers, targets and plugins has an OpenAPI summary',
  async (t) => {
    const s = await startService({ SERVICE_PLUGINS: TEST_PLUGINS });
    t.teardown(() => s.stop());
    const docs = await s.request('GET', '/api/docs/json');
    t.equal(docs.status, 200);
    const seen: string[] = [];
    const missing: string[] = [];
    for (const [path, ops] of Object.entries<Record<string, { summary?: string }>>(docs.body.paths)) {
      if (!PREFIXES.some((p) => path === p || path.startsWith(`${p}/`))) continue;
      for (const m of METHODS) {
        const op = ops[m];
        if (!op) continue;
        seen.push(`${m.toUpperCase()} ${path}`);
        if (typeof op.summary !== 'string' || op.summary.trim() === '') missing.push(`${m.toUpperCase()} ${path}`);
      }
    }
    for (const route of [
      'GET /api/trackers',
      'POST /api/trackers',
      'PATCH /api/trackers/{id}',
      'PUT /api/trackers/{id}/targets/{target_id}',
      'DELETE /api/trackers/{id}/targets/{target_id}',
      'GET /api/events',
      'GET /api/events/{id}',
      'GET /api/deferred',
      'POST /api/hooks/{token}',
    ]) {
      t.ok(seen.includes(route), `documented: ${route}`);
    }
    t.same(missing, [], 'no operation lacks a summary');
  },
);
