/**
 * `GET, PATCH /api/self-monitoring`: the thresholds and tracking switches of the caller's
 * self-monitoring provider (of the kind whose plugin receives the signals). 404 when no enabled
 * plugin receives them.
 */

import Type from 'typebox';
import { caller, requireUser } from '../../auth/guard.ts';
import type { Core } from '../../core.ts';
import { Database as Db } from '../../db/database.ts';
import { HttpError } from '../../http/problem.ts';
import { errors, ok } from '../../http/schemas.ts';
import type { App } from '../../http/server.ts';
import { selfMonitoringOf } from '../../plugins/self-monitoring.ts';
import { ensureSelfMonitoring } from '../../users/users.ts';
import { nowIso } from './common.ts';

const Threshold = Type.Integer({ minimum: 1, maximum: 100000 });
const PatchBody = Type.Object(
  {
    poll_failure_threshold: Type.Optional(Threshold),
    deferred_backlog_threshold: Type.Optional(Threshold),
    target_failure_threshold: Type.Optional(Threshold),
    track_poll_failures: Type.Optional(Type.Boolean()),
    track_deferred_backlog: Type.Optional(Type.Boolean()),
    track_target_failures: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

const COLUMNS = [
  'poll_failure_threshold',
  'deferred_backlog_threshold',
  'target_failure_threshold',
  'track_poll_failures',
  'track_deferred_backlog',
  'track_target_failures',
] as const;

export async function selfMonitoringRoutes(app: App, core: Core): Promise<void> {
  const auth = requireUser(core);
  const load = async (userId: string) => {
    const receiver = selfMonitoringOf(core);
    if (!receiver)
      throw new HttpError(
        404,
        'self_monitoring_unavailable',
        'Self-monitoring is not available: no enabled plugin receives its signals.',
      );
    // Every user has one; created here too in case an older database predates the rule.
    const id = await core.db.tx((q) => ensureSelfMonitoring(q, userId, receiver));
    const r = (await core.db.get<Record<string, any>>('SELECT * FROM providers WHERE id = ?', [id]))!;
    return {
      provider_id: r.id as string,
      poll_failure_threshold: Number(r.poll_failure_threshold),
      deferred_backlog_threshold: Number(r.deferred_backlog_threshold),
      target_failure_threshold: Number(r.target_failure_threshold),
      track_poll_failures: Db.bool(r.track_poll_failures),
      track_deferred_backlog: Db.bool(r.track_deferred_backlog),
      track_target_failures: Db.bool(r.track_target_failures),
      backlog_latched: Db.bool(r.backlog_latched),
    };
  };

  app.get(
    '/api/self-monitoring',
    {
      schema: {
        tags: ['relay'],
        response: {
          ...ok('The thresholds and tracking switches of your self-monitoring provider.'),
          ...errors([404, 'No enabled plugin receives self-monitoring signals (`self_monitoring_unavailable`).']),
        },
      },
      preHandler: auth,
    },
    async (req) => load(caller(req).id),
  );

  app.patch(
    '/api/self-monitoring',
    {
      schema: {
        tags: ['relay'],
        body: PatchBody,
        response: {
          ...ok('The thresholds and switches as changed.'),
          ...errors([404, 'No enabled plugin receives self-monitoring signals (`self_monitoring_unavailable`).']),
        },
      },
      preHandler: auth,
    },
    async (req) => {
      const user = caller(req);
      const current = await load(user.id);
      const b = req.body;
      const sets: string[] = [];
      const params: (string | number | boolean)[] = [];
      for (const c of COLUMNS)
        if (b[c] !== undefined) {
          sets.push(`${c} = ?`);
          params.push(b[c]!);
        }
      if (sets.length) {
        await core.db.run(`UPDATE providers SET ${sets.join(', ')}, updated_at = ? WHERE id = ? AND user_id = ?`, [
          ...params,
          nowIso(core),
          current.provider_id,
          user.id,
        ]);
      }
      return load(user.id);
    },
  );
}
