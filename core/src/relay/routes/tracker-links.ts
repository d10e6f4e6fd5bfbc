/**
 * Links between a tracker and its targets: `GET /api/trackers/{id}/targets`, `PUT, DELETE
 * /api/trackers/{id}/targets/{target_id}`.
 */
import Type, { type Static } from 'typebox';
import { caller, requireUser } from '../../auth/guard.ts';
import type { Core } from '../../core.ts';
import { IdParams, noContent, ok, Uuid } from '../../http/schemas.ts';
import type { App } from '../../http/server.ts';
import type { TargetDbRow } from '../definitions/target.ts';
import { TargetList } from '../definitions/target.ts';
import { TrackerLinkView } from '../definitions/tracker.ts';
import { nowIso, owned } from './common.ts';
import { targetView } from './targets.ts';

const LinkParams = Type.Object({ id: Uuid, target_id: Uuid });

export async function trackerLinkRoutes(app: App, core: Core): Promise<void> {
  const auth = requireUser(core);

  app.get(
    '/api/trackers/:id/targets',
    {
      schema: {
        tags: ['relay'],
        summary: 'List the targets linked to a tracker',
        description:
          "Each event the tracker passes on is delivered to every linked target, rendered in the target's " +
          'locale. Secret config fields are masked.',
        params: IdParams,
        response: { ...ok('The linked targets (`targets`), secret config fields masked.', TargetList) },
      },
      preHandler: auth,
    },
    async (req) => {
      const user = caller(req);
      const tracker = await owned<{ id: string }>(core, 'trackers', req.params.id, user.id, 'Tracker');
      const rows = await core.db.all<TargetDbRow>(
        `SELECT t.* FROM tracker_targets l JOIN targets t ON t.id = l.target_id
      WHERE l.tracker_id = ? AND t.user_id = ? ORDER BY l.created_at, t.id`,
        [tracker.id, user.id],
      );
      return { targets: rows.map((r) => targetView(core, r)) };
    },
  );

  app.put(
    '/api/trackers/:id/targets/:target_id',
    {
      schema: {
        tags: ['relay'],
        summary: 'Link a target to a tracker',
        description:
          'Idempotent: linking a pair that is already linked changes nothing and answers the existing ' +
          'link. Both the tracker and the target must be yours. Events recorded from now on reach the ' +
          'target; earlier ones do not.',
        params: LinkParams,
        response: { ...ok('The link (`tracker_id`, `target_id`, `created_at`).', TrackerLinkView) },
      },
      preHandler: auth,
    },
    async (req) => {
      const user = caller(req);
      const p = req.params;
      const tracker = await owned<{ id: string }>(core, 'trackers', p.id, user.id, 'Tracker');
      const target = await owned<{ id: string }>(core, 'targets', p.target_id, user.id, 'Target');
      // Idempotent: a second PUT of the same pair changes nothing.
      await core.db.run(
        'INSERT INTO tracker_targets (tracker_id, target_id, user_id, created_at) VALUES (?, ?, ?, ?) ON ' +
          'CONFLICT (tracker_id, target_id) DO NOTHING',
        [tracker.id, target.id, user.id, nowIso(core)],
      );
      const link = await core.db.get<Static<typeof TrackerLinkView>>(
        'SELECT tracker_id, target_id, created_at FROM tracker_targets WHERE tracker_id = ? AND target_id = ?',
        [tracker.id, target.id],
      );
      return link!;
    },
  );

  app.delete(
    '/api/trackers/:id/targets/:target_id',
    {
      schema: {
        tags: ['relay'],
        summary: 'Unlink a target from a tracker',
        description:
          'Answers 204 whether or not the pair was linked. Deliveries already queued for the target are still sent.',
        params: LinkParams,
        response: { ...noContent('Unlinked (or was not linked).') },
      },
      preHandler: auth,
    },
    async (req, reply) => {
      const user = caller(req);
      const p = req.params;
      const tracker = await owned<{ id: string }>(core, 'trackers', p.id, user.id, 'Tracker');
      const target = await owned<{ id: string }>(core, 'targets', p.target_id, user.id, 'Target');
      await core.db.run('DELETE FROM tracker_targets WHERE tracker_id = ? AND target_id = ? AND user_id = ?', [
        tracker.id,
        target.id,
        user.id,
      ]);
      return reply.code(204).send();
    },
  );
}
