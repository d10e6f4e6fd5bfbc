/**
 * The Telegram target instance: renders title and body into Bot API HTML, splits what is longer
 * than one message and sends the parts in order through the bot the target is linked to.
 */

import type {
  FollowUpRequest,
  OutboundMessage,
  SendOptions,
  SendResult,
  TargetContext,
  TargetInstance,
} from '@herald/plugin-api';
import { ConfigError, NOT_SUPPORTED, PermanentSendError } from '@herald/plugin-api';
import type { TelegramTargetConfig } from './config.ts';
import { splitHtml } from './html-split.ts';
import { call, createApi, grammySignal } from './telegram-api.ts';

/** Longest text the Bot API accepts in one message, counted after entity parsing. */
export const MAX_MESSAGE_LENGTH = 4096;
/** How long the parts already sent of a delivery are remembered, so a retry does not repeat them. */
const PROGRESS_TTL_SECONDS = 24 * 3600;

const escapeHtml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** The whole message as Bot API HTML: the title in bold on its own line, then the body. */
export function composeHtml(message: Pick<OutboundMessage, 'format' | 'title' | 'body'>): string {
  // The core renders HTML for us (our only declared format); anything else is treated as plain text.
  const asHtml = (s: string) => (message.format === 'html' ? s : escapeHtml(s));
  const title = message.title.trim() ? `<b>${asHtml(message.title.trim())}</b>` : '';
  const body = asHtml(message.body);
  return title && body.trim() ? `${title}\n${body}` : title || body;
}

interface Progress {
  sent: number;
  ids: number[];
}

/** Where a sent message lives: what `editMessageText` and a reply need. */
interface TelegramRef {
  chat_id: string;
  message_id: number;
}

const refOf = (r: FollowUpRequest): TelegramRef | undefined => {
  const ref = r.previous.messageRef as Partial<TelegramRef>;
  return typeof ref.chat_id === 'string' && typeof ref.message_id === 'number'
    ? { chat_id: ref.chat_id, message_id: ref.message_id }
    : undefined;
};

export function createTelegramTarget(ctx: TargetContext<TelegramTargetConfig>): TargetInstance {
  const cfg = ctx.config;
  const bot = () => {
    if (!ctx.bot?.token) throw new ConfigError(`the Telegram bot ${cfg.bot_id} of this target was not found`);
    return ctx.bot;
  };
  let api: Awaited<ReturnType<typeof createApi>> | undefined;

  return {
    start() {
      bot();
    },

    send: (message, options) => sendParts(message, options),

    /**
     * Edits the earlier message in place (`editMessageText`). A new text that needs more than one
     * message is not edited in (NOT_SUPPORTED: the core replies instead), nor is a message sent to
     * another chat than the one configured now. "Message is not modified" (a retry after the edit
     * went through) counts as done; "message to edit not found" (deleted) is permanent, so the core
     * replies instead.
     */
    async update(request: FollowUpRequest, options: SendOptions): Promise<SendResult | typeof NOT_SUPPORTED> {
      const ref = refOf(request);
      if (!ref || ref.chat_id !== cfg.chat_id) return NOT_SUPPORTED;
      const parts = splitHtml(composeHtml(request.message), MAX_MESSAGE_LENGTH);
      if (parts.length !== 1) return NOT_SUPPORTED;
      const { token } = bot();
      api ??= await call(token, () => createApi(token, ctx.http, { apiRoot: ctx.bot?.apiRoot ?? cfg.api_root }));
      try {
        await call(token, () =>
          api!.editMessageText(
            cfg.chat_id,
            ref.message_id,
            parts[0]!,
            {
              parse_mode: 'HTML',
              ...(cfg.disable_link_preview ? { link_preview_options: { is_disabled: true } } : {}),
            },
            grammySignal(options.signal),
          ),
        );
      } catch (err) {
        if (err instanceof PermanentSendError && /message is not modified/i.test(err.message))
          return { remoteId: String(ref.message_id), detail: 'already up to date' };
        throw err;
      }
      return { remoteId: String(ref.message_id), messageRef: { ...ref } };
    },

    /**
     * Sends the message as a reply to the earlier one (in its chat and topic); long ones in parts, the first replying.
     */
    async reply(request: FollowUpRequest, options: SendOptions): Promise<SendResult | typeof NOT_SUPPORTED> {
      const ref = refOf(request);
      if (!ref || ref.chat_id !== cfg.chat_id) return NOT_SUPPORTED;
      // Should the earlier message be gone as well, the reply still goes out (unthreaded).
      return sendParts(request.message, options, { message_id: ref.message_id, allow_sending_without_reply: true });
    },

    stop() {
      api = undefined;
    },
  };

  async function sendParts(
    message: OutboundMessage,
    options: SendOptions,
    replyTo?: { message_id: number; allow_sending_without_reply: boolean },
  ): Promise<SendResult> {
    const { token } = bot();
    // grammY loads on the first send; a failure to load it is reported like any other send failure.
    api ??= await call(token, () => createApi(token, ctx.http, { apiRoot: ctx.bot?.apiRoot ?? cfg.api_root }));
    const parts = splitHtml(composeHtml(message), MAX_MESSAGE_LENGTH);
    const key = `parts:${message.deliveryId}`;
    const progress = (await ctx.store.get<Progress>(key)) ?? { sent: 0, ids: [] };
    for (let i = progress.sent; i < parts.length; i++) {
      const sent = await call(token, () =>
        api!.sendMessage(
          cfg.chat_id,
          parts[i],
          {
            parse_mode: 'HTML',
            ...(cfg.message_thread_id ? { message_thread_id: cfg.message_thread_id } : {}),
            ...(cfg.silent ? { disable_notification: true } : {}),
            ...(cfg.disable_link_preview ? { link_preview_options: { is_disabled: true } } : {}),
            ...(replyTo && i === 0 ? { reply_parameters: replyTo } : {}),
          },
          grammySignal(options.signal),
        ),
      );
      progress.sent = i + 1;
      progress.ids.push(sent.message_id);
      // Remember each part as it goes: if a later one fails, the retry resumes after it.
      if (parts.length > 1) await ctx.store.set(key, progress, { ttlSeconds: PROGRESS_TTL_SECONDS });
    }
    if (parts.length > 1) await ctx.store.delete(key);
    const first = progress.ids[0];
    return {
      remoteId: progress.ids.join(','),
      detail: parts.length > 1 ? `sent in ${parts.length} parts` : undefined,
      // Later events of the same thing edit the first part (see update).
      ...(first !== undefined ? { messageRef: { chat_id: cfg.chat_id, message_id: first } } : {}),
    };
  }
}
