/**
 * The messaging bot as the API shows it (`GET /api/bots`, `GET, PATCH /api/bots/{id}`) and the chats
 * it has seen (`GET /api/bots/{id}/chats`). Its token is never shown back.
 */
import Type from 'typebox';
import { Uuid } from '../../http/schemas.ts';
import { NameSchema } from '../vocabulary.ts';
import { Nullable, Time } from './common.ts';

/** How a bot receives its updates. */
export const BotModeSchema = Type.Union([Type.Literal('polling'), Type.Literal('webhook')]);
/** The bot's token at the messaging service (never shown back). */
export const BotTokenSchema = Type.String({ minLength: 1, maxLength: 256 });
/** The bot's own API server (e.g. a self-hosted one); null or absent: the driver's default. */
export const BotApiRootSchema = Type.Union([
  Type.String({ pattern: '^https?://[^\\s]+$', maxLength: 500 }),
  Type.Null(),
]);

/** The create body: the kind is the only bot kind this service runs unless named. */
export const BotCreateBody = Type.Object(
  {
    name: NameSchema,
    token: BotTokenSchema,
    mode: BotModeSchema,
    kind: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    api_root: Type.Optional(BotApiRootSchema),
  },
  { additionalProperties: false },
);
/** The change body: what is left out keeps its value. */
export const BotPatchBody = Type.Object(
  {
    name: Type.Optional(NameSchema),
    token: Type.Optional(BotTokenSchema),
    mode: Type.Optional(BotModeSchema),
    api_root: Type.Optional(BotApiRootSchema),
  },
  { additionalProperties: false },
);

export const BotView = Type.Object({
  id: Uuid,
  /** The target kind whose driver runs it (a messaging-bot target plugin's id). */
  kind: Type.String(),
  name: NameSchema,
  /** Always the mask `********`. */
  token: Type.String(),
  /** The bot's id at the messaging service. */
  bot_id: Nullable(Type.String()),
  username: Nullable(Type.String()),
  mode: BotModeSchema,
  /** Another API root than the service's own (a login in it masked). */
  api_root: Nullable(Type.String()),
  status: Type.String(),
  status_detail: Nullable(Type.String()),
  created_at: Time,
  updated_at: Time,
});
export const BotList = Type.Object({ bots: Type.Array(BotView) });

/** A chat a bot has seen; `registered` once someone sent /start in it. */
export const BotChatView = Type.Object({
  id: Uuid,
  chat_id: Type.String(),
  type: Type.String(),
  title: Nullable(Type.String()),
  username: Nullable(Type.String()),
  is_forum: Type.Boolean(),
  registered: Type.Boolean(),
  last_seen_at: Time,
  created_at: Time,
});
export const BotChatList = Type.Object({ chats: Type.Array(BotChatView) });
