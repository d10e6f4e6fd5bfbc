/**
 * @herald/target-google-chat: posts notifications to a Google Chat space through its incoming
 * webhook (`spaces.messages.create`). Each notification starts a thread; later states of the same
 * thing are posted into that thread. One instance is one webhook URL.
 */

import type {
  MessageRef,
  OutboundMessage,
  OutboundResponse,
  SendResult,
  TargetContext,
  TargetInstance,
} from '@herald/plugin-api';
import { defineTarget, NOT_SUPPORTED, PLUGIN_API_VERSION } from '@herald/plugin-api';
import enLocale from '../locales/en.json' with { type: 'json' };
import ruLocale from '../locales/ru.json' with { type: 'json' };
import type { GoogleChatConfig } from './config.ts';
import { configSchema, MANAGED_PARAMS, validateGoogleChatConfig } from './config.ts';
import { failureFor, transportFailure } from './responses.ts';
import { words } from './strings.ts';
import { buildText, MAX_TEXT, MAX_TITLE } from './text.ts';

export type { GoogleChatConfig } from './config.ts';
export { configSchema, validateGoogleChatConfig } from './config.ts';
export { buildText, escapeChat, MAX_TEXT, MAX_TITLE } from './text.ts';

/** Replies land in the named thread, or start it when it does not exist (yet, or any more). */
export const REPLY_OPTION = 'REPLY_MESSAGE_FALLBACK_TO_NEW_THREAD';

/** The thread a delivery starts: one per notification, named after the delivery. */
export const threadKeyFor = (deliveryId: string) => `herald-${deliveryId}`;

interface ChatMessage {
  name?: unknown;
  thread?: { name?: unknown; threadKey?: unknown };
}

/** Creates the target instance for one webhook. */
export function createGoogleChatTarget(ctx: TargetContext<GoogleChatConfig>): TargetInstance {
  const cfg = ctx.config;

  function endpoint(deliveryId: string): string {
    const url = new URL(cfg.url);
    for (const p of MANAGED_PARAMS) url.searchParams.delete(p);
    url.searchParams.set('messageReplyOption', REPLY_OPTION);
    // Google returns the message already created with this request id instead of creating another:
    // a retry after a lost answer does not post twice.
    url.searchParams.set('requestId', deliveryId);
    return url.href;
  }

  async function post(
    message: OutboundMessage,
    thread: { threadKey: string } | { name: string },
    signal: AbortSignal,
  ): Promise<SendResult> {
    const built = buildText(message);
    let res: OutboundResponse;
    try {
      // Redirects are refused: the URL's token would follow the POST to wherever it points.
      res = await ctx.http.request(endpoint(message.deliveryId), {
        method: 'POST',
        json: { text: built.text, thread },
        signal,
        maxRedirects: 0,
        maxResponseBytes: 256 * 1024,
      });
    } catch (err) {
      throw transportFailure(message.locale, err);
    }
    if (res.status < 200 || res.status >= 300) throw failureFor(message.locale, res, ctx.clock.now());
    if (built.cut)
      ctx.log.warn({ deliveryId: message.deliveryId, cut: built.cut }, 'message cut to fit the Google Chat limit');
    let created: ChatMessage = {};
    try {
      created = res.json<ChatMessage>() ?? {};
    } catch {
      /* posted, but no message came back */
    }
    const name = typeof created.name === 'string' ? created.name : undefined;
    const threadName = typeof created.thread?.name === 'string' ? created.thread.name : undefined;
    const ref: MessageRef = {
      ...('threadKey' in thread ? { thread_key: thread.threadKey } : {}),
      ...(threadName ? { thread_name: threadName } : {}),
      ...(name ? { message: name } : {}),
    };
    return { remoteId: name, detail: built.cut ? words(message.locale).cut(built.cut) : undefined, messageRef: ref };
  }

  return {
    /** A new thread, keyed by this delivery. */
    send: (message, { signal }) => post(message, { threadKey: threadKeyFor(message.deliveryId) }, signal),
    /** A webhook cannot edit what it posted. */
    async update() {
      return NOT_SUPPORTED;
    },
    /** Posts into the earlier message's thread: by its key (how webhooks address threads), else by its name. */
    async reply({ previous, message }, { signal }) {
      const ref = previous.messageRef;
      if (typeof ref.thread_key === 'string' && ref.thread_key)
        return post(message, { threadKey: ref.thread_key }, signal);
      if (typeof ref.thread_name === 'string' && ref.thread_name)
        return post(message, { name: ref.thread_name }, signal);
      return NOT_SUPPORTED;
    },
  };
}

export default defineTarget({
  manifest: {
    id: 'google_chat',
    kind: 'target',
    apiVersion: PLUGIN_API_VERSION,
    displayName: 'Google Chat (space webhook)',
    description:
      'Posts notifications to a Google Chat space through its incoming webhook, one thread per notification.',
    locales: { en: enLocale, ru: ruLocale },
    configSchema,
    // Plain text in, made literal in Chat's markup here; the text is cut to 4,096 characters with
    // the title and link. Google Chat takes about one webhook message a second per space, and one
    // at a time keeps a thread's messages in event order.
    limits: {
      maxMessageLength: MAX_TEXT,
      maxTitleLength: MAX_TITLE,
      formats: ['text'],
      overflow: 'truncate',
      ratePerSecond: 1,
      concurrency: 1,
    },
  },
  validateConfig: validateGoogleChatConfig,
  create: (ctx) => createGoogleChatTarget(ctx),
});
