/**
 * The messaging bot, defined once: what a user sets (`BOT_SETTINGS`), who the bot is at the
 * messaging service (`BOT_IDENTITY`, its answer to the token), the create and change bodies, the
 * bot as the API shows it (`GET /api/bots`, `GET, PATCH /api/bots/{id}`), the chats it has seen
 * (`GET /api/bots/{id}/chats`), the `bots` and `bot_chats` rows, and what a backup record carries
 * of both (`BOT_BACKUP_FIELDS`, `BOT_CHAT_BACKUP_FIELDS`): the backup's schema, export and restore derive
 * from here. Its token is never shown back; a backup carries it sealed or leaves it out.
 */
import Type, { type Static } from 'typebox';
import { Database as Db } from '../../db/database.ts';
import { Uuid } from '../../http/schemas.ts';
import { NameSchema } from '../vocabulary.ts';
import { addedLater, Nullable, optional, Time } from './common.ts';

/** How a bot receives its updates. */
export const BotModeSchema = Type.Union([Type.Literal('polling'), Type.Literal('webhook')]);
export type BotMode = Static<typeof BotModeSchema>;
/** The bot's token at the messaging service (never shown back). */
export const BotTokenSchema = Type.String({ minLength: 1, maxLength: 256 });
/**
 * The token as a backup carries it: up to 256 characters in clear; sealed (`enc:v1:`, as include
 * backups carry it) it grows by about a third.
 */
export const BotBackupTokenSchema = Type.String({ minLength: 1, maxLength: 1024 });
/** The bot's own API server (e.g. a self-hosted one); null or absent: the driver's default. */
export const BotApiRootSchema = Type.Union([
  Type.String({ pattern: '^https?://[^\\s]+$', maxLength: 500 }),
  Type.Null(),
]);

/** What a user sets on a bot, besides its token, its kind (at creation) and its API root. */
export const BOT_SETTINGS = {
  name: NameSchema,
  mode: BotModeSchema,
};
/** Who the bot is at the messaging service: what it answers about the token, stored beside the settings. */
export const BOT_IDENTITY = {
  /** The bot's id at the messaging service. */
  bot_id: Nullable(Type.String({ maxLength: 64 })),
  username: Nullable(Type.String({ maxLength: 64 })),
};
/**
 * What a backup record carries of a bot besides its ids, kind, times and secrets (the token, the
 * webhook path): every setting and its identity, except those added after the backup format was
 * fixed, which a backup written before them lacks (a new setting goes in the list below as well,
 * with a value for the restore to give it). The API root is not carried: a restored bot keeps its
 * own, a new one has none.
 */
const ADDED_LATER = [] as const;
export const BOT_BACKUP_FIELDS = addedLater({ ...BOT_SETTINGS, ...BOT_IDENTITY }, ADDED_LATER);
export type BotBackupFields = { [K in keyof typeof BOT_BACKUP_FIELDS]: Static<(typeof BOT_BACKUP_FIELDS)[K]> };

/** A `bots` row as stored (the token sealed, booleans and numbers as the backend's). */
export type BotDbRow = {
  id: string;
  user_id: string;
  kind: string;
  name: string;
  token: string;
  bot_id: string | null;
  username: string | null;
  mode: BotMode;
  webhook_path_id: string;
  api_root: string | null;
  webhook_key_id: string | null;
  update_offset: number | string;
  status: string;
  status_detail: string | null;
  created_at: string;
  updated_at: string;
};

/** A `bots` row's settings and identity, read back. */
export function botFieldsOf(row: BotDbRow): BotBackupFields {
  return { name: row.name, mode: row.mode, bot_id: row.bot_id ?? null, username: row.username ?? null };
}

/** The create body: the kind is the only bot kind this service runs unless named. */
export const BotCreateBody = Type.Object(
  {
    ...BOT_SETTINGS,
    token: BotTokenSchema,
    kind: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    api_root: Type.Optional(BotApiRootSchema),
  },
  { additionalProperties: false },
);
/** The change body: what is left out keeps its value. */
export const BotPatchBody = Type.Object(
  optional({ ...BOT_SETTINGS, token: BotTokenSchema, api_root: BotApiRootSchema }),
  { additionalProperties: false },
);

export const BotView = Type.Object({
  id: Uuid,
  /** The target kind whose driver runs it (a messaging-bot target plugin's id). */
  kind: Type.String(),
  ...BOT_SETTINGS,
  /** Always the mask `********`. */
  token: Type.String(),
  ...BOT_IDENTITY,
  /** Another API root than the service's own (a login in it masked). */
  api_root: Nullable(Type.String()),
  status: Type.String(),
  status_detail: Nullable(Type.String()),
  created_at: Time,
  updated_at: Time,
});
export const BotList = Type.Object({ bots: Type.Array(BotView) });

/** A chat as the bot saw it (the messaging service's values), as the API shows it and a backup carries it. */
export const BOT_CHAT_FIELDS = {
  chat_id: Type.String({ minLength: 1, maxLength: 64 }),
  type: Type.String({ minLength: 1, maxLength: 32 }),
  title: Nullable(Type.String({ maxLength: 256 })),
  username: Nullable(Type.String({ maxLength: 64 })),
  is_forum: Type.Boolean(),
  /** Someone sent /start in it. */
  registered: Type.Boolean(),
};
export type BotChatFields = { [K in keyof typeof BOT_CHAT_FIELDS]: Static<(typeof BOT_CHAT_FIELDS)[K]> };
/** The chat's fields in a backup record; one added later goes in the list (a backup written before lacks it). */
const CHAT_ADDED_LATER = [] as const;
export const BOT_CHAT_BACKUP_FIELDS = addedLater(BOT_CHAT_FIELDS, CHAT_ADDED_LATER);

/** A `bot_chats` row as stored (booleans as the backend's). */
export type BotChatDbRow = {
  id: string;
  bot_id: string;
  user_id: string;
  chat_id: string;
  type: string;
  title: string | null;
  username: string | null;
  is_forum: unknown;
  registered: unknown;
  last_seen_at: string;
  created_at: string;
};

/** A `bot_chats` row's fields, read back. */
export function botChatFieldsOf(row: BotChatDbRow): BotChatFields {
  return {
    chat_id: String(row.chat_id),
    type: row.type,
    title: row.title ?? null,
    username: row.username ?? null,
    is_forum: Db.bool(row.is_forum),
    registered: Db.bool(row.registered),
  };
}

/** A chat a bot has seen; `registered` once someone sent /start in it. */
export const BotChatView = Type.Object({ id: Uuid, ...BOT_CHAT_FIELDS, last_seen_at: Time, created_at: Time });
export const BotChatList = Type.Object({ chats: Type.Array(BotChatView) });
