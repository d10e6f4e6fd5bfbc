/**
 * The target, defined once: its settings (what a user chooses and a backup carries), each with its
 * schema and the value a create that leaves it out gets; the API's create and change bodies, the
 * target as the API shows it (`TargetView`), the backup record's settings, the export, the restore
 * and the SQL that writes a target are all derived from `TARGET_SETTINGS`. Adding an optional
 * setting is one line here, one in `TARGET_DEFAULTS`, its name in `ADDED_LATER`, a migration for
 * its column, and the form.
 *
 * `kind` is chosen at creation and never changes; `outbound_allow` is set by an administrator only
 * (routes/outbound-allow.ts), so neither is among the settings.
 */
import Type, { type Static } from 'typebox';
import { Database as Db } from '../../db/database.ts';
import { Uuid } from '../../http/schemas.ts';
import { LocaleSchema as Locale, NameSchema, OutboundAllowSchema } from '../vocabulary.ts';
import { addedLater, JsonObject, Nullable, OutboundAllowView, optional, Time } from './common.ts';

/** A target plugin's id (its manifest's `id`). */
export const TargetKind = Type.String({ minLength: 1, maxLength: 64 });

export const TARGET_SETTINGS = {
  name: NameSchema,
  /** The target plugin's config (validated against its schema, secrets sealed). */
  config: JsonObject,
  /** The language of the messages it sends. */
  locale: Locale,
  enabled: Type.Boolean(),
  /** Messages that follow the state: a later event about the same thing edits (or replies to) the earlier message. */
  update_messages: Type.Boolean({
    description:
      'Update the earlier message of the same thing (a UPS, a CI run, a pull request) instead of posting a ' +
      'new one, where the channel can (default true)',
  }),
};
export type TargetSettings = { [K in keyof typeof TARGET_SETTINGS]: Static<(typeof TARGET_SETTINGS)[K]> };

/** Settings a create may leave out, and what they are then. */
export const TARGET_DEFAULTS: Pick<TargetSettings, 'enabled' | 'update_messages'> = {
  enabled: true,
  update_messages: true,
};

/** A `targets` row as stored (JSON text or objects, booleans as the backend's). */
export type TargetDbRow = {
  id: string;
  user_id: string;
  kind: string;
  name: string;
  config: unknown;
  locale: 'en' | 'ru';
  enabled: unknown;
  update_messages: unknown;
  outbound_allow: unknown;
  consecutive_failures: number | string | null;
  last_error: string | null;
  created_at: string;
  updated_at: string;
};

/** A `targets` row's settings, read back (config as stored: sealed secrets stay sealed). */
export function targetSettingsOf(row: TargetDbRow): TargetSettings {
  return {
    name: row.name,
    config: Db.json<Record<string, unknown>>(row.config, {}),
    locale: row.locale,
    enabled: Db.bool(row.enabled),
    // A row written before messages followed the state holds none: on.
    update_messages: row.update_messages === undefined || row.update_messages === null || Db.bool(row.update_messages),
  };
}

/** A record's settings, TARGET_DEFAULTS for those it leaves out, and nothing else of the record. */
export function targetSettingsFrom(
  x: Partial<TargetSettings> & Pick<TargetSettings, 'name' | 'config' | 'locale'>,
): TargetSettings {
  const out: Record<string, unknown> = { ...TARGET_DEFAULTS };
  for (const k of Object.keys(TARGET_SETTINGS) as (keyof TargetSettings)[]) if (x[k] !== undefined) out[k] = x[k];
  return out as TargetSettings;
}

/** The create body: the kind, a name, its config and language, any other setting (TARGET_DEFAULTS for the rest). */
export const TargetCreateBody = Type.Object(
  {
    kind: TargetKind,
    ...optional(TARGET_SETTINGS),
    name: TARGET_SETTINGS.name,
    config: TARGET_SETTINGS.config,
    locale: TARGET_SETTINGS.locale,
    outbound_allow: Type.Optional(OutboundAllowSchema),
  },
  { additionalProperties: false },
);

/** The change body: any setting; what is left out keeps its value. */
export const TargetPatchBody = Type.Object(
  { ...optional(TARGET_SETTINGS), outbound_allow: Type.Optional(OutboundAllowSchema) },
  { additionalProperties: false },
);

/** The target as the API shows it: secrets masked, its state, its outbound allow list. */
export const TargetView = Type.Object({
  id: Uuid,
  kind: TargetKind,
  ...TARGET_SETTINGS,
  /** Names of the secret fields that hold a value (shown masked as `********` in `config`). */
  secrets_set: Type.Array(Type.String()),
  consecutive_failures: Type.Integer(),
  last_error: Nullable(Type.String()),
  /** False when the target's kind is no longer enabled on this service. */
  plugin_enabled: Type.Boolean(),
  ...OutboundAllowView,
  created_at: Time,
  updated_at: Time,
});
export const TargetList = Type.Object({ targets: Type.Array(TargetView) });

/**
 * The settings as a backup record carries them: every one, except those added after the backup
 * format was fixed, which a backup written before them lacks (and a restore gives their default).
 * A new setting goes in the list below as well.
 */
const ADDED_LATER = ['update_messages'] as const;
export const TARGET_BACKUP_SETTINGS = addedLater(TARGET_SETTINGS, ADDED_LATER);
