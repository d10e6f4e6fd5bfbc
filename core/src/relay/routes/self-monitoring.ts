/**
 * `GET, PATCH /api/self-monitoring`: the thresholds and tracking switches of the caller's
 * self-monitoring provider (of the kind whose plugin receives the signals). 404 when no enabled
 * plugin receives them.
 */

import { caller, requireUser } from '../../auth/guard.ts';
import type { Core } from '../../core.ts';
import { Database as Db } from '../../db/database.ts';
import { updateRow } from '../../db/rows.ts';
import { HttpError } from '../../http/problem.ts';
import { errors, ok } from '../../http/schemas.ts';
import type { App } from '../../http/server.ts';
import { selfMonitoringOf } from '../../plugins/self-monitoring.ts';
import { ensureSelfMonitoring } from '../../users/users.ts';
import {
  SELF_MONITORING_SETTINGS,
  SelfMonitoringPatchBody,
  SelfMonitoringView,
  selfMonitoringSettingsOf,
} from '../definitions/self-monitoring.ts';
import { nowIso } from './common.ts';

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
    const r = (await core.db.get<Record<string, unknown>>('SELECT * FROM providers WHERE id = ?', [id]))!;
    return { provider_id: id, ...selfMonitoringSettingsOf(r), backlog_latched: Db.bool(r.backlog_latched) };
  };

  app.get(
    '/api/self-monitoring',
    {
      schema: {
        tags: ['relay'],
        response: {
          ...ok('The thresholds and tracking switches of your self-monitoring provider.', SelfMonitoringView),
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
        body: SelfMonitoringPatchBody,
        response: {
          ...ok('The thresholds and switches as changed.', SelfMonitoringView),
          ...errors([404, 'No enabled plugin receives self-monitoring signals (`self_monitoring_unavailable`).']),
        },
      },
      preHandler: auth,
    },
    async (req) => {
      const user = caller(req);
      const current = await load(user.id);
      // Column names from the definition, never from the request.
      const b: Partial<Record<string, unknown>> = req.body;
      const sent = Object.fromEntries(
        Object.keys(SELF_MONITORING_SETTINGS)
          .filter((k) => b[k] !== undefined)
          .map((k) => [k, b[k]]),
      );
      if (Object.keys(sent).length)
        await updateRow(
          core.db,
          'providers',
          { ...sent, updated_at: nowIso(core) },
          { id: current.provider_id, user_id: user.id },
        );
      return load(user.id);
    },
  );
}
