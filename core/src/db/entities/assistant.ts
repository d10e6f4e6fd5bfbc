import { defineEntity, p } from '@mikro-orm/core';

/** A prompt a chat can be bound to: general (admin-managed, owner_id null) or personal. */
export const Skill = defineEntity({
  name: 'Skill',
  tableName: 'skills',
  properties: {
    id: p.string().primary(),
    owner_id: p.string().nullable(),
    scope: p.string(),
    name: p.string(),
    description: p.string().nullable(),
    prompt: p.text(),
    created_at: p.string(),
    updated_at: p.string(),
  },
});

export const Chat = defineEntity({
  name: 'Chat',
  tableName: 'chats',
  properties: {
    id: p.string().primary(),
    user_id: p.string(),
    title: p.string(),
    is_archived: p.boolean(),
    skill_id: p.string().nullable(),
    model: p.string().nullable(),
    created_at: p.string(),
    updated_at: p.string(),
  },
});

/** One chat message; assistant messages carry usage, status and the primary-context version used. */
export const ChatMessage = defineEntity({
  name: 'ChatMessage',
  tableName: 'chat_messages',
  properties: {
    id: p.string().primary(),
    chat_id: p.string(),
    user_id: p.string(),
    role: p.string(),
    content: p.text(),
    status: p.string(),
    prompt_tokens: p.integer().nullable(),
    completion_tokens: p.integer().nullable(),
    total_tokens: p.integer().nullable(),
    usage_estimated: p.boolean(),
    context_version: p.integer().nullable(),
    error: p.string().nullable(),
    parent_id: p.string().nullable(),
    active: p.boolean(),
    model: p.string().nullable(),
    attachments: p.text().nullable(),
    shown_at: p.string().nullable(),
    created_at: p.string(),
  },
});

/** The single primary context row (id 1); version grows on each update. */
export const PrimaryContext = defineEntity({
  name: 'PrimaryContext',
  tableName: 'primary_context',
  properties: {
    id: p.integer().primary(),
    content: p.text(),
    version: p.integer(),
    updated_by: p.string().nullable(),
    updated_at: p.string(),
  },
});

export const PersonalContext = defineEntity({
  name: 'PersonalContext',
  tableName: 'personal_contexts',
  properties: {
    user_id: p.string().primary(),
    content: p.text(),
    updated_at: p.string(),
  },
});

/** Per-user, per-day, per-model AI usage, for the admin usage view. */
export const AiUsageModel = defineEntity({
  name: 'AiUsageModel',
  tableName: 'ai_usage_models',
  properties: {
    user_id: p.string().primary(),
    day: p.string().primary(),
    model: p.string().primary(),
    messages: p.integer(),
    tokens: p.integer(),
    updated_at: p.string(),
  },
});

/** Per-user, per-day AI usage: the one record both quota enforcement and the admin view read. */
export const AiUsageDaily = defineEntity({
  name: 'AiUsageDaily',
  tableName: 'ai_usage_daily',
  properties: {
    user_id: p.string().primary(),
    day: p.string().primary(),
    messages: p.integer(),
    tokens: p.integer(),
    updated_at: p.string(),
  },
});

export const MemoryEntry = defineEntity({
  name: 'MemoryEntry',
  tableName: 'memory_entries',
  properties: {
    id: p.string().primary(),
    user_id: p.string(),
    content: p.text(),
    category: p.string().nullable(),
    recorded_at: p.string().nullable(),
    search_text: p.text().hidden(),
    created_at: p.string(),
    updated_at: p.string(),
  },
});

export const UserDocument = defineEntity({
  name: 'UserDocument',
  tableName: 'documents',
  properties: {
    id: p.string().primary(),
    user_id: p.string(),
    filename: p.string(),
    media_type: p.string(),
    size_bytes: p.integer(),
    content: p.text(),
    search_text: p.text().hidden(),
    created_at: p.string(),
  },
});

/** A generated PDF; the file lives at <dataDir>/reports/<user_id>/<id>.pdf and its path is never exposed. */
export const HealthReport = defineEntity({
  name: 'HealthReport',
  tableName: 'reports',
  properties: {
    id: p.string().primary(),
    user_id: p.string(),
    title: p.string(),
    locale: p.string(),
    size_bytes: p.integer(),
    created_at: p.string(),
  },
});

export const assistantEntities = [
  Skill,
  Chat,
  ChatMessage,
  PrimaryContext,
  PersonalContext,
  AiUsageDaily,
  AiUsageModel,
  MemoryEntry,
  UserDocument,
  HealthReport,
];
