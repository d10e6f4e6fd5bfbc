import type { Core } from '../core.ts';
import { file, ok } from '../http/schemas.ts';
import type { App } from '../http/server.ts';
import { Health, Ready } from './definition.ts';

const DB_CHECK_TIMEOUT_MS = 2000;

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
    p.then(
      (v) => {
        clearTimeout(t);
        resolve(v);
      },
      (e) => {
        clearTimeout(t);
        reject(e);
      },
    );
  });
}

/** Liveness, readiness and metrics. None needs authentication; none reveals secrets. */
export default async function healthRoutes(app: App, core: Core): Promise<void> {
  app.get(
    '/api/health',
    {
      schema: {
        tags: ['health'],
        security: [],
        response: { ...ok('The service is up: `status` and `version`.', Health) },
      },
    },
    async (): Promise<Health> => ({ status: 'ok', version: core.version }),
  );

  app.get(
    '/api/ready',
    {
      schema: {
        tags: ['health'],
        security: [],
        response: {
          ...ok('Ready: `checks` (db, scheduler, start, plugins) all pass.', Ready),
          503: {
            ...Ready,
            description:
              'Not ready: the same body, with `ready: false` and the failed checks in `errors` (not problem details).',
          },
        },
      },
    },
    async (_req, reply): Promise<Ready> => {
      const errors: string[] = [];
      let db = 'ok';
      try {
        await withTimeout(core.db.get('SELECT 1 AS ok'), DB_CHECK_TIMEOUT_MS);
      } catch (err) {
        db = 'fail';
        errors.push(`db: ${(err as Error).message}`);
      }
      const sched = core.jobs.status();
      if (sched.state !== 'ok') errors.push(`scheduler: ${sched.detail ?? 'not running'}`);
      // Until listen() has started every feature (the relay's dispatch, the assistant), or once a stop has begun, the
      // port may answer but the service does not do its work: not ready.
      const lifecycle = core.lifecycle;
      if (lifecycle === 'starting') errors.push('start: the service is still starting its jobs and features');
      if (lifecycle === 'stopping') errors.push('start: the service is stopping');
      const checks: Record<string, string> = {
        db,
        scheduler: sched.state === 'ok' ? 'ok' : 'fail',
        start: lifecycle === 'running' ? 'ok' : 'fail',
        ...(await core.plugins.readinessChecks()),
      };
      if (!('ha' in checks)) checks.ha = 'na';
      const ready = db === 'ok' && checks.scheduler === 'ok' && checks.start === 'ok';
      reply.code(ready ? 200 : 503);
      return {
        ready,
        checks,
        errors,
        version: core.version,
        replica: { id: core.replicaId, scheduler_leader: sched.leader },
      };
    },
  );

  if (core.config.metricsEnabled) {
    app.get(
      '/api/metrics',
      {
        schema: {
          tags: ['health'],
          security: [],
          response: { ...file('Prometheus metrics in the text exposition format.', 'text/plain') },
        },
      },
      async (_req, reply) => {
        const body = await core.metrics.registry.metrics();
        reply.type(core.metrics.registry.contentType);
        return body;
      },
    );
  }
}
