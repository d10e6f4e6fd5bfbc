/**
 * An operator's prune of the event log, run by the service: `POST /api/admin/events/prune` `{ before }` starts the
 * daily retention's paced cleanup (`applyRetention`) with that cutoff in this process and answers 202 with the prune;
 * `GET /api/admin/events/prune/{id}` shows it until it ends (`deleted` grows batch by batch). `herald events prune`
 * asks a running service this way instead of writing beside it: two processes writing one SQLite file contend for its
 * one write lock, and the service's writes then sleep in SQLite's busy handler (a paced relay's p99 at 2.5–4.6× while
 * half the log was pruned beside it; scripts/bench/RESULTS.md, issue 27 item 7). One prune runs at a time on a
 * replica; the prune ends between two batches when the service stops (what was deleted stays deleted).
 */
import Type from 'typebox';
import { caller, requireAdmin } from '../../auth/guard.ts';
import type { Core } from '../../core.ts';
import { conflict, notFound, unprocessable } from '../../http/problem.ts';
import { accepted, errors, IdParams, IsoTime, ok } from '../../http/schemas.ts';
import type { App } from '../../http/server.ts';
import { pruneJob, startPrune } from '../retention.ts';

const PruneBody = Type.Object(
  {
    before: Type.String({
      ...IsoTime,
      description: 'The cutoff: finished events (dispatched, dropped, failed, partial) created before it are deleted',
    }),
  },
  { additionalProperties: false },
);

export const PruneView = Type.Object(
  {
    id: Type.String(),
    before: Type.String({ description: 'The cutoff asked for' }),
    state: Type.Union(
      [Type.Literal('running'), Type.Literal('done'), Type.Literal('failed'), Type.Literal('stopped')],
      {
        description: '`stopped`: the service stopped before the prune finished (what was deleted stays deleted)',
      },
    ),
    deleted: Type.Integer({ description: 'Events deleted so far' }),
    kept_unfinished: Type.Union([Type.Integer(), Type.Null()], {
      description: 'When done: events older than the cutoff kept because they are still pending or deferred',
    }),
    started_at: Type.String(),
    finished_at: Type.Union([Type.String(), Type.Null()]),
    error: Type.Union([Type.String(), Type.Null()], { description: 'When failed: why' }),
  },
  { additionalProperties: false },
);

export async function adminEventRoutes(app: App, core: Core): Promise<void> {
  const opts = { preHandler: requireAdmin(core) };
  const tags = ['admin'];

  app.post(
    '/api/admin/events/prune',
    {
      ...opts,
      schema: {
        tags,
        summary: 'Prune the event log now, as the daily retention does, with a cutoff (administrators)',
        body: PruneBody,
        response: {
          ...accepted('The prune, started: follow it at `GET /api/admin/events/prune/{id}`.', PruneView),
          ...errors([409, 'A prune is already running on this replica (`params.id` names it)']),
        },
      },
    },
    async (req, reply) => {
      const before = new Date(req.body.before);
      if (before.getTime() > core.clock.now().getTime())
        throw unprocessable('The cutoff is in the future; it must be now or earlier.', [
          { path: 'body/before', message: 'must be now or earlier' },
        ]);
      const { job, started } = startPrune(core, before);
      if (!started)
        throw conflict(
          `An event log prune (before ${job.before}) is already running on this replica; wait for it to end.`,
          'prune_running',
          { id: job.id, before: job.before },
        );
      core.logs
        .get('relay')
        .info({ admin_id: caller(req).id, prune_id: job.id, before: job.before }, 'an administrator started a prune');
      reply.code(202).header('location', `/api/admin/events/prune/${job.id}`);
      return job;
    },
  );

  app.get(
    '/api/admin/events/prune/:id',
    {
      ...opts,
      schema: {
        tags,
        summary: 'A prune of the event log started on this replica, while it runs and after (administrators)',
        params: IdParams,
        response: { ...ok('The prune: its state and the events deleted so far.', PruneView) },
      },
    },
    async (req) => {
      const job = pruneJob(core, req.params.id);
      if (!job) throw notFound('Prune');
      return job;
    },
  );
}
