/**
 * Shapes of the public API's JSON. Those the server defines come from its TypeBox definitions as types
 * only (`import type`, erased by Vite: no server code reaches the bundle); the rest are still written here.
 */
import type { Static } from 'typebox';
import type { ChatAttachment } from '../../../src/assistant/chat-api-types.ts';
import type { SkillCreateBody as SkillCreateBodySchema } from '../../../src/assistant/definitions/skill.ts';
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
  Quota,
  Report,
  Skill,
  Storage,
  UsageDay,
} from '../../../src/assistant/api-types.ts';
export type { Role, Session, Settings, User } from '../../../src/users/api-types.ts';
/** POST /api/auth/password's body (written here until the server exports it). */
export interface PasswordChangeBody {
  current_password: string;
  password: string;
}
/** `PATCH /api/v1/admin/settings`: what is left out keeps its value. */
export type SettingsPatchBody = Static<typeof AssistantSettingsPatch>;
/** `POST /api/v1/skills` (and the administrators' general skills). */
export type SkillCreateBody = Static<typeof SkillCreateBodySchema>;
/** `POST /api/v1/admin/users`, `PATCH /api/v1/admin/users/{user_id}`. */
export type UserCreateBody = Static<typeof UserCreateBodySchema>;
export type UserPatchBody = Static<typeof UserPatchBodySchema>;

export interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  enum?: unknown[];
  const?: unknown;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  default?: unknown;
  description?: string;
  title?: string;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  format?: string;
  patternProperties?: Record<string, JsonSchema>;
  additionalProperties?: boolean | JsonSchema;
  'x-secret'?: boolean;
  /** Labels of an enum field's values in the interface language, keyed by the value as a string. */
  'x-option-labels'?: Record<string, string>;
}

export interface EventSpec {
  severity: string;
  quiet_hours: 'defer' | 'send' | 'drop' | string;
  description: string | null;
}
export interface Plugin {
  id: string;
  kind: 'provider' | 'target';
  display_name: string;
  description: string | null;
  config_schema: JsonSchema;
  tracker_schema: JsonSchema | null;
  secret_paths: string[];
  events: Record<string, EventSpec>;
  ingest: string | null;
  core_managed: boolean;
  has_bot_driver: boolean;
}

export interface Provider {
  id: string;
  kind: string;
  name: string;
  enabled: boolean;
  config: Record<string, unknown>;
  secrets_set: string[];
  /** Present for kinds whose plugin declares them as top-level config aliases (the generic webhook). */
  auth_mode?: string | null;
  acknowledge_unauthenticated?: boolean;
  status: string;
  status_detail: string | null;
  webhook_url: string | null;
  core_managed: boolean;
  plugin_enabled: boolean;
  created_at: string;
  updated_at: string;
  /** What a dialect's app asks for one by one, labelled in the caller's language (null: the URL alone). */
  webhook_connection: ConnectionValue[] | null;
  /** The plugin's command that sends a test notification. */
  webhook_example: string | null;
  /** A kind that takes mail while the service's SMTP listener is off. */
  smtp_listener_off: boolean;
  /** Hosts (or address ranges) this provider may reach besides the public internet; set by an administrator. */
  outbound_allow: string[];
  outbound_allow_warnings: AllowWarning[];
}
/** An allow-list entry wider than one host or a small range, and why. */
export interface AllowWarning {
  entry: string;
  code: string;
  message: string;
}
/** How the generic webhook authenticates a sender. */
export type AuthMode = 'hmac_sha256' | 'bearer' | 'none';
/** POST /api/providers' body (written here until the server exports it); the auth settings are the
 *  generic webhook's top-level aliases of its config fields. */
export interface ProviderCreateBody {
  kind: string;
  name: string;
  config: Record<string, unknown>;
  enabled?: boolean;
  outbound_allow?: string[];
  auth_mode?: AuthMode;
  acknowledge_unauthenticated?: boolean;
}
/** PATCH /api/providers/:id's body: what is left out keeps its value. */
export type ProviderPatchBody = Partial<Omit<ProviderCreateBody, 'kind'>>;
export interface ConnectionValue {
  key: string;
  label: string;
  hint?: string;
  value: string;
  secret: boolean;
}

/** The tracker's settings, create and change bodies, as the server defines them (types only: erased by Vite). */
export type { TrackerSettings } from '../../../src/relay/definitions/tracker.ts';
export type TrackerCreateBody = Static<typeof TrackerCreateBodySchema>;
export type TrackerPatchBody = Static<typeof TrackerPatchBodySchema>;
export type { QuietPolicy, QuietRelease } from '../../../src/relay/vocabulary.ts';
/** A quiet-hours window (a tracker's `quiet_hours` when it has one). */
export type QuietHours = NonNullable<ServerQuietHours>;
/** Targets and trackers as the relay's response schemas declare them. */
export type {
  ParsedTargetUrl,
  Target,
  TargetCreateBody,
  TargetPatchBody,
  TestOutcome,
  Tracker,
  TrackerLink,
} from '../../../src/relay/api-types.ts';

export interface Bot {
  id: string;
  kind: string;
  name: string;
  bot_id: string | null;
  username: string | null;
  mode: 'polling' | 'webhook';
  status: string;
  status_detail: string | null;
  created_at: string;
}
/** POST /api/bots' body (written here until the server exports it): `kind` only where several are enabled. */
export interface BotCreateBody {
  name: string;
  token: string;
  mode: Bot['mode'];
  kind?: string;
  api_root?: string | null;
}
/** PATCH /api/bots/:id's body: what is left out keeps its value (the token masked: kept). */
export type BotPatchBody = Partial<Omit<BotCreateBody, 'kind'>>;
/** What a scheduled action does. */
export type ActionKind = 'digest' | 'message' | 'ai_digest';
/** An action's config by kind: a tracker's digest, a fixed message, or the assistant's summary. */
export type ActionConfig =
  | { tracker_id: string }
  | { target_ids: string[]; title: string; body: string }
  | { target_ids: string[]; provider_ids?: string[] };
/** POST /api/actions' body (written here until the server exports it). */
export interface ActionCreateBody {
  name: string;
  kind: ActionKind;
  schedule: string;
  timezone?: string;
  config: ActionConfig;
  enabled?: boolean;
}
export interface BotChat {
  id: string;
  chat_id: string;
  type: string;
  title: string | null;
  username: string | null;
  is_forum: boolean;
  registered: boolean;
  last_seen_at: string;
}

export interface Delivery {
  target_id: string;
  status: string;
  attempts: number;
  last_error: string | null;
  last_status_code: number | null;
}
export interface EventRow {
  id: string;
  provider_id: string | null;
  provider_kind: string;
  event_type: string;
  severity: string;
  payload: Record<string, unknown>;
  details: unknown;
  tracker_ids: string[] | null;
  dispatch_status: string;
  occurred_at: string;
  created_at: string;
  deliveries: Delivery[];
  /** The event's readable message in the asked language (with `?locale=`). */
  message?: string;
}

export interface Deferred {
  id: string;
  event_id: string;
  event_type: string;
  tracker_id: string | null;
  tracker_name: string | null;
  target_id: string;
  target_name: string | null;
  target_kind: string | null;
  release_at: string;
  created_at: string;
}

export interface SelfMonitoring {
  provider_id: string;
  poll_failure_threshold: number;
  deferred_backlog_threshold: number;
  target_failure_threshold: number;
  track_poll_failures: boolean;
  track_deferred_backlog: boolean;
  track_target_failures: boolean;
  backlog_latched: boolean;
}

export interface WebhookLogEntry {
  id: string;
  received_at: string;
  status_code: number;
  error_message: string | null;
  payload_excerpt: string | null;
  source_ip: string | null;
  event_ids: string[];
}

/** Chats as the server's response schema declares them; messages are still written here (the chat view builds
 *  its own placeholders for a message being sent, which the server's type does not describe). */
export type { Chat, Chats, ChatToolCall } from '../../../src/assistant/chat-api-types.ts';
export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  estimated?: boolean;
}
export interface Message {
  id: string;
  chat_id: string;
  role: 'user' | 'assistant';
  content: string;
  status: 'complete' | 'interrupted' | 'error';
  usage: Usage | null;
  context_version: number | null;
  error: string | null;
  created_at: string;
  parent_id?: string | null;
  model?: string | null;
  attachments?: ChatAttachment[];
  /** This message and its alternatives (a regenerated reply, an edited question), oldest first. */
  alternatives?: string[];
}
