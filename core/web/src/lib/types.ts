/**
 * Shapes of the public API's JSON. Those the server defines come from its TypeBox definitions as types
 * only (`import type`, erased by Vite: no server code reaches the bundle); the rest are still written here.
 */
import type { Static } from 'typebox';
import type {
  TrackerCreateBody as TrackerCreateBodySchema,
  TrackerPatchBody as TrackerPatchBodySchema,
  TrackerSettings,
} from '../../../src/relay/definitions/tracker.ts';
import type { QuietHours as ServerQuietHours } from '../../../src/relay/vocabulary.ts';
import type { Locale } from './i18n.ts';

export type Role = 'user' | 'admin';
export interface User {
  id: string;
  email: string;
  role: Role;
  is_active: boolean;
  locale: string;
  max_chats: number;
  max_ai_messages_per_day: number | null;
  max_ai_tokens_per_day: number | null;
  created_at: string;
  updated_at: string;
  /** The user's own storage limit in MB (1,000,000 bytes); null: the service's SERVICE_USER_STORAGE_MB. */
  max_storage_mb?: number | null;
  /** False for a user restored from a backup without a password (inactive until an administrator sets one). */
  password_set?: boolean;
}

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
export interface Tracker extends TrackerSettings {
  id: string;
  provider_id: string;
  provider_kind: string;
  secrets_set: string[];
  target_ids: string[];
  consecutive_poll_failures: number;
  last_poll_at: string | null;
  last_poll_error: string | null;
  created_at: string;
  updated_at: string;
}

export interface Target {
  id: string;
  kind: string;
  name: string;
  config: Record<string, unknown>;
  secrets_set: string[];
  locale: string;
  enabled: boolean;
  consecutive_failures: number;
  last_error: string | null;
  plugin_enabled: boolean;
  /** Hosts (or address ranges) this target may reach besides the public internet; set by an administrator. */
  outbound_allow: string[];
  /** Entries wider than one host or a small range, each with why. */
  outbound_allow_warnings: AllowWarning[];
  /** Update the earlier message of the same thing instead of posting a new one, where the channel can. */
  update_messages: boolean;
  created_at: string;
  updated_at: string;
}
/** POST /api/targets' body (written here until the server exports it). */
export interface TargetCreateBody {
  kind: string;
  name: string;
  config: Record<string, unknown>;
  locale: Locale;
  enabled?: boolean;
  outbound_allow?: string[];
  update_messages?: boolean;
}
/** PATCH /api/targets/:id's body: what is left out keeps its value. */
export type TargetPatchBody = Partial<Omit<TargetCreateBody, 'kind'>>;

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

export interface Chat {
  id: string;
  title: string;
  is_archived: boolean;
  skill_id: string | null;
  model?: string | null;
  created_at: string;
  updated_at: string;
}
export interface Attachment {
  type: 'report';
  report_id: string;
  title: string;
  available?: boolean;
  size_bytes?: number;
}
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
  attachments?: Attachment[];
  /** This message and its alternatives (a regenerated reply, an edited question), oldest first. */
  alternatives?: string[];
}
export interface Quota {
  messages_used: number;
  tokens_used: number;
  message_limit: number;
  token_limit: number;
  messages_exceeded: boolean;
  tokens_exceeded: boolean;
  resets_at: string;
}
export interface Skill {
  id: string;
  scope: 'general' | 'personal';
  name: string;
  description: string | null;
  prompt: string;
  created_at: string;
  updated_at: string;
}
export interface MemoryEntry {
  id: string;
  content: string;
  category: string | null;
  recorded_at: string | null;
  always_include?: boolean;
  created_at: string;
  updated_at: string;
}
/** GET /api/v1/storage: what documents, memory entries and reports take against the user's limit. */
export interface Storage {
  used_bytes: number;
  limit_bytes: number;
  limit_mb: number;
  custom_limit: boolean;
  exceeded: boolean;
  documents_bytes: number;
  memory_bytes: number;
  reports_bytes: number;
}
export interface Doc {
  id: string;
  filename: string;
  media_type: string;
  size_bytes: number;
  text_chars: number;
  created_at: string;
  excerpt?: string;
}
export interface Report {
  id: string;
  title: string;
  locale: string;
  created_at: string;
  size_bytes: number;
}
export interface Settings {
  self_registration_enabled: boolean;
  default_max_chats: number;
  default_max_ai_messages_per_day: number;
  default_max_ai_tokens_per_day: number;
}
export interface UsageDay {
  date: string;
  users: { user_id: string; email: string; messages: number; tokens: number }[];
  models?: { model: string; messages: number; tokens: number }[];
}
