/**
 * The provider, defined once: its settings (what a user chooses and a backup carries), the API's
 * create and change bodies, the provider as the API shows it (`ProviderView`), the backup record's
 * settings, the export, the restore and the SQL that writes a provider all derive from
 * `PROVIDER_SETTINGS` (and, for the self-monitoring columns every provider row has,
 * `SELF_MONITORING_SETTINGS`). Adding an optional setting is one line here, one in
 * `PROVIDER_DEFAULTS`, its name in `ADDED_LATER`, a migration for its column, and the form.
 *
 * `kind` is chosen at creation and never changes; `outbound_allow` is set by an administrator only,
 * `webhook_token` by the service; the top-level config aliases a plugin declares (the generic
 * webhook's auth settings) are added to the bodies and the view by the routes, per enabled plugin.
 */
import Type, { type Static } from 'typebox';
import { Database as Db } from '../../db/database.ts';
import { Uuid } from '../../http/schemas.ts';
import { NameSchema, OutboundAllowSchema } from '../vocabulary.ts';
import { addedLater, JsonObject, Nullable, OutboundAllowView, optional, Time } from './common.ts';
import { SELF_MONITORING_SETTINGS } from './self-monitoring.ts';

/** A provider plugin's id (its manifest's `id`). */
export const ProviderKind = Type.String({ minLength: 1, maxLength: 64 });

export const PROVIDER_SETTINGS = {
  name: NameSchema,
  /** The provider plugin's config (validated against its schema, secrets sealed). */
  config: JsonObject,
  enabled: Type.Boolean(),
};
export type ProviderSettings = { [K in keyof typeof PROVIDER_SETTINGS]: Static<(typeof PROVIDER_SETTINGS)[K]> };

/** Settings a create may leave out, and what they are then. */
export const PROVIDER_DEFAULTS: Pick<ProviderSettings, 'enabled'> = { enabled: true };

/** A `providers` row as stored (JSON text or objects, booleans as the backend's). */
export type ProviderDbRow = {
  id: string;
  user_id: string;
  kind: string;
  name: string;
  config: unknown;
  enabled: unknown;
  webhook_token: string | null;
  status: string;
  status_detail: string | null;
  outbound_allow: unknown;
  poll_failure_threshold: number | string;
  deferred_backlog_threshold: number | string;
  target_failure_threshold: number | string;
  track_poll_failures: unknown;
  track_deferred_backlog: unknown;
  track_target_failures: unknown;
  backlog_latched: unknown;
  created_at: string;
  updated_at: string;
};

/** A `providers` row's settings, read back (config as stored: sealed secrets stay sealed). */
export function providerSettingsOf(row: ProviderDbRow): ProviderSettings {
  return { name: row.name, config: Db.json<Record<string, unknown>>(row.config, {}), enabled: Db.bool(row.enabled) };
}

/** A record's settings, PROVIDER_DEFAULTS for those it leaves out, and nothing else of the record. */
export function providerSettingsFrom(
  x: Partial<ProviderSettings> & Pick<ProviderSettings, 'name' | 'config'>,
): ProviderSettings {
  const out: Record<string, unknown> = { ...PROVIDER_DEFAULTS };
  for (const k of Object.keys(PROVIDER_SETTINGS) as (keyof ProviderSettings)[]) if (x[k] !== undefined) out[k] = x[k];
  return out as ProviderSettings;
}

/** The create body (without the plugins' top-level config aliases, which the routes add). */
export const ProviderCreateBody = Type.Object(
  {
    kind: ProviderKind,
    ...optional(PROVIDER_SETTINGS),
    name: PROVIDER_SETTINGS.name,
    config: PROVIDER_SETTINGS.config,
    outbound_allow: Type.Optional(OutboundAllowSchema),
  },
  { additionalProperties: false },
);

/** The change body (without the aliases): any setting; what is left out keeps its value. */
export const ProviderPatchBody = Type.Object(
  { ...optional(PROVIDER_SETTINGS), outbound_allow: Type.Optional(OutboundAllowSchema) },
  { additionalProperties: false },
);

/** One value to paste into the sending app, labelled in the caller's language. */
export const ConnectionValueView = Type.Object({
  key: Type.String(),
  label: Type.String(),
  hint: Type.Optional(Type.String()),
  value: Type.String(),
  secret: Type.Boolean(),
});

/**
 * The provider as the API shows it: secrets masked; for webhook kinds the URL to paste and, for a
 * kind that speaks another service's dialect, the values its apps ask for. Besides these, the
 * top-level config aliases its plugin declares (each its config value or null).
 */
export const ProviderView = Type.Object(
  {
    id: Uuid,
    kind: ProviderKind,
    ...PROVIDER_SETTINGS,
    /** Names of the secret config fields that hold a value (shown masked as `********`). */
    secrets_set: Type.Array(Type.String()),
    /** `pending`, `running`, `error`, `disabled`, ... */
    status: Type.String(),
    status_detail: Nullable(Type.String()),
    webhook_url: Nullable(Type.String()),
    webhook_connection: Nullable(Type.Array(ConnectionValueView)),
    webhook_example: Nullable(Type.String()),
    /** A kind that takes mail while the SMTP listener is off: only the webhook URL reaches it. */
    smtp_listener_off: Type.Boolean(),
    /** The self-monitoring provider: created and kept by the service. */
    core_managed: Type.Boolean(),
    /** False when the provider's kind is no longer enabled on this service. */
    plugin_enabled: Type.Boolean(),
    ...OutboundAllowView,
    created_at: Time,
    updated_at: Time,
  },
  { additionalProperties: true },
);
export const ProviderList = Type.Object({ providers: Type.Array(ProviderView) });

/**
 * The settings as a backup record carries them (with the self-monitoring columns): every one,
 * except those added after the backup format was fixed, which a backup written before them lacks
 * (and a restore gives their default). A new setting goes in the list below as well.
 */
const ADDED_LATER = [] as const;
export const PROVIDER_BACKUP_SETTINGS = addedLater({ ...PROVIDER_SETTINGS, ...SELF_MONITORING_SETTINGS }, ADDED_LATER);
