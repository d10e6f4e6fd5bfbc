/**
 * The scheduled action, defined once: its settings, each kind's config, the create and change
 * bodies, the action as the API shows it (`ActionView`), the backup record's settings and the SQL
 * that writes an action derive from `ACTION_SETTINGS`. Adding an optional setting is one line here,
 * one in `ACTION_DEFAULTS`, its name in `ADDED_LATER`, a migration for its column, and the form.
 */
import Type, { type Static, type TSchema } from 'typebox';
import { Database as Db } from '../../db/database.ts';
import { Uuid } from '../../http/schemas.ts';
import { type ActionKind, ActionKindSchema, NameSchema } from '../vocabulary.ts';
import { addedLater, JsonObject, Nullable, optional, Time } from './common.ts';

export const ACTION_SETTINGS = {
  name: NameSchema,
  kind: ActionKindSchema,
  /** A cron expression (at most once a minute). */
  schedule: Type.String({ minLength: 1, maxLength: 120 }),
  /** The IANA time zone the schedule is read in. */
  timezone: Type.String({ minLength: 1, maxLength: 64 }),
  /** The kind's config (`ACTION_CONFIGS`). */
  config: JsonObject,
  enabled: Type.Boolean(),
};
export type ActionSettings = { [K in keyof typeof ACTION_SETTINGS]: Static<(typeof ACTION_SETTINGS)[K]> };

/** Settings a create may leave out, and what they are then. */
export const ACTION_DEFAULTS: Pick<ActionSettings, 'timezone' | 'enabled'> = { timezone: 'UTC', enabled: true };

const TargetIds = Type.Array(Uuid, { minItems: 1, maxItems: 20, uniqueItems: true });
/**
 * What each kind's config holds (the routes and the backup check it). An `ai_digest` summarises the
 * owner's events (of `provider_ids` when given) for `target_ids`.
 */
const DigestConfig = Type.Object({ tracker_id: Uuid }, { additionalProperties: false });
const MessageConfig = Type.Object(
  {
    target_ids: TargetIds,
    title: Type.String({ minLength: 1, maxLength: 200 }),
    body: Type.String({ minLength: 1, maxLength: 4000 }),
  },
  { additionalProperties: false },
);
const AiDigestConfig = Type.Object(
  { target_ids: TargetIds, provider_ids: Type.Optional(TargetIds) },
  { additionalProperties: false },
);
export const ACTION_CONFIGS: Record<ActionKind, TSchema> = {
  digest: DigestConfig,
  message: MessageConfig,
  ai_digest: AiDigestConfig,
};
/** Each kind's config as it is written. */
export type ActionConfigs = {
  digest: Static<typeof DigestConfig>;
  message: Static<typeof MessageConfig>;
  ai_digest: Static<typeof AiDigestConfig>;
};

/** An `actions` row as stored (JSON text or objects, booleans as the backend's). */
export type ActionDbRow = {
  id: string;
  user_id: string;
  name: string;
  kind: ActionKind;
  schedule: string;
  timezone: string;
  config: unknown;
  enabled: unknown;
  last_run_at: string | null;
  last_status: string | null;
  last_error: string | null;
  next_run_at: string | null;
  created_at: string;
  updated_at: string;
};

/** An `actions` row's settings, read back. */
export function actionSettingsOf(row: ActionDbRow): ActionSettings {
  return {
    name: row.name,
    kind: row.kind,
    schedule: row.schedule,
    timezone: row.timezone,
    config: Db.json<Record<string, unknown>>(row.config, {}),
    enabled: Db.bool(row.enabled),
  };
}

/**
 * An action's stored config as a run reads it: each field of the kinds' configs when it has its
 * declared JSON type, absent otherwise. A config is checked when it is written (routes, backup);
 * a run still copes with a row put there another way, as it always has.
 */
export type StoredActionConfig = Partial<
  ActionConfigs['digest'] & ActionConfigs['message'] & ActionConfigs['ai_digest']
>;

export function storedActionConfig(row: Pick<ActionDbRow, 'config'>): StoredActionConfig {
  const raw = Db.json<unknown>(row.config, {});
  const c: Partial<Record<string, unknown>> = raw !== null && typeof raw === 'object' ? raw : {};
  const text = (v: unknown) => (typeof v === 'string' ? v : undefined);
  const ids = (v: unknown) => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : undefined);
  return {
    tracker_id: text(c.tracker_id),
    target_ids: ids(c.target_ids),
    provider_ids: ids(c.provider_ids),
    title: text(c.title),
    body: text(c.body),
  };
}

/** The create body: a name, kind, schedule and config; ACTION_DEFAULTS for the rest. */
export const ActionCreateBody = Type.Object(
  {
    ...optional(ACTION_SETTINGS),
    name: ACTION_SETTINGS.name,
    kind: ACTION_SETTINGS.kind,
    schedule: ACTION_SETTINGS.schedule,
    config: ACTION_SETTINGS.config,
  },
  { additionalProperties: false },
);
/** The change body: any setting; what is left out keeps its value. */
export const ActionPatchBody = Type.Object(optional(ACTION_SETTINGS), { additionalProperties: false });

/** The action as the API shows it, with its last and next run. */
export const ActionView = Type.Object({
  id: Uuid,
  ...ACTION_SETTINGS,
  last_run_at: Nullable(Time),
  /** How the last run went (`ok`, `error`, ...). */
  last_status: Nullable(Type.String()),
  last_error: Nullable(Type.String()),
  next_run_at: Nullable(Time),
  created_at: Time,
  updated_at: Time,
});
export const ActionList = Type.Object({ actions: Type.Array(ActionView) });
/** `GET /api/actions/schedule-preview`: the next runs (ISO 8601, UTC). */
export const SchedulePreview = Type.Object({ next: Type.Array(Type.String()) });

/** The settings as a backup record carries them; a setting added later goes in the list below as well. */
const ADDED_LATER = [] as const;
export const ACTION_BACKUP_SETTINGS = addedLater(ACTION_SETTINGS, ADDED_LATER);
