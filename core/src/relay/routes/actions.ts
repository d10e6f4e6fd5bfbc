/**
 * Scheduled actions: `GET, POST /api/actions`, `GET, PATCH, DELETE /api/actions/{id}`, `POST /api/actions/{id}/run`,
 * and `GET /api/actions/schedule-preview` (the next five runs of a schedule, or why it is refused).
 */

import Type, { type Static } from 'typebox';
import { Compile } from 'typebox/compile';
import { caller, requireUser } from '../../auth/guard.ts';
import type { Core } from '../../core.ts';
import { insertRow, updateRow } from '../../db/rows.ts';
import { newId } from '../../http/ids.ts';
import { plainParams, unprocessable } from '../../http/problem.ts';
import { created, errors, IdParams, ListQuery, noContent, ok } from '../../http/schemas.ts';
import type { App } from '../../http/server.ts';
import {
  ACTION_CONFIGS,
  ACTION_DEFAULTS,
  ACTION_SETTINGS,
  ActionCreateBody,
  type ActionDbRow,
  ActionList,
  ActionPatchBody,
  type ActionSettings,
  ActionView,
  actionSettingsOf,
  SchedulePreview,
} from '../definitions/action.ts';
import { invalidConfig, nowIso, owned, pageSql, relay, validTimeZone } from './common.ts';
import { checkSchedule, nextRuns } from './schedule.ts';

const Zone = ACTION_SETTINGS.timezone;
const PreviewQuery = Type.Object(
  { schedule: Type.String({ maxLength: 120 }), timezone: Type.Optional(Zone) },
  { additionalProperties: false },
);
const PREVIEW_RUNS = 5;

function zoneProblem(timezone: string, path: string) {
  return unprocessable(
    `timezone "${timezone}" is not an IANA time zone (for example Europe/Berlin or UTC).`,
    [{ path, message: 'is not an IANA time zone' }],
    'invalid_timezone',
    { timezone },
  );
}

/**
 * A refused schedule as a 422 whose code says why (sub-minute, malformed, never fires, field count), values in params.
 */
function scheduleProblem(check: Extract<ReturnType<typeof checkSchedule>, { ok: false }>, path: string) {
  return unprocessable(
    `The ${check.problem}.`,
    [{ path, message: check.problem, code: check.code, params: check.params }],
    check.code,
    check.params,
  );
}

const validators = {
  digest: Compile(ACTION_CONFIGS.digest),
  message: Compile(ACTION_CONFIGS.message),
  ai_digest: Compile(ACTION_CONFIGS.ai_digest),
};

/** An action as validated before it is written. */
export type ActionInput = ActionSettings;

export function actionView(row: ActionDbRow): Static<typeof ActionView> {
  return {
    id: row.id,
    ...actionSettingsOf(row),
    last_run_at: row.last_run_at ?? null,
    last_status: row.last_status ?? null,
    last_error: row.last_error ?? null,
    next_run_at: row.next_run_at ?? null,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

/** The fields of a body that were sent (a left-out optional field is absent, not undefined). */
function withoutUndefined<T extends object>(x: T): { [K in keyof T]: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(x).filter(([, v]) => v !== undefined)) as never;
}

/** Validates the schedule, time zone and kind-specific config; returns the next run (null when disabled). */
export async function validateAction(core: Core, userId: string, input: ActionInput): Promise<string | null> {
  if (!validTimeZone(input.timezone)) {
    throw zoneProblem(input.timezone, 'body/timezone');
  }
  const check = checkSchedule(input.schedule, input.timezone, core.clock.now());
  if (!check.ok) throw scheduleProblem(check, 'body/schedule');
  const v = validators[input.kind];
  if (!v.Check(input.config)) {
    throw invalidConfig(
      'config',
      `config of a ${input.kind} action`,
      [...v.Errors(input.config)].map((e) => ({
        path: e.instancePath || '/',
        message: e.message,
        code: e.keyword,
        params: plainParams(e.params),
      })),
    );
  }
  if (input.kind === 'digest') {
    const id = input.config.tracker_id as string;
    if (!(await core.db.get('SELECT 1 AS ok FROM trackers WHERE id = ? AND user_id = ?', [id, userId]))) {
      throw unprocessable(
        'config.tracker_id does not name one of your trackers.',
        [{ path: 'body/config/tracker_id', message: 'is not one of your trackers' }],
        'unknown_tracker',
      );
    }
  } else {
    if (input.kind === 'ai_digest' && Array.isArray(input.config.provider_ids)) {
      const pids = input.config.provider_ids as string[];
      const have = await core.db.all<{ id: string }>(
        `SELECT id FROM providers WHERE user_id = ? AND id IN (${pids.map(() => '?').join(', ')})`,
        [userId, ...pids],
      );
      const strange = pids.filter((id) => !have.some((f) => f.id === id));
      if (strange.length) {
        throw unprocessable(
          `config.provider_ids names providers that are not yours: ${strange.join(', ')}.`,
          strange.map((id) => ({
            path: `body/config/provider_ids/${pids.indexOf(id)}`,
            message: 'is not one of your providers',
          })),
          'unknown_provider',
        );
      }
    }
    const ids = input.config.target_ids as string[];
    const found = await core.db.all<{ id: string }>(
      `SELECT id FROM targets WHERE user_id = ? AND id IN (${ids.map(() => '?').join(', ')})`,
      [userId, ...ids],
    );
    const missing = ids.filter((id) => !found.some((f) => f.id === id));
    if (missing.length) {
      throw unprocessable(
        `config.target_ids names targets that are not yours: ${missing.join(', ')}.`,
        missing.map((id) => ({
          path: `body/config/target_ids/${ids.indexOf(id)}`,
          message: 'is not one of your targets',
        })),
        'unknown_target',
      );
    }
  }
  return input.enabled && check.nextRun ? check.nextRun.toISOString() : null;
}

/** Writes a validated action (see validateAction for `nextRun`); returns its id. */
export async function insertAction(
  core: Core,
  userId: string,
  input: ActionInput,
  nextRun: string | null,
): Promise<string> {
  const id = newId();
  const now = nowIso(core);
  await insertRow(core.db, 'actions', {
    id,
    user_id: userId,
    ...input,
    next_run_at: nextRun,
    created_at: now,
    updated_at: now,
  });
  return id;
}

export async function actionRoutes(app: App, core: Core): Promise<void> {
  const auth = requireUser(core);
  const get = (id: string, userId: string) => owned<ActionDbRow>(core, 'actions', id, userId, 'Action');

  app.get(
    '/api/actions',
    {
      schema: {
        tags: ['relay'],
        summary: 'List your scheduled actions',
        querystring: ListQuery,
        response: { ...ok('Your scheduled actions (`actions`), newest first.', ActionList) },
      },
      preHandler: auth,
    },
    async (req) => {
      const params: unknown[] = [caller(req).id];
      const rows = await core.db.all<ActionDbRow>(
        `SELECT * FROM actions WHERE user_id = ?${pageSql('', req.query, params)}`,
        params as never[],
      );
      return { actions: rows.map(actionView) };
    },
  );

  app.get(
    '/api/actions/schedule-preview',
    {
      schema: {
        tags: ['relay'],
        summary: 'Check a schedule and show its next five runs',
        description:
          'The same check as creating an action: a 422 whose `code` says why a schedule is refused ' +
          '(`schedule_sub_minute`, `schedule_malformed`, `schedule_never_fires`, `schedule_field_count`, ' +
          '`invalid_timezone`) with its values in `params`; else the next five run times (ISO 8601, UTC) ' +
          'as the scheduler will compute them.',
        querystring: PreviewQuery,
        response: { ...ok('The next five runs (`next`, ISO 8601, UTC).', SchedulePreview) },
      },
      preHandler: auth,
    },
    async (req) => {
      const q = req.query;
      const timezone = q.timezone ?? 'UTC';
      if (!validTimeZone(timezone)) throw zoneProblem(timezone, 'querystring/timezone');
      const now = core.clock.now();
      const check = checkSchedule(q.schedule, timezone, now);
      if (!check.ok) throw scheduleProblem(check, 'querystring/schedule');
      return { next: nextRuns(q.schedule, timezone, now, PREVIEW_RUNS).map((d) => d.toISOString()) };
    },
  );

  app.post(
    '/api/actions',
    {
      schema: {
        tags: ['relay'],
        summary: 'Create a scheduled action (digest, message or ai_digest)',
        body: ActionCreateBody,
        response: { ...created('The new action, with its next run.', ActionView) },
      },
      preHandler: auth,
    },
    async (req, reply) => {
      const user = caller(req);
      const b = req.body;
      const input: ActionInput = { ...ACTION_DEFAULTS, ...withoutUndefined(b), schedule: b.schedule.trim() };
      const nextRun = await validateAction(core, user.id, input);
      const id = await insertAction(core, user.id, input, nextRun);
      reply.code(201);
      return actionView(await get(id, user.id));
    },
  );

  app.get(
    '/api/actions/:id',
    {
      schema: {
        tags: ['relay'],
        summary: 'Read a scheduled action',
        params: IdParams,
        response: { ...ok('The action.', ActionView) },
      },
      preHandler: auth,
    },
    async (req) => actionView(await get(req.params.id, caller(req).id)),
  );

  app.patch(
    '/api/actions/:id',
    {
      schema: {
        tags: ['relay'],
        summary: 'Change a scheduled action',
        params: IdParams,
        body: ActionPatchBody,
        response: { ...ok('The action as changed.', ActionView) },
      },
      preHandler: auth,
    },
    async (req) => {
      const user = caller(req);
      const row = await get(req.params.id, user.id);
      const b = req.body;
      const merged = { ...actionSettingsOf(row), ...withoutUndefined(b) };
      const input: ActionInput = { ...merged, schedule: merged.schedule.trim() };
      const nextRun = await validateAction(core, user.id, input);
      await updateRow(
        core.db,
        'actions',
        { ...input, next_run_at: nextRun, updated_at: nowIso(core) },
        { id: row.id, user_id: user.id },
      );
      return actionView(await get(row.id, user.id));
    },
  );

  app.delete(
    '/api/actions/:id',
    {
      schema: {
        tags: ['relay'],
        summary: 'Delete a scheduled action',
        params: IdParams,
        response: { ...noContent('Deleted.') },
      },
      preHandler: auth,
    },
    async (req, reply) => {
      const user = caller(req);
      const row = await get(req.params.id, user.id);
      await core.db.run('DELETE FROM actions WHERE id = ? AND user_id = ?', [row.id, user.id]);
      return reply.code(204).send();
    },
  );

  app.post(
    '/api/actions/:id/run',
    {
      schema: {
        tags: ['relay'],
        summary: 'Run a scheduled action now',
        params: IdParams,
        response: {
          ...ok('The action after the run (`last_status`, `last_error`).', ActionView),
          ...errors([503, 'The relay pipeline is not running yet (`relay_unavailable`).']),
        },
      },
      preHandler: auth,
    },
    async (req) => {
      const user = caller(req);
      const row = await get(req.params.id, user.id);
      await relay(core).runAction(row.id);
      return actionView(await get(row.id, user.id));
    },
  );
}
