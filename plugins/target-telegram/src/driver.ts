/**
 * The Telegram messaging-bot driver: the core owns bot records, the inbound webhook route and
 * polling loops; this speaks the Bot API for them: the webhook secret header, getUpdates and its
 * offset (the last `update_id` plus one), and reading updates into the core's shape.
 */
import {
  type BotDriverContext,
  type BotWebhookRequest,
  type MessagingBotDriver,
  type ParsedUpdate,
  type SeenChat,
  safeEqual,
} from '@herald/plugin-api';
import { call, createApi, DEFAULT_API_ROOT, grammySignal } from './telegram-api.ts';

/** The header in which Telegram repeats the `secret_token` given to setWebhook on every delivery. */
export const SECRET_HEADER = 'x-telegram-bot-api-secret-token';

/** Update kinds the bot needs: commands and chat discovery. */
export const ALLOWED_UPDATES = ['message', 'channel_post', 'my_chat_member'] as const;

export interface DriverOptions {
  /** Bot API server; default https://api.telegram.org. */
  apiRoot?: string;
}

interface TgChat {
  id: number;
  type: string;
  title?: string;
  username?: string;
  first_name?: string;
  last_name?: string;
  is_forum?: boolean;
}
interface TgMessage {
  chat?: TgChat;
  text?: string;
  caption?: string;
  message_thread_id?: number;
  is_topic_message?: boolean;
}

/** Cuts a plain-text reply to the Bot API's 4096 characters without splitting a surrogate pair. */
export function clipText(text: string, max = 4096): string {
  if (text.length <= max) return text;
  let cut = max - 1;
  if (/[\uD800-\uDBFF]/.test(text[cut - 1])) cut--;
  return `${text.slice(0, cut)}…`;
}

/** `/start@MyBot arg` → `start`; undefined when the text is not a command. */
export function commandOf(text: string | undefined): string | undefined {
  const m = text ? /^\/([A-Za-z0-9_]{1,64})(?:@[A-Za-z0-9_]+)?(?:\s|$)/.exec(text) : null;
  return m ? m[1].toLowerCase() : undefined;
}

function seenChat(chat: TgChat, msg?: TgMessage): SeenChat {
  const name = [chat.first_name, chat.last_name].filter(Boolean).join(' ');
  return {
    chatId: String(chat.id),
    type: chat.type,
    title: chat.title ?? (name || undefined),
    username: chat.username,
    // Only topic messages carry a usable thread; replies elsewhere may have an id a send would refuse.
    threadId: msg?.is_topic_message && msg.message_thread_id ? msg.message_thread_id : undefined,
    isForum: chat.is_forum ?? undefined,
  };
}

/** Reads an Update object; null when it is not one or carries nothing the core uses. */
export function parseUpdate(update: unknown): ParsedUpdate | null {
  if (!update || typeof update !== 'object') return null;
  const u = update as Record<string, unknown>;
  if (typeof u.update_id !== 'number') return null;
  const msg = (u.message ?? u.edited_message ?? u.channel_post ?? u.edited_channel_post) as TgMessage | undefined;
  if (msg?.chat && typeof msg.chat.id === 'number') {
    const text = msg.text ?? msg.caption;
    return { updateId: u.update_id, chat: seenChat(msg.chat, msg), text, command: commandOf(msg.text) };
  }
  const member = u.my_chat_member as { chat?: TgChat } | undefined;
  if (member?.chat && typeof member.chat.id === 'number') return { updateId: u.update_id, chat: seenChat(member.chat) };
  return { updateId: u.update_id };
}

/** A webhook delivery is Telegram's when it carries the secret given to setWebhook (compared in constant time). */
export function verifyWebhook(req: BotWebhookRequest, secret: string): boolean {
  const given = req.headers[SECRET_HEADER];
  return typeof given === 'string' && secret !== '' && safeEqual(given, secret);
}

/** getUpdates confirms every update below its `offset`: the next offset is the last `update_id` plus one. */
export function nextOffset(update: unknown, offset: number): number {
  const id = (update as { update_id?: unknown } | null)?.update_id;
  return typeof id === 'number' && Number.isSafeInteger(id) && id >= offset ? id + 1 : offset;
}

/** Builds the driver; tests and self-hosted Bot API servers pass their own `apiRoot`. */
export function createTelegramBotDriver(opts: DriverOptions = {}): MessagingBotDriver {
  const apiRoot = opts.apiRoot ?? DEFAULT_API_ROOT;
  const api = (ctx: BotDriverContext, token: string, timeoutMs?: number) =>
    createApi(token, ctx.http, { apiRoot: ctx.apiRoot ?? apiRoot, timeoutMs });
  return {
    async getMe(ctx, token, signal) {
      const me = await call(token, async () => (await api(ctx, token)).getMe(grammySignal(signal)));
      return { botId: String(me.id), username: me.username };
    },
    async setWebhook(ctx, token, url, secretToken, signal) {
      await call(token, async () =>
        (await api(ctx, token)).setWebhook(
          url,
          { secret_token: secretToken, allowed_updates: [...ALLOWED_UPDATES] },
          grammySignal(signal),
        ),
      );
    },
    async deleteWebhook(ctx, token, signal) {
      await call(token, async () => (await api(ctx, token)).deleteWebhook({}, grammySignal(signal)));
    },
    async getUpdates(ctx, token, offset, timeoutSeconds, signal) {
      // Long polling holds the request open for timeoutSeconds; allow that plus a margin.
      const timeoutMs = (Math.max(0, timeoutSeconds) + 10) * 1000;
      return call(token, async () =>
        (await api(ctx, token, timeoutMs)).getUpdates(
          { offset, timeout: Math.max(0, timeoutSeconds), allowed_updates: [...ALLOWED_UPDATES] },
          grammySignal(signal),
        ),
      );
    },
    verifyWebhook,
    nextOffset,
    parseUpdate,
    async reply(ctx, token, chat, text, signal) {
      await call(token, async () =>
        (await api(ctx, token)).sendMessage(
          chat.chatId,
          clipText(text),
          chat.threadId ? { message_thread_id: chat.threadId } : {},
          grammySignal(signal),
        ),
      );
    },
  };
}
