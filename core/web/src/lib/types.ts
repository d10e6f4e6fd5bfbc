/**
 * Shapes of the public API's JSON. Those the server defines come from its TypeBox definitions as types
 * only (`import type`, erased by Vite: no server code reaches the bundle); the rest are still written here.
 */
import type { Static } from 'typebox';
import type { ChatMessage } from '../../../src/assistant/chat-api-types.ts';
import type { SkillCreateBody as SkillCreateBodySchema } from '../../../src/assistant/definitions/skill.ts';
import type {
  Provider as ServerProvider,
  ProviderCreateBody as ServerProviderCreateBody,
} from '../../../src/relay/api-types.ts';
import type {
  BotCreateBody as BotCreateBodySchema,
  BotPatchBody as BotPatchBodySchema,
} from '../../../src/relay/definitions/bot.ts';
import type {
  TrackerCreateBody as TrackerCreateBodySchema,
  TrackerPatchBody as TrackerPatchBodySchema,
} from '../../../src/relay/definitions/tracker.ts';
import type { QuietHours as ServerQuietHours } from '../../../src/relay/vocabulary.ts';
import type { AssistantSettingsPatch } from '../../../src/settings/definition.ts';
import type {
  UserCreateBody as UserCreateBodySchema,
  UserPatchBody as UserPatchBodySchema,
} from '../../../src/users/definition.ts';

// Accounts, settings and the assistant's resources, as the server's response schemas declare them.
export type {
  AdminModels,
  Doc,
  MemoryEntry,
  PersonalContext,
  PrimaryContext,
  Quota,
  Report,
  SearchHit,
  SearchResults,
  Skill,
  Storage,
  UsageDay,
} from '../../../src/assistant/api-types.ts';
export type { PasswordChangeBody, Role, Session, Settings, User } from '../../../src/users/api-types.ts';
/** `PATCH /api/v1/admin/settings`: what is left out keeps its value. */
export type SettingsPatchBody = Static<typeof AssistantSettingsPatch>;
/** `POST /api/v1/skills` (and the administrators' general skills). */
export type SkillCreateBody = Static<typeof SkillCreateBodySchema>;
/** `POST /api/v1/admin/users`, `PATCH /api/v1/admin/users/{user_id}`. */
export type UserCreateBody = Static<typeof UserCreateBodySchema>;
export type UserPatchBody = Static<typeof UserPatchBodySchema>;

/** Backup files, the scheduled backup's settings and a staged restore, as the backup routes declare them. */
export type {
  BackupFile,
  BackupFiles,
  BackupSchedule,
  BackupWritten,
  RestoreSummary,
  StagedRestore,
} from '../../../src/backup/api-types.ts';
export type { JsonSchema } from '../../../src/plugins/api-types.ts';
/** The enabled plugins (`GET /api/plugins`) and the JSON Schema keywords their forms read, as the server declares. */
export type { PluginEvent as EventSpec, PluginInfo as Plugin } from '../../../src/relay/api-types.ts';

/** The generic webhook's top-level aliases of its auth config fields, which the server's provider schema
 *  leaves open (each plugin declares its own). */
interface AuthAliases {
  auth_mode?: AuthMode;
  acknowledge_unauthenticated?: boolean;
}
/** A provider as the server's schema declares it, with the aliases a plugin may add (null: not set). */
export type Provider = ServerProvider & { auth_mode?: AuthMode | null; acknowledge_unauthenticated?: boolean | null };
/** POST /api/providers' body, PATCH /api/providers/:id's body, with the aliases. */
export type ProviderCreateBody = ServerProviderCreateBody & AuthAliases;
export type ProviderPatchBody = Partial<Omit<ProviderCreateBody, 'kind'>>;
/** How the generic webhook authenticates a sender. */
export type AuthMode = 'hmac_sha256' | 'bearer' | 'none';

/** The tracker's settings, create and change bodies, as the server defines them (types only: erased by Vite). */
export type { TrackerSettings } from '../../../src/relay/definitions/tracker.ts';
export type TrackerCreateBody = Static<typeof TrackerCreateBodySchema>;
export type TrackerPatchBody = Static<typeof TrackerPatchBodySchema>;
export type { ActionKind, QuietPolicy, QuietRelease } from '../../../src/relay/vocabulary.ts';
/** A quiet-hours window (a tracker's `quiet_hours` when it has one). */
export type QuietHours = NonNullable<ServerQuietHours>;
/** The relay's resources as its response schemas declare them. */
export type {
  Action,
  ActionCreateBody,
  ActionPatchBody,
  Bot,
  BotChat,
  ConnectionValue,
  DeferredDelivery as Deferred,
  Delivery,
  DeliveryHistory,
  EventRow,
  OutboundAllowEntry,
  OutboundAllowPage,
  ParsedTargetUrl,
  PushSubscription,
  PushSubscriptions,
  PushTestOutcome,
  ReplayPreview,
  ReplayQueued,
  SavedTemplate,
  SelfMonitoring,
  Stats,
  Target,
  TargetCreateBody,
  TargetPatchBody,
  TemplateCatalog,
  TemplateCatalogEntry,
  TemplatePreview,
  TemplateText,
  TestEventOutcome,
  TestOutcome,
  Tracker,
  TrackerLink,
  VapidPublicKey,
  WebhookLogEntry,
} from '../../../src/relay/api-types.ts';

/** POST /api/bots, PATCH /api/bots/:id (the token masked: kept). */
export type BotCreateBody = Static<typeof BotCreateBodySchema>;
export type BotPatchBody = Static<typeof BotPatchBodySchema>;
/** An action's config by kind: a tracker's digest, a fixed message, or the assistant's summary. */
export type ActionConfig =
  | { tracker_id: string }
  | { target_ids: string[]; title: string; body: string }
  | { target_ids: string[]; provider_ids?: string[] };

/** Chats and their messages as the server's response schemas declare them. */
export type { Chat, ChatMessage as Message, Chats, ChatToolCall } from '../../../src/assistant/chat-api-types.ts';
/** What a reply cost (`usage` of an assistant message; `estimated` when the model did not report it). */
export type Usage = NonNullable<ChatMessage['usage']>;
