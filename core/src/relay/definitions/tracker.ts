/**
 * The tracker, defined once: its settings (what a user chooses and a backup carries), each with its
 * schema and the value a create that leaves it out gets. The API's create and change bodies, the
 * tracker as the API shows it, the backup record, the export, the restore and the SQL that writes a
 * tracker are all derived from `TRACKER_SETTINGS`: adding a setting is one line here, one in
 * `TRACKER_DEFAULTS` (unless it is required), a migration for its column, and the form.
 *
 * Stored as the `trackers` table's columns of the same names (objects as JSON text, booleans as the
 * backend's); `trackerSettingsOf` reads them back from a row.
 */
import Type, { type Static } from 'typebox';
import { Database as Db } from '../../db/database.ts';
import { Uuid } from '../../http/schemas.ts';
import { EVENT_TYPE_MAX, NameSchema, QuietHoursSchema, QuietPolicySchema, QuietReleaseSchema } from '../vocabulary.ts';
import { Nullable, optional, Time } from './common.ts';

const EventTypeKey = Type.String({ maxLength: EVENT_TYPE_MAX });

export const TRACKER_SETTINGS = {
  name: NameSchema,
  /** The operator's own note on what the tracker is for. */
  description: Type.Union([Type.String({ maxLength: 500 }), Type.Null()]),
  enabled: Type.Boolean(),
  /** Event types passed on (`true`) or not (`false`); a type left out is passed on. */
  event_types: Type.Record(EventTypeKey, Type.Boolean()),
  quiet_hours: QuietHoursSchema,
  /** What each event type does during the quiet hours; a type left out follows its plugin's default. */
  quiet_policies: Type.Record(EventTypeKey, QuietPolicySchema),
  quiet_release: QuietReleaseSchema,
  /** The provider plugin's tracker config (validated against its schema, secrets sealed). */
  config: Type.Record(Type.String(), Type.Unknown()),
};
export type TrackerSettings = { [K in keyof typeof TRACKER_SETTINGS]: Static<(typeof TRACKER_SETTINGS)[K]> };

/** Settings a create may leave out, and what they are then. */
export const TRACKER_DEFAULTS: Omit<TrackerSettings, 'name'> = {
  description: null,
  enabled: true,
  event_types: {},
  quiet_hours: null,
  quiet_policies: {},
  quiet_release: 'each',
  config: {},
};

/** Settings stored as JSON text; the boolean ones. Every other setting is stored as it is. */
const JSON_SETTINGS = new Set<string>(['event_types', 'quiet_hours', 'quiet_policies', 'config']);
const BOOLEAN_SETTINGS = new Set<string>(['enabled']);

/** A `trackers` row as stored (JSON text or objects, booleans as the backend's). */
export type TrackerDbRow = {
  id: string;
  user_id: string;
  provider_id: string;
  name: string;
  description: string | null;
  enabled: unknown;
  event_types: unknown;
  quiet_hours: unknown;
  quiet_policies: unknown;
  quiet_release: string | null;
  config: unknown;
  consecutive_poll_failures: number | string | null;
  last_poll_at: string | null;
  last_poll_error: string | null;
  created_at: string;
  updated_at: string;
};

/** A `trackers` row's settings, read back (config as stored: sealed secrets stay sealed). */
export function trackerSettingsOf(row: Record<string, unknown>): TrackerSettings {
  const defaults: Record<string, unknown> = TRACKER_DEFAULTS;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(TRACKER_SETTINGS)) {
    const v = row[key];
    if (JSON_SETTINGS.has(key)) out[key] = Db.json(v, defaults[key] ?? null);
    else if (BOOLEAN_SETTINGS.has(key)) out[key] = Db.bool(v);
    else out[key] = v ?? defaults[key];
  }
  // A row written before the quiet-hours digest, or by hand, holds neither value: one by one.
  if (out.quiet_release !== 'digest') out.quiet_release = 'each';
  return out as TrackerSettings;
}

/**
 * A record's settings, TRACKER_DEFAULTS for those it leaves out (a create, or a backup written
 * before a setting existed), and nothing else of the record.
 */
export function trackerSettingsFrom(x: Partial<TrackerSettings>): TrackerSettings {
  const out: Record<string, unknown> = { ...TRACKER_DEFAULTS };
  for (const k of Object.keys(TRACKER_SETTINGS) as (keyof TrackerSettings)[]) if (x[k] !== undefined) out[k] = x[k];
  return out as TrackerSettings;
}

/** The create body: the provider, a name, any other setting (TRACKER_DEFAULTS for those left out). */
export const TrackerCreateBody = Type.Object(
  { provider_id: Uuid, ...optional(TRACKER_SETTINGS), name: TRACKER_SETTINGS.name },
  { additionalProperties: false },
);

/**
 * The settings as a backup record carries them: every one, except those added after the backup
 * format was fixed, which a backup written before them lacks (and a restore gives their default).
 * A new setting goes in the list below as well.
 */
const ADDED_LATER = ['quiet_release', 'description'] as const;
type AddedLater = Pick<typeof TRACKER_SETTINGS, (typeof ADDED_LATER)[number]>;
export const TRACKER_BACKUP_SETTINGS = {
  ...TRACKER_SETTINGS,
  ...optional(Object.fromEntries(ADDED_LATER.map((k) => [k, TRACKER_SETTINGS[k]])) as AddedLater),
};

/** The change body: any setting, or another provider of the caller's; what is left out keeps its value. */
export const TrackerPatchBody = Type.Object(optional({ provider_id: Uuid, ...TRACKER_SETTINGS }), {
  additionalProperties: false,
});

/** The tracker as the API shows it: secret config fields masked, the linked targets, its polling state. */
export const TrackerView = Type.Object({
  id: Uuid,
  provider_id: Uuid,
  provider_kind: Type.String(),
  ...TRACKER_SETTINGS,
  /** Names of the secret config fields that hold a value (shown masked as `********`). */
  secrets_set: Type.Array(Type.String()),
  target_ids: Type.Array(Uuid),
  consecutive_poll_failures: Type.Integer(),
  last_poll_at: Nullable(Time),
  last_poll_error: Nullable(Type.String()),
  created_at: Time,
  updated_at: Time,
});
export const TrackerList = Type.Object({ trackers: Type.Array(TrackerView) });

/** A link between a tracker and a target. */
export const TrackerLinkView = Type.Object({ tracker_id: Uuid, target_id: Uuid, created_at: Time });
