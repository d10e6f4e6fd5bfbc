/**
 * @herald/target-chat-webhook: posts notifications to a Discord, Slack or Mattermost channel
 * through the channel's incoming webhook. One instance is one webhook URL.
 */
import { defineTarget, PLUGIN_API_VERSION } from '@herald/plugin-api';
import type { OutboundResponse, TargetContext, TargetInstance } from '@herald/plugin-api';
import { configSchema } from './config.ts';
import type { ChatWebhookConfig } from './config.ts';
import { buildRequest, MANIFEST_MAX_LENGTH, MANIFEST_MAX_TITLE } from './payloads.ts';
import { failureFor, transportFailure } from './responses.ts';
import enLocale from '../locales/en.json' with { type: 'json' };
import ruLocale from '../locales/ru.json' with { type: 'json' };

export { configSchema, CHAT_FORMATS } from './config.ts';
export type { ChatWebhookConfig, ChatFormat } from './config.ts';
export { buildRequest, fit, SERVICE_LIMITS } from './payloads.ts';

/**
 * The header every post carries with the delivery id, the same on every retry of one delivery,
 * so a receiver (or a proxy in front of it) that deduplicates can recognise a repeat. Discord,
 * Slack and Mattermost ignore it today; the name is the one of the IETF draft and most HTTP APIs
 * that accept an idempotency key.
 */
export const IDEMPOTENCY_HEADER = 'idempotency-key';

/** Creates the target instance for one webhook. */
export function createChatWebhookTarget(ctx: TargetContext<ChatWebhookConfig>): TargetInstance {
  const cfg = ctx.config;
  return {
    async send(message, { signal }) {
      const req = buildRequest(cfg, message);
      let res: OutboundResponse;
      try {
        // Redirects are refused: a webhook endpoint that redirects is misconfigured, and following
        // one would re-send a POST body carrying the notification somewhere else.
        res = await ctx.http.request(req.url, {
          method: 'POST', json: req.json, signal, maxRedirects: 0, maxResponseBytes: 64 * 1024,
          headers: { [IDEMPOTENCY_HEADER]: message.deliveryId },
        });
      } catch (err) {
        throw transportFailure(cfg.format, err);
      }
      if (res.status < 200 || res.status >= 300) throw failureFor(cfg.format, res, ctx.clock.now());
      let remoteId: string | undefined;
      if (cfg.format === 'discord') {
        try { remoteId = String(res.json<{ id?: unknown }>().id ?? '') || undefined; } catch { /* 204 or non-JSON: still delivered */ }
      }
      const detail = req.truncated ? `cut ${req.truncated} characters to fit the ${cfg.format} limit` : undefined;
      if (req.truncated) ctx.log.warn({ deliveryId: message.deliveryId, cut: req.truncated }, 'message cut to fit the chat limit');
      return { remoteId, detail };
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
    // Each post is independent (no threading state), so a burst may go out over a few connections at once.
    limits: { maxMessageLength: MANIFEST_MAX_LENGTH, maxTitleLength: MANIFEST_MAX_TITLE, formats: ['markdown'], overflow: 'plugin', concurrency: 16 },
  },
  create: (ctx) => createChatWebhookTarget(ctx),
});
