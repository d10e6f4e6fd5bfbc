/**
 * The AI use a user's daily limits count (`GET /api/v1/chats/quota`) and an administrator's view of
 * one day (`GET /api/v1/admin/usage`); quotas.ts.
 */
import Type, { type Static } from 'typebox';

export const QuotaView = Type.Object({
  messages_used: Type.Integer(),
  tokens_used: Type.Integer(),
  message_limit: Type.Integer(),
  token_limit: Type.Integer(),
  messages_exceeded: Type.Boolean(),
  tokens_exceeded: Type.Boolean(),
  resets_at: Type.String({ format: 'date-time' }),
});

export const AdminUsageView = Type.Object({
  date: Type.String(),
  users: Type.Array(
    Type.Object({ user_id: Type.String(), email: Type.String(), messages: Type.Integer(), tokens: Type.Integer() }),
  ),
  /** The day's replies and tokens per model, over all users. */
  models: Type.Array(Type.Object({ model: Type.String(), messages: Type.Integer(), tokens: Type.Integer() })),
});
export type Quota = Static<typeof QuotaView>;
export type AdminUsage = Static<typeof AdminUsageView>;
