/**
 * The Telegram target instance: renders title and body into Bot API HTML, splits what is longer
 * than one message and sends the parts in order through the bot the target is linked to.
 */
import { ConfigError } from '@herald/plugin-api';
import type { OutboundMessage, SendOptions, SendResult, TargetContext, TargetInstance } from '@herald/plugin-api';
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

interface Progress { sent: number; ids: number[] }

export function createTelegramTarget(ctx: TargetContext<TelegramTargetConfig>): TargetInstance {
  const cfg = ctx.config;
  const bot = () => {
    if (!ctx.bot?.token) throw new ConfigError(`the Telegram bot ${cfg.bot_id} of this target was not found`);
    return ctx.bot;
  };
  let api: Awaited<ReturnType<typeof createApi>> | undefined;

  return {
    start() { bot(); },

    async send(message: OutboundMessage, options: SendOptions): Promise<SendResult> {
      const { token } = bot();
      // grammY loads on the first send; a failure to load it is reported like any other send failure.
      api ??= await call(token, () => createApi(token, ctx.http, { apiRoot: ctx.bot?.apiRoot ?? cfg.api_root }));
      const parts = splitHtml(composeHtml(message), MAX_MESSAGE_LENGTH);
      const key = `parts:${message.deliveryId}`;
      const progress = (await ctx.store.get<Progress>(key)) ?? { sent: 0, ids: [] };
      for (let i = progress.sent; i < parts.length; i++) {
        const sent = await call(token, () => api!.sendMessage(cfg.chat_id, parts[i], {
          parse_mode: 'HTML',
          ...(cfg.message_thread_id ? { message_thread_id: cfg.message_thread_id } : {}),
          ...(cfg.silent ? { disable_notification: true } : {}),
          ...(cfg.disable_link_preview ? { link_preview_options: { is_disabled: true } } : {}),
        }, grammySignal(options.signal)));
        progress.sent = i + 1;
        progress.ids.push(sent.message_id);
        // Remember each part as it goes: if a later one fails, the retry resumes after it.
        if (parts.length > 1) await ctx.store.set(key, progress, { ttlSeconds: PROGRESS_TTL_SECONDS });
      }
      if (parts.length > 1) await ctx.store.delete(key);
      return { remoteId: progress.ids.join(','), detail: parts.length > 1 ? `sent in ${parts.length} parts` : undefined };
    },

    stop() { api = undefined; },
  };
}
