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

export const BotView = Type.Object({
  id: Uuid,
  /** The target kind whose driver runs it (`telegram`, ...). */
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
