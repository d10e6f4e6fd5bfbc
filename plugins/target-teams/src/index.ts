/**
 * @herald/target-teams: posts notifications to a Microsoft Teams channel or chat as Adaptive
 * Cards, through a Teams Workflows webhook ("Post to a channel when a webhook request is
 * received"). One instance is one webhook URL.
 */

import type { OutboundMessage, OutboundResponse, SendResult, TargetContext, TargetInstance } from '@herald/plugin-api';
import { defineTarget, NOT_SUPPORTED, PLUGIN_API_VERSION } from '@herald/plugin-api';
import enLocale from '../locales/en.json' with { type: 'json' };
import ruLocale from '../locales/ru.json' with { type: 'json' };
import { buildCard, MAX_BODY, MAX_TITLE } from './card.ts';
import type { TeamsConfig } from './config.ts';
import { configSchema, validateTeamsConfig } from './config.ts';
import { failureFor, transportFailure } from './responses.ts';
import { words } from './strings.ts';

export { buildCard, cardText, escapeCard, MAX_BODY, MAX_PAYLOAD_BYTES, MAX_TITLE } from './card.ts';
export type { TeamsConfig } from './config.ts';
export { configSchema, validateTeamsConfig } from './config.ts';
export { updatePrefix } from './strings.ts';

/**
 * Carries the delivery id, the same on every retry of one delivery. Workflows ignore it; a proxy
 * that deduplicates on it can drop a repeat.
 */
export const IDEMPOTENCY_HEADER = 'idempotency-key';

/** Creates the target instance for one webhook. */
export function createTeamsTarget(ctx: TargetContext<TeamsConfig>): TargetInstance {
  const cfg = ctx.config;

  async function post(message: OutboundMessage, signal: AbortSignal, previousTitle?: string): Promise<SendResult> {
    const card = buildCard(message, previousTitle);
    let res: OutboundResponse;
    try {
      // Redirects are refused: the URL's signature would follow the POST to wherever it points.
      res = await ctx.http.request(cfg.url, {
        method: 'POST',
        json: card.json,
        signal,
        maxRedirects: 0,
        maxResponseBytes: 64 * 1024,
        headers: { [IDEMPOTENCY_HEADER]: message.deliveryId },
      });
    } catch (err) {
      throw transportFailure(message.locale, err);
    }
    if (res.status < 200 || res.status >= 300) throw failureFor(message.locale, res, ctx.clock.now());
    if (card.cut) ctx.log.warn({ deliveryId: message.deliveryId, cut: card.cut }, 'message cut to fit the Teams limit');
    // The run the trigger started, to find it in the workflow's run history.
    const runId = res.headers['x-ms-workflow-run-id'] || undefined;
    const title = (message.plainTitle || message.plainBody.split('\n')[0] || '')
      .replace(/\s+/g, ' ')
      .trim()
      .slice(0, 200);
    return {
      remoteId: runId,
      detail: card.cut ? words(message.locale).cut(card.cut) : undefined,
      // A Workflows webhook cannot edit what it posted: later events name this message by its title.
      messageRef: { title },
    };
  }

  return {
    send: (message, { signal }) => post(message, signal),
    /** A card posted by a workflow cannot be edited through the webhook. */
    async update() {
      return NOT_SUPPORTED;
    },
    /** A new card that opens with "Update to “<earlier title>”:" in the target's language. */
    async reply({ previous, message }, { signal }) {
      const title = previous.messageRef.title;
      if (typeof title !== 'string') return NOT_SUPPORTED;
      return post(message, signal, title);
    },
  };
}

export default defineTarget({
  manifest: {
    id: 'teams',
    kind: 'target',
    apiVersion: PLUGIN_API_VERSION,
    displayName: 'Microsoft Teams (Workflows webhook)',
    description: 'Posts notifications as Adaptive Cards to a Teams channel or chat through a Workflows webhook.',
    locales: { en: enLocale, ru: ruLocale },
    configSchema,
    // Plain text in, escaped for the card's Markdown subset here. Teams' Power Automate connector
    // allows about 100 calls a minute per connection: one card a second keeps well inside it, and
    // one at a time keeps cards in event order.
    limits: {
      maxMessageLength: MAX_BODY,
      maxTitleLength: MAX_TITLE,
      formats: ['text'],
      overflow: 'truncate',
      ratePerSecond: 1,
      concurrency: 1,
    },
  },
  validateConfig: validateTeamsConfig,
  create: (ctx) => createTeamsTarget(ctx),
});
