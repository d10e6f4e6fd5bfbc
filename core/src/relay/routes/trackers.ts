/** Trackers: `GET, POST /api/trackers`, `GET, PATCH, DELETE /api/trackers/{id}`. */

import Type, { type Static } from 'typebox';
import { caller, requireUser } from '../../auth/guard.ts';
import type { Core } from '../../core.ts';
import { Database as Db } from '../../db/database.ts';
import { insertRow, updateRow } from '../../db/rows.ts';
import { newId } from '../../http/ids.ts';
import { notFound, unprocessable } from '../../http/problem.ts';
import { created, errors, IdParams, ListQuery, noContent, ok, Uuid } from '../../http/schemas.ts';
import type { App } from '../../http/server.ts';
import { redactObject } from '../../logging/redact.ts';
import {
  TrackerCreateBody,
  type TrackerDbRow,
  TrackerList,
  TrackerPatchBody,
  type TrackerSettings,
  TrackerView,
  trackerSettingsFrom,
  trackerSettingsOf,
} from '../definitions/tracker.ts';
import { quietWindowProblem } from '../quiet-hours/quiet-hours.ts';
import { invalidConfig, nowIso, owned, pageSql, relayIfRunning } from './common.ts';
import { maskSecrets, restoreMasked } from './secrets.ts';

/** A tracker as validated before it is written; `config` undefined on a change: the stored config. */
type Input = Omit<TrackerSettings, 'config'> & { provider_id: string; config: Record<string, unknown> | undefined };

function trackerSecrets(core: Core, kind: string): string[] {
  return core.plugins.provider(kind)?.trackerSecretPaths ?? [];
}

/** The tracker as the API shows it. `targetIds` comes from one query over all listed trackers. */
export function trackerView(
  core: Core,
  row: TrackerDbRow,
  providerKind: string,
  targetIds: string[],
): Static<typeof TrackerView> {
  const raw = Db.json<Record<string, unknown>>(row.config, {});
  // A kind that is no longer enabled has no schema to say what is secret: mask by field name and every sealed value.
  const { config, secrets_set } = core.plugins.provider(providerKind)
    ? maskSecrets(raw, trackerSecrets(core, providerKind))
    : { config: redactObject(raw), secrets_set: [] as string[] };
  return {
    id: row.id,
    provider_id: row.provider_id,
    provider_kind: providerKind,
    ...trackerSettingsOf(row),
    config,
    secrets_set,
    target_ids: targetIds,
    consecutive_poll_failures: Number(row.consecutive_poll_failures ?? 0),
    // A successful poll that changed nothing is held in memory (newer than the stored time) and written with the
    // others once a minute.
    last_poll_at: relayIfRunning(core)?.monitor.lastPollAt(row.provider_id) ?? row.last_poll_at ?? null,
    last_poll_error: row.last_poll_error ?? null,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

async function views(core: Core, rows: TrackerDbRow[]) {
  if (!rows.length) return [];
  const ids = rows.map((r) => r.id);
  const marks = ids.map(() => '?').join(', ');
  const links = await core.db.all<{ tracker_id: string; target_id: string }>(
    `SELECT tracker_id, target_id FROM tracker_targets WHERE tracker_id IN (${marks}) ORDER BY created_at, target_id`,
    ids,
  );
  const kinds = await core.db.all<{ id: string; kind: string }>(
    `SELECT id, kind FROM providers WHERE id IN (${rows.map(() => '?').join(', ')})`,
    rows.map((r) => r.provider_id),
  );
  const kindOf = new Map(kinds.map((k) => [k.id, k.kind]));
  return rows.map((r) =>
    trackerView(
      core,
      r,
      kindOf.get(r.provider_id) ?? '',
      links.filter((l) => l.tracker_id === r.id).map((l) => l.target_id),
    ),
  );
}

/** Checks an input against the provider's plugin: declared event types, quiet hours, tracker config. */
async function validate(
  core: Core,
  userId: string,
  input: Input,
  stored?: TrackerDbRow,
  configSent = true,
): Promise<Input> {
  const provider = await core.db.get<{ id: string; kind: string }>(
    'SELECT id, kind FROM providers WHERE id = ? AND user_id = ?',
    [input.provider_id, userId],
  );
  if (!provider) throw notFound('Provider');
  const plugin = core.plugins.provider(provider.kind);
  if (!plugin)
    throw unprocessable(
      `Provider kind "${provider.kind}" is not enabled on this service; trackers of it cannot be created or changed.`,
      undefined,
      'kind_not_enabled',
      { kind: provider.kind },
    );
  const declared = Object.keys(plugin.def.manifest.events ?? {});
  for (const [field, map] of [
    ['event_types', input.event_types],
    ['quiet_policies', input.quiet_policies],
  ] as const) {
    const unknown = Object.keys(map).filter((k) => !declared.includes(k));
    if (unknown.length) {
      throw unprocessable(
        `${field} names event types that "${provider.kind}" does not emit: ${unknown.join(', ')}; its ` +
          `event types are: ${declared.join(', ') || 'none'}.`,
        unknown.map((k) => ({ path: `body/${field}/${k}`, message: 'is not an event type of this provider' })),
      );
    }
  }
  if (input.quiet_hours) {
    const problem = quietWindowProblem(input.quiet_hours);
    if (problem)
      throw unprocessable(
        `The quiet hours are invalid: ${problem}.`,
        [{ path: 'body/quiet_hours', message: problem }],
        'invalid_quiet_hours',
      );
  }
  const paths = plugin.trackerSecretPaths;
  const storedConfig = stored ? core.atRest.openConfigLenient(Db.json(stored.config, {}), paths) : undefined;
  const { config, unresolved } = restoreMasked(input.config ?? storedConfig ?? {}, storedConfig, paths);
  if (unresolved.length)
    throw unprocessable(
      `The config holds the mask "********" where no secret is stored (${unresolved.join(', ')}); send the real value.`,
    );
  // Fields the tracker schema does not declare are refused in a config the caller sent (or carries to
  // another provider), dropped from the stored one of an unchanged provider.
  const cfg = plugin.validateTrackerConfig(config, { undeclared: configSent ? 'refuse' : 'drop' });
  if (!cfg.ok)
    throw invalidConfig(
      'config',
      `tracker configuration for a ${plugin.def.manifest.displayName} provider`,
      cfg.errors,
      cfg.undeclared,
    );
  return { ...input, config: core.atRest.sealConfig(cfg.value, paths) };
}

export async function trackerRoutes(app: App, core: Core): Promise<void> {
  const auth = requireUser(core);
  const get = (id: string, userId: string) => owned<TrackerDbRow>(core, 'trackers', id, userId, 'Tracker');
  const one = async (id: string, userId: string) => (await views(core, [await get(id, userId)]))[0];

  app.get(
    '/api/trackers',
    {
      schema: {
        tags: ['relay'],
        summary: 'List your trackers',
        description:
          'Trackers are the subscriptions of one provider: which event types it passes on, quiet hours and ' +
          'per-type quiet-hours policies, how deferred notifications are released when the window ends ' +
          '(`quiet_release`: `each` or `digest`), the plugin-defined tracker config (secret fields masked) ' +
          'and the linked target ids. Filter by `provider_id`.',
        querystring: Type.Object({ ...ListQuery.properties, provider_id: Type.Optional(Uuid) }),
        response: { ...ok('Your trackers (`trackers`), newest first, secret config fields masked.', TrackerList) },
      },
      preHandler: auth,
    },
    async (req) => {
      const q = req.query;
      const params: unknown[] = [caller(req).id];
      let where = 'user_id = ?';
      if (q.provider_id) {
        where += ' AND provider_id = ?';
        params.push(q.provider_id);
      }
      const rows = await core.db.all<TrackerDbRow>(
        `SELECT * FROM trackers WHERE ${where}${pageSql('', q, params)}`,
        params as never[],
      );
      return { trackers: await views(core, rows) };
    },
  );

  app.post(
    '/api/trackers',
    {
      schema: {
        tags: ['relay'],
        summary: 'Create a tracker',
        description:
          'The provider must be yours and its kind enabled. `event_types` and `quiet_policies` may name ' +
          "only event types the provider's plugin declares (`GET /api/plugins`); `config` is validated " +
          "against the plugin's tracker schema, with its defaults applied. An event type missing from " +
          '`event_types` is passed on; `false` turns it off. Link targets with `PUT ' +
          '/api/trackers/{id}/targets/{target_id}`.',
        body: TrackerCreateBody,
        response: {
          ...created('The new tracker.', TrackerView),
          ...errors([404, 'The provider named by `provider_id` is not yours or does not exist.']),
        },
      },
      preHandler: auth,
    },
    async (req, reply) => {
      const user = caller(req);
      const { provider_id, ...settings } = req.body;
      const input = await validate(core, user.id, { provider_id, ...trackerSettingsFrom(settings) });
      const id = newId();
      const now = nowIso(core);
      await insertRow(core.db, 'trackers', { id, user_id: user.id, ...input, created_at: now, updated_at: now });
      reply.code(201);
      return one(id, user.id);
    },
  );

  app.get(
    '/api/trackers/:id',
    {
      schema: {
        tags: ['relay'],
        summary: 'Read a tracker',
        params: IdParams,
        response: { ...ok('The tracker, secret config fields masked.', TrackerView) },
      },
      preHandler: auth,
    },
    async (req) => one(req.params.id, caller(req).id),
  );

  app.patch(
    '/api/trackers/:id',
    {
      schema: {
        tags: ['relay'],
        summary: 'Change a tracker',
        description:
          'Fields left out keep their value. A secret sent back as the mask `********` keeps the stored ' +
          "secret. Changing the quiet hours recomputes when this tracker's deferred notifications are " +
          'released.',
        params: IdParams,
        body: TrackerPatchBody,
        response: { ...ok('The changed tracker.', TrackerView) },
      },
      preHandler: auth,
    },
    async (req) => {
      const user = caller(req);
      const row = await get(req.params.id, user.id);
      const b = req.body;
      const input = await validate(
        core,
        user.id,
        { provider_id: row.provider_id, ...trackerSettingsOf(row), ...b, config: b.config },
        row,
        b.config !== undefined || (b.provider_id !== undefined && b.provider_id !== row.provider_id),
      );
      await updateRow(core.db, 'trackers', { ...input, updated_at: nowIso(core) }, { id: row.id, user_id: user.id });
      // Deferred rows of this tracker wait for the old window; the pipeline recomputes their release.
      const relay = relayIfRunning(core);
      if (relay)
        await relay
          .trackerChanged(row.id)
          .catch((err) => req.log.error({ err, tracker_id: row.id }, 'recomputing deferred releases failed'));
      return one(row.id, user.id);
    },
  );

  app.delete(
    '/api/trackers/:id',
    {
      schema: {
        tags: ['relay'],
        summary: 'Delete a tracker',
        description: 'Also removes its links to targets. Recorded events stay in the event log.',
        params: IdParams,
        response: { ...noContent('Deleted, with its links to targets.') },
      },
      preHandler: auth,
    },
    async (req, reply) => {
      const user = caller(req);
      const row = await get(req.params.id, user.id);
      await core.db.run('DELETE FROM trackers WHERE id = ? AND user_id = ?', [row.id, user.id]);
      return reply.code(204).send();
    },
  );
}
