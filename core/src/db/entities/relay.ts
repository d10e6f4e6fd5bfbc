import { defineEntity, p } from '@mikro-orm/core';

type Json = Record<string, unknown>;

export const Provider = defineEntity({
  name: 'Provider',
  tableName: 'providers',
  properties: {
    id: p.string().primary(),
    user_id: p.string(),
    kind: p.string(),
    name: p.string(),
    config: p.json<Json>(),
    enabled: p.boolean(),
    webhook_token: p.string().unique(),
    status: p.string(),
    status_detail: p.string().nullable(),
    poll_failure_threshold: p.integer(),
    deferred_backlog_threshold: p.integer(),
    target_failure_threshold: p.integer(),
    track_poll_failures: p.boolean(),
    track_deferred_backlog: p.boolean(),
    track_target_failures: p.boolean(),
    backlog_latched: p.boolean(),
    created_at: p.string(),
    updated_at: p.string(),
  },
});

export const Tracker = defineEntity({
  name: 'Tracker',
  tableName: 'trackers',
  properties: {
    id: p.string().primary(),
    user_id: p.string(),
    provider_id: p.string(),
    name: p.string(),
    enabled: p.boolean(),
    event_types: p.json<Record<string, boolean>>(),
    quiet_hours: p.json<{ start: string; end: string; timezone: string } | null>().nullable(),
    quiet_policies: p.json<Record<string, 'defer' | 'send' | 'drop'>>(),
    config: p.json<Json>(),
    consecutive_poll_failures: p.integer(),
    last_poll_at: p.string().nullable(),
    last_poll_error: p.string().nullable(),
    created_at: p.string(),
    updated_at: p.string(),
  },
});

export const Target = defineEntity({
  name: 'Target',
  tableName: 'targets',
  properties: {
    id: p.string().primary(),
    user_id: p.string(),
    kind: p.string(),
    name: p.string(),
    config: p.json<Json>(),
    locale: p.string(),
    enabled: p.boolean(),
    consecutive_failures: p.integer(),
    last_error: p.string().nullable(),
    created_at: p.string(),
    updated_at: p.string(),
  },
});

export const TrackerTarget = defineEntity({
  name: 'TrackerTarget',
  tableName: 'tracker_targets',
  properties: {
    tracker_id: p.string().primary(),
    target_id: p.string().primary(),
    user_id: p.string(),
    created_at: p.string(),
  },
});

export const Bot = defineEntity({
  name: 'Bot',
  tableName: 'bots',
  properties: {
    id: p.string().primary(),
    user_id: p.string(),
    kind: p.string(),
    name: p.string(),
    token: p.string(),
    bot_id: p.string().nullable(),
    username: p.string().nullable(),
    mode: p.string(),
    webhook_path_id: p.string().unique(),
    api_root: p.string().nullable(),
    /**
     * What the bot service was last given to prove webhook deliveries: null, `shared` (before per-bot secrets) or the
     * key fingerprint.
     */
    webhook_key_id: p.string().nullable(),
    update_offset: p.integer(),
    status: p.string(),
    status_detail: p.string().nullable(),
    created_at: p.string(),
    updated_at: p.string(),
  },
});

export const BotChat = defineEntity({
  name: 'BotChat',
  tableName: 'bot_chats',
  properties: {
    id: p.string().primary(),
    bot_id: p.string(),
    user_id: p.string(),
    chat_id: p.string(),
    type: p.string(),
    title: p.string().nullable(),
    username: p.string().nullable(),
    is_forum: p.boolean(),
    registered: p.boolean(),
    last_seen_at: p.string(),
    created_at: p.string(),
  },
});

export const Action = defineEntity({
  name: 'Action',
  tableName: 'actions',
  properties: {
    id: p.string().primary(),
    user_id: p.string(),
    name: p.string(),
    kind: p.string(),
    schedule: p.string(),
    timezone: p.string(),
    config: p.json<Json>(),
    enabled: p.boolean(),
    last_run_at: p.string().nullable(),
    last_status: p.string().nullable(),
    last_error: p.string().nullable(),
    next_run_at: p.string().nullable(),
    created_at: p.string(),
    updated_at: p.string(),
  },
});

export const Template = defineEntity({
  name: 'Template',
  tableName: 'templates',
  properties: {
    id: p.string().primary(),
    user_id: p.string(),
    event_type: p.string(),
    locale: p.string(),
    title: p.string(),
    body: p.string(),
    created_at: p.string(),
    updated_at: p.string(),
  },
});
