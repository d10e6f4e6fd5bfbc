/**
 * @herald/target-chat-webhook: posts notifications to a Discord, Slack or Mattermost channel
 * through the channel's incoming webhook. One instance is one webhook URL.
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
import type { ChatFormat, ChatWebhookConfig } from './config.ts';
import { configSchema } from './config.ts';
import { buildEditRequest, buildRequest, MANIFEST_MAX_LENGTH, MANIFEST_MAX_TITLE } from './payloads.ts';
import { failureFor, stoppedWaiting, transportFailure } from './responses.ts';

export type { ChatFormat, ChatWebhookConfig } from './config.ts';
export { CHAT_FORMATS, configSchema } from './config.ts';
export { buildEditRequest, buildRequest, fit, SERVICE_LIMITS, updatePrefix } from './payloads.ts';

/**
 * The header every post carries with the delivery id, the same on every retry of one delivery,
 * so a receiver (or a proxy in front of it) that deduplicates can recognise a repeat. Discord,
 * Slack and Mattermost ignore it today; the name is the one of the IETF draft and most HTTP APIs
 * that accept an idempotency key.
 */
export const IDEMPOTENCY_HEADER = 'idempotency-key';

/** Sends the core may start at once for one chat-webhook target (the manifest's `concurrency`). */
export const MANIFEST_CONCURRENCY = 16;

/**
 * Posts one webhook has in flight at once, by service. The contract's limits are per plugin, so
 * the manifest's `concurrency` is the most any service takes; the service's own rate narrows it
 * here: Slack takes about one message a second per webhook (one at a time), Discord's per-webhook
 * bucket holds 5 requests per 2 s, Mattermost sets no limit. A send beyond it waits in this
 * instance, not yet posted, in the order the core started it, so a process killed mid-burst has
 * posted at most these many that it may post again after the restart.
 */
export const IN_FLIGHT: Readonly<Record<ChatFormat, number>> = {
  slack: 1,
  discord: 5,
  mattermost: MANIFEST_CONCURRENCY,
};

/**
 * At most `limit` calls of `fn` at once, first come first served; a call whose signal aborts while it waits never runs.
 */
export function gate(
  limit: number,
): <T>(signal: AbortSignal, fn: () => Promise<T>, stopped: (reason: unknown) => Error) => Promise<T> {
  let active = 0;
  const waiting: (() => void)[] = [];
  const next = () => {
    active--;
    waiting.shift()?.();
  };
  return async (signal, fn, stopped) => {
    if (active >= limit) {
      await new Promise<void>((resolve, reject) => {
        const go = () => {
          signal.removeEventListener('abort', abort);
          active++;
          resolve();
        };
        const abort = () => {
          const i = waiting.indexOf(go);
          if (i >= 0) waiting.splice(i, 1);
          reject(stopped(signal.reason));
        };
        if (signal.aborted) {
          abort();
          return;
        }
        signal.addEventListener('abort', abort, { once: true });
        waiting.push(go);
      });
    } else active++;
    try {
      return await fn();
    } finally {
      next();
    }
  };
}

/** Creates the target instance for one webhook. */
export function createChatWebhookTarget(ctx: TargetContext<ChatWebhookConfig>): TargetInstance {
  const cfg = ctx.config;
  const turn = gate(IN_FLIGHT[cfg.format]);
  const stopped = (reason: unknown) => stoppedWaiting(cfg.format, reason);

  /** One request to the webhook, when its turn comes (IN_FLIGHT). */
  function post(
    req: ReturnType<typeof buildRequest>,
    message: OutboundMessage,
    signal: AbortSignal,
    method = 'POST',
  ): Promise<OutboundResponse> {
    return turn(signal, () => postNow(req, message, signal, method), stopped);
  }

  async function postNow(
    req: ReturnType<typeof buildRequest>,
    message: OutboundMessage,
    signal: AbortSignal,
    method: string,
  ): Promise<OutboundResponse> {
    let res: OutboundResponse;
    try {
      // Redirects are refused: a webhook endpoint that redirects is misconfigured, and following
      // one would re-send a POST body carrying the notification somewhere else.
      res = await ctx.http.request(req.url, {
        method,
        json: req.json,
        signal,
        maxRedirects: 0,
        maxResponseBytes: 64 * 1024,
        headers: { [IDEMPOTENCY_HEADER]: message.deliveryId },
      });
    } catch (err) {
      throw transportFailure(cfg.format, err);
    }
    if (res.status < 200 || res.status >= 300) throw failureFor(cfg.format, res, ctx.clock.now());
    if (req.truncated)
      ctx.log.warn({ deliveryId: message.deliveryId, cut: req.truncated }, 'message cut to fit the chat limit');
    return res;
  }

  const detailOf = (truncated: number) =>
    truncated ? `cut ${truncated} characters to fit the ${cfg.format} limit` : undefined;

  async function send(message: OutboundMessage, signal: AbortSignal, replyTo?: string): Promise<SendResult> {
    const req = buildRequest(cfg, message, replyTo);
    const res = await post(req, message, signal);
    let remoteId: string | undefined;
    if (cfg.format === 'discord') {
      try {
        remoteId = String(res.json<{ id?: unknown }>().id ?? '') || undefined;
      } catch {
        /* 204 or non-JSON: still delivered */
      }
    }
    // Discord answers the message id, which its webhook can edit later. Slack and Mattermost answer
    // `ok` only: a later update names the earlier message by its title instead.
    const messageRef: MessageRef | undefined =
      cfg.format === 'discord'
        ? remoteId
          ? { format: 'discord', message_id: remoteId }
          : undefined
        : { format: cfg.format, title: (message.plainTitle || message.plainBody.split('\n')[0] || '').slice(0, 200) };
    return { remoteId, detail: detailOf(req.truncated), ...(messageRef ? { messageRef } : {}) };
  }

  return {
    send: (message, { signal }) => send(message, signal),

    /**
     * Discord: edits the webhook's own message (`PATCH …/messages/{id}`). Slack and Mattermost incoming webhooks cannot
     * edit.
     */
    async update({ previous, message }, { signal }) {
      const ref = previous.messageRef;
      if (cfg.format !== 'discord' || ref.format !== 'discord' || typeof ref.message_id !== 'string')
        return NOT_SUPPORTED;
      const req = buildEditRequest(cfg, message, ref.message_id);
      await post(req, message, signal, 'PATCH');
      return { remoteId: ref.message_id, detail: detailOf(req.truncated), messageRef: { ...ref } };
    },

    /**
     * Slack and Mattermost: a new post that says which earlier one it updates ("Update to “…”:"),
     * since an incoming webhook gets no post id back to thread under. Discord edits instead.
     */
    async reply({ previous, message }, { signal }) {
      const ref = previous.messageRef;
      if (cfg.format === 'discord' || ref.format !== cfg.format || typeof ref.title !== 'string') return NOT_SUPPORTED;
      return send(message, signal, ref.title);
    },
  };
}

export default defineTarget({
  manifest: {
    id: 'chat_webhook',
    kind: 'target',
    apiVersion: PLUGIN_API_VERSION,
    displayName: 'Chat webhook (Discord, Slack, Mattermost)',
    locales: { en: enLocale, ru: ruLocale },
    description: 'Posts notifications to a Discord, Slack or Mattermost channel through its incoming-webhook URL.',
    configSchema,
    // The strictest of the three services, so one manifest fits any configured format.
    // The plugin fits bodies to the configured service's own limits (overflow: 'plugin').
    // No declared rate: the pace differs by service (Slack about one post a second, Discord 5 per
    // 2 s, Mattermost none) and each answers 429 with Retry-After, which the core honours.
    // Each post is independent (no threading state), so a burst may go out over a few connections
    // at once: as many as the service takes (IN_FLIGHT), up to this concurrency for any.
    limits: {
      maxMessageLength: MANIFEST_MAX_LENGTH,
      maxTitleLength: MANIFEST_MAX_TITLE,
      formats: ['markdown'],
      overflow: 'plugin',
      concurrency: MANIFEST_CONCURRENCY,
    },
  },
  create: (ctx) => createChatWebhookTarget(ctx),
});
