/**
 * Scheduled actions: `GET, POST /api/actions`, `GET, PATCH, DELETE /api/actions/{id}`, `POST /api/actions/{id}/run`,
 * and `GET /api/actions/schedule-preview` (the next five runs of a schedule, or why it is refused).
 */

import type { TSchema } from 'typebox';
import Type from 'typebox';
import { Compile } from 'typebox/compile';
import { caller, requireUser } from '../../auth/guard.ts';
import type { Core } from '../../core.ts';
import { Database as Db } from '../../db/database.ts';
import { newId } from '../../http/ids.ts';
import { plainParams, unprocessable } from '../../http/problem.ts';
import { created, errors, IdParams, ListQuery, noContent, ok, Uuid } from '../../http/schemas.ts';
import type { App } from '../../http/server.ts';
import { NameSchema as Name } from '../vocabulary.ts';
import { invalidConfig, nowIso, owned, pageSql, relay, validTimeZone } from './common.ts';
import { checkSchedule, nextRuns } from './schedule.ts';

const Kind = Type.Union([Type.Literal('digest'), Type.Literal('message'), Type.Literal('ai_digest')]);
const Schedule = Type.String({ minLength: 1, maxLength: 120 });
const Zone = Type.String({ minLength: 1, maxLength: 64 });
const Config = Type.Object({}, { additionalProperties: true });
const CreateBody = Type.Object(
  {
    name: Name,
    kind: Kind,
    schedule: Schedule,
    timezone: Type.Optional(Zone),
    config: Config,
    enabled: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
const PatchBody = Type.Object(
  {
    name: Type.Optional(Name),
    kind: Type.Optional(Kind),
    schedule: Type.Optional(Schedule),
    timezone: Type.Optional(Zone),
    config: Type.Optional(Config),
    enabled: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

type ActionKind = 'digest' | 'message' | 'ai_digest';
const TargetIds = Type.Array(Uuid, { minItems: 1, maxItems: 20, uniqueItems: true });

/**
 * What each kind's config holds. An `ai_digest` summarises the owner's events (of `provider_ids` when given) for
 * `target_ids`.
 */
const configSchemas: Record<ActionKind, TSchema> = {
  digest: Type.Object({ tracker_id: Uuid }, { additionalProperties: false }),
  message: Type.Object(
    {
      target_ids: Type.Array(Uuid, { minItems: 1, maxItems: 20, uniqueItems: true }),
      title: Type.String({ minLength: 1, maxLength: 200 }),
      body: Type.String({ minLength: 1, maxLength: 4000 }),
    },
    { additionalProperties: false },
  ),
  ai_digest: Type.Object(
    {
      target_ids: TargetIds,
      provider_ids: Type.Optional(Type.Array(Uuid, { minItems: 1, maxItems: 20, uniqueItems: true })),
    },
    { additionalProperties: false },
  ),
};
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
  digest: Compile(configSchemas.digest),
  message: Compile(configSchemas.message),
  ai_digest: Compile(configSchemas.ai_digest),
};

type Row = Record<string, any>;
export interface ActionInput {
  name: string;
  kind: ActionKind;
  schedule: string;
  timezone: string;
  config: Record<string, unknown>;
  enabled: boolean;
}

export function actionView(row: Row) {
  return {
    id: row.id as string,
    name: row.name as string,
    kind: row.kind as string,
    schedule: row.schedule as string,
    timezone: row.timezone as string,
    config: Db.json<Record<string, unknown>>(row.config, {}),
    enabled: Db.bool(row.enabled),
    last_run_at: (row.last_run_at ?? null) as string | null,
    last_status: (row.last_status ?? null) as string | null,
    last_error: (row.last_error ?? null) as string | null,
    next_run_at: (row.next_run_at ?? null) as string | null,
    created_at: row.created_at as string,
    updated_at: row.updated_at as string,
  };
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
  await core.db.run(
    'INSERT INTO actions (id, user_id, name, kind, schedule, timezone, config, enabled, next_run_at, ' +
      'created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
    [
      id,
      userId,
      input.name,
      input.kind,
      input.schedule,
      input.timezone,
      input.config,
      input.enabled,
      nextRun,
      now,
      now,
    ],
  );
  return id;
}

export async function actionRoutes(app: App, core: Core): Promise<void> {
  const auth = requireUser(core);
  const get = (id: string, userId: string) => owned(core, 'actions', id, userId, 'Action');

  app.get(
    '/api/actions',
    {
      schema: {
        tags: ['relay'],
        summary: 'List your scheduled actions',
        querystring: ListQuery,
        response: { ...ok('Your scheduled actions (`actions`), newest first.') },
      },
      preHandler: auth,
    },
    async (req) => {
      const params: unknown[] = [caller(req).id];
      const rows = await core.db.all(
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
        response: { ...ok('The next five runs (`next`, ISO 8601, UTC).') },
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
        body: CreateBody,
        response: { ...created('The new action, with its next run.') },
      },
      preHandler: auth,
    },
    async (req, reply) => {
      const user = caller(req);
      const b = req.body;
      const input: ActionInput = {
        name: b.name,
        kind: b.kind,
        schedule: b.schedule.trim(),
        timezone: b.timezone ?? 'UTC',
        config: b.config as Record<string, unknown>,
        enabled: b.enabled ?? true,
      };
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
        response: { ...ok('The action.') },
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
        body: PatchBody,
        response: { ...ok('The action as changed.') },
      },
      preHandler: auth,
    },
    async (req) => {
      const user = caller(req);
      const row = await get(req.params.id, user.id);
      const b = req.body;
      const input: ActionInput = {
        name: b.name ?? row.name,
        kind: b.kind ?? row.kind,
        schedule: (b.schedule ?? row.schedule).trim(),
        timezone: b.timezone ?? row.timezone,
        config: (b.config as Record<string, unknown> | undefined) ?? Db.json(row.config, {}),
        enabled: b.enabled ?? Db.bool(row.enabled),
      };
      const nextRun = await validateAction(core, user.id, input);
      await core.db.run(
        'UPDATE actions SET name = ?, kind = ?, schedule = ?, timezone = ?, config = ?, enabled = ?, ' +
          'next_run_at = ?, updated_at = ? WHERE id = ? AND user_id = ?',
        [
          input.name,
          input.kind,
          input.schedule,
          input.timezone,
          input.config,
          input.enabled,
          nextRun,
          nowIso(core),
          row.id,
          user.id,
        ],
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
          ...ok('The action after the run (`last_status`, `last_error`).'),
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
