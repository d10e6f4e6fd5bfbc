/**
 * The shape of a configuration backup (format version 1), as TypeBox schemas. Every field is
 * bounded, unknown fields are refused, and JSON-typed columns (`config`, `event_types`,
 * `quiet_hours`, ...) are further checked against the plugin schemas by `sanitize.ts`.
 */

import type { Static } from 'typebox';
import Type from 'typebox';
import { Compile } from 'typebox/compile';
import { PersonalContextText, PrimaryContextText } from '../assistant/definitions/context.ts';
import { SKILL_FIELDS, SkillScope } from '../assistant/definitions/skill.ts';
import { DefaultModel, ModelsAllowed } from '../assistant/model-settings.ts';
import { ACTION_BACKUP_SETTINGS, ACTION_CONFIGS } from '../relay/definitions/action.ts';
import { BOT_BACKUP_FIELDS, BOT_CHAT_BACKUP_FIELDS, BotBackupTokenSchema } from '../relay/definitions/bot.ts';
import { PROVIDER_BACKUP_SETTINGS } from '../relay/definitions/provider.ts';
import { TARGET_BACKUP_SETTINGS } from '../relay/definitions/target.ts';
import { TEMPLATE_BACKUP_TEXT } from '../relay/definitions/template.ts';
import { TRACKER_BACKUP_SETTINGS } from '../relay/definitions/tracker.ts';
import { EventTypeSchema, LocaleSchema, OutboundAllowRecordSchema } from '../relay/vocabulary.ts';
import { PasswordHash, USER_BACKUP_FIELDS } from '../users/definition.ts';

export const FORMAT = 'herald-config-backup';
/** The envelope format this service writes; older ones are migrated by `envelope.ts`. */
export const FORMAT_VERSION = 1;

const Id = Type.String({ format: 'uuid' });
const Time = Type.String({ format: 'date-time', maxLength: 40 });
const Kind = Type.String({ pattern: '^[a-z][a-z0-9_]{1,40}$' });
const Locale = LocaleSchema;
const UrlToken = Type.String({ minLength: 16, maxLength: 256, pattern: '^[A-Za-z0-9_-]+$' });
/** JSON pointers (relative to the record) of secrets an `exclude` backup left out. */
const Omitted = Type.Optional(Type.Array(Type.String({ pattern: '^/', maxLength: 300 }), { maxItems: 200 }));

export const UserRecord = Type.Object(
  {
    id: Id,
    ...USER_BACKUP_FIELDS,
    password_hash: Type.Optional(PasswordHash),
    secrets_omitted: Omitted,
    created_at: Time,
    updated_at: Time,
  },
  { additionalProperties: false },
);

/**
 * A scalar at the top level of a provider record beside the known fields: a config alias its
 * plugin declares (`configAliases`), as backups written while plugin settings were provider
 * columns carry them on every provider. `sanitize.ts` folds declared ones into `config` and
 * refuses the others unless empty (null or false). New backups keep everything inside `config`.
 */
export const LegacyTopLevel = Type.Union([Type.String({ maxLength: 200 }), Type.Boolean(), Type.Null()]);

/** A provider's or target's own outbound allow list (CIDRs or host names); absent when it has none. Not a secret. */
const OutboundAllow = Type.Optional(OutboundAllowRecordSchema);

export const ProviderRecord = Type.Object(
  {
    id: Id,
    user_id: Id,
    kind: Kind,
    ...PROVIDER_BACKUP_SETTINGS,
    webhook_token: Type.Optional(UrlToken),
    outbound_allow: OutboundAllow,
    secrets_omitted: Omitted,
    created_at: Time,
    updated_at: Time,
  },
  { additionalProperties: LegacyTopLevel },
);

export const TrackerRecord = Type.Object(
  {
    id: Id,
    user_id: Id,
    provider_id: Id,
    // A setting absent (a backup from before it existed) is restored with its default.
    ...TRACKER_BACKUP_SETTINGS,
    secrets_omitted: Omitted,
    created_at: Time,
    updated_at: Time,
  },
  { additionalProperties: false },
);

export const TargetRecord = Type.Object(
  {
    id: Id,
    user_id: Id,
    kind: Kind,
    // A setting absent (a backup from before it existed) is restored with its default; `update_messages`
    // is written only when off.
    ...TARGET_BACKUP_SETTINGS,
    outbound_allow: OutboundAllow,
    secrets_omitted: Omitted,
    created_at: Time,
    updated_at: Time,
  },
  { additionalProperties: false },
);

export const LinkRecord = Type.Object(
  { tracker_id: Id, target_id: Id, user_id: Id, created_at: Time },
  { additionalProperties: false },
);

export const BotRecord = Type.Object(
  {
    id: Id,
    user_id: Id,
    kind: Kind,
    ...BOT_BACKUP_FIELDS,
    token: Type.Optional(BotBackupTokenSchema),
    /** Left out of `exclude` backups: a routing secret (a restore without it generates a new one). */
    webhook_path_id: Type.Optional(UrlToken),
    secrets_omitted: Omitted,
    created_at: Time,
    updated_at: Time,
  },
  { additionalProperties: false },
);

export const ChatRecord = Type.Object(
  { id: Id, bot_id: Id, user_id: Id, ...BOT_CHAT_BACKUP_FIELDS, last_seen_at: Time, created_at: Time },
  { additionalProperties: false },
);

export const ActionRecord = Type.Object(
  {
    id: Id,
    user_id: Id,
    ...ACTION_BACKUP_SETTINGS,
    created_at: Time,
    updated_at: Time,
  },
  { additionalProperties: false },
);

/** The per-kind action configs, as the action routes accept them. */
export const actionConfig = {
  digest: Compile(ACTION_CONFIGS.digest),
  message: Compile(ACTION_CONFIGS.message),
  ai_digest: Compile(ACTION_CONFIGS.ai_digest),
};

export const TemplateRecord = Type.Object(
  {
    id: Id,
    user_id: Id,
    event_type: EventTypeSchema,
    locale: Locale,
    // Wider than the API's limits, for backups written before it bounded them (see TEMPLATE_BACKUP_TEXT).
    ...TEMPLATE_BACKUP_TEXT,
    created_at: Time,
    updated_at: Time,
  },
  { additionalProperties: false },
);

export const SkillRecord = Type.Object(
  {
    id: Id,
    owner_id: Type.Union([Id, Type.Null()]),
    scope: SkillScope,
    ...SKILL_FIELDS,
    created_at: Time,
    updated_at: Time,
  },
  { additionalProperties: false },
);

export const PrimaryContextRecord = Type.Union([
  Type.Object(
    {
      content: PrimaryContextText,
      version: Type.Integer({ minimum: 0 }),
      updated_by: Type.Union([Id, Type.Null()]),
      updated_at: Time,
    },
    { additionalProperties: false },
  ),
  Type.Null(),
]);

export const PersonalContextRecord = Type.Object(
  { user_id: Id, content: PersonalContextText, updated_at: Time },
  { additionalProperties: false },
);

/** Operator settings, as strings; each value is checked by `settings-rules.ts` (the same rules as the API). */
export const SettingsRecord = Type.Record(Type.String({ maxLength: 64 }), Type.String({ maxLength: 20 }));

/**
 * The assistant's model choice (`PUT /api/v1/admin/models`), with the same limits as that route;
 * `default_model` null when none is set (AI_MODEL). Absent in backups from before it travelled:
 * a restore then leaves the models as they are.
 */
export const AssistantModelsRecord = Type.Object(
  {
    models_allowed: ModelsAllowed,
    default_model: Type.Union([DefaultModel, Type.Null()]),
  },
  { additionalProperties: false },
);

export const Configuration = Type.Object(
  {
    users: Type.Array(UserRecord),
    providers: Type.Array(ProviderRecord),
    trackers: Type.Array(TrackerRecord),
    targets: Type.Array(TargetRecord),
    tracker_targets: Type.Array(LinkRecord),
    bots: Type.Array(BotRecord),
    bot_chats: Type.Array(ChatRecord),
    actions: Type.Array(ActionRecord),
    templates: Type.Array(TemplateRecord),
    skills: Type.Array(SkillRecord),
    primary_context: PrimaryContextRecord,
    personal_contexts: Type.Array(PersonalContextRecord),
    settings: SettingsRecord,
    assistant_models: Type.Optional(AssistantModelsRecord),
  },
  { additionalProperties: false },
);

export const SecretsMode = Type.Union([Type.Literal('exclude'), Type.Literal('include')]);

export const Envelope = Type.Object(
  {
    format: Type.Literal(FORMAT),
    format_version: Type.Integer({ minimum: 1 }),
    service_version: Type.String({ minLength: 1, maxLength: 64 }),
    created_at: Time,
    trigger: Type.Optional(Type.Union([Type.Literal('manual'), Type.Literal('scheduled')])),
    secrets_mode: SecretsMode,
    checksum: Type.String({ pattern: '^sha256:[0-9a-f]{64}$' }),
    configuration: Configuration,
  },
  { additionalProperties: false },
);

export type UserRec = Static<typeof UserRecord>;
export type ProviderRec = Static<typeof ProviderRecord>;
export type TrackerRec = Static<typeof TrackerRecord>;
export type TargetRec = Static<typeof TargetRecord>;
export type LinkRec = Static<typeof LinkRecord>;
export type BotRec = Static<typeof BotRecord>;
export type ChatRec = Static<typeof ChatRecord>;
export type ActionRec = Static<typeof ActionRecord>;
export type TemplateRec = Static<typeof TemplateRecord>;
export type SkillRec = Static<typeof SkillRecord>;
export type PersonalContextRec = Static<typeof PersonalContextRecord>;
export type AssistantModelsRec = Static<typeof AssistantModelsRecord>;
export type ConfigurationT = Static<typeof Configuration>;
export type EnvelopeT = Static<typeof Envelope>;
export type SecretsModeT = Static<typeof SecretsMode>;

export const checkEnvelope = Compile(Envelope);
