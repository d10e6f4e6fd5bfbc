import { defineEntity, p } from '@mikro-orm/core';

export const User = defineEntity({
  name: 'User',
  tableName: 'users',
  properties: {
    id: p.string().primary(),
    email: p.string().unique(),
    password_hash: p.string().hidden(),
    role: p.string(),
    is_active: p.boolean(),
    locale: p.string(),
    max_chats: p.integer(),
    max_ai_messages_per_day: p.integer().nullable(),
    max_ai_tokens_per_day: p.integer().nullable(),
    /** The user's own storage limit in MB; null follows SERVICE_USER_STORAGE_MB. */
    max_storage_mb: p.integer().nullable(),
    /** Raised to revoke every access token issued before (auth/revocation.ts). */
    token_version: p.integer().default(0).hidden(),
    created_at: p.string(),
    updated_at: p.string(),
  },
});

export const Setting = defineEntity({
  name: 'Setting',
  tableName: 'settings',
  properties: {
    key: p.string().primary(),
    value: p.string(),
    updated_at: p.string(),
  },
});
