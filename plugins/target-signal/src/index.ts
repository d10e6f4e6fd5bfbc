/**
 * @herald/target-signal: sends notifications as Signal messages through a signal-cli REST API
 * server (bbernhard/signal-cli-rest-api), from the number registered there to numbers, groups or
 * accounts. One instance is one sender and its list of recipients.
 */
import { createHash } from 'node:crypto';
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
import type { SignalConfig } from './config.ts';
import { configSchema, validateSignalConfig } from './config.ts';
import { failureFor, parseSent, transportFailure } from './responses.ts';
import { words } from './strings.ts';
import { buildMessage, MAX_BODY, MAX_TITLE } from './text.ts';

export type { SignalConfig } from './config.ts';
export { configSchema, isGroupId, validateSignalConfig } from './config.ts';
export { updatePrefix } from './strings.ts';
export { buildMessage, escapeStyled, fitBytes, MAX_VISIBLE_BYTES } from './text.ts';

/** Sent with every request, the same on every retry of a delivery; the REST API ignores it. */
export const IDEMPOTENCY_HEADER = 'idempotency-key';

/** How long a delivery remembers which of its batches were already sent (for its retries). */
const PROGRESS_TTL_SECONDS = 7 * 24 * 3600;

/**
 * One request per batch, as the REST API requires: every number and account together, and each
 * group on its own (it refuses groups mixed with numbers, or two groups in one request).
 */
export interface Batch {
  id: string;
  recipients: string[];
}
export function batchesOf(recipients: string[]): Batch[] {
  const people = recipients.filter((r) => !r.startsWith('group.'));
  const groups = recipients.filter((r) => r.startsWith('group.'));
  return [
    ...(people.length ? [{ id: 'people', recipients: people }] : []),
    ...groups.map((g) => ({ id: g, recipients: [g] })),
  ];
}

/** The message reference key holding a batch's timestamp (short, whatever the group id's length). */
export const refKey = (batchId: string) =>
  batchId === 'people' ? 'ts_people' : `ts_${createHash('sha256').update(batchId).digest('hex').slice(0, 12)}`;

/** Creates the target instance for one sender. */
export function createSignalTarget(ctx: TargetContext<SignalConfig>): TargetInstance {
  const cfg = ctx.config;
  const endpoint = `${cfg.api_url.replace(/\/+$/, '')}/v2/send`;
  const batches = batchesOf(cfg.recipients);

  async function post(
    message: OutboundMessage,
    body: Record<string, unknown>,
    signal: AbortSignal,
  ): Promise<OutboundResponse> {
    let res: OutboundResponse;
    try {
      // Sending waits for Signal's servers, for every recipient: allow longer than the default.
      res = await ctx.http.request(endpoint, {
        method: 'POST',
        json: body,
        signal,
        maxRedirects: 0,
        maxResponseBytes: 64 * 1024,
        timeoutMs: 30_000,
        headers: { [IDEMPOTENCY_HEADER]: message.deliveryId },
      });
    } catch (err) {
      throw transportFailure(message.locale, err);
    }
    if (res.status < 200 || res.status >= 300) throw failureFor(message.locale, res, ctx.clock.now());
    return res;
  }

  async function deliver(message: OutboundMessage, signal: AbortSignal, previous?: MessageRef): Promise<SendResult> {
    const previousTitle = previous && typeof previous.title === 'string' ? previous.title : undefined;
    const built = buildMessage(message, cfg.text_mode, previousTitle);
    const ref: MessageRef = {
      title: (message.plainTitle || message.plainBody.split('\n')[0] || '').replace(/\s+/g, ' ').trim().slice(0, 200),
    };
    const failed: string[] = [];
    let remoteId: string | undefined;
    for (const batch of batches) {
      // With several batches, a retry after a partial failure sends only what did not go out yet.
      const progressKey = batches.length > 1 ? `sent:${message.deliveryId}:${refKey(batch.id)}` : undefined;
      let timestamp = progressKey ? await ctx.store.get<string>(progressKey) : undefined;
      if (!timestamp) {
        const body: Record<string, unknown> = {
          message: built.message,
          number: cfg.number,
          recipients: batch.recipients,
          text_mode: cfg.text_mode,
        };
        const quoted = previous?.[refKey(batch.id)];
        if (
          previousTitle !== undefined &&
          (typeof quoted === 'string' || typeof quoted === 'number') &&
          /^\d+$/.test(String(quoted))
        ) {
          // The earlier message, quoted above the new one: Signal's way to answer a message.
          Object.assign(body, {
            quote_timestamp: Number(quoted),
            quote_author: cfg.number,
            quote_message: previousTitle,
          });
        }
        const sent = parseSent(await post(message, body, signal));
        timestamp = sent.timestamp ?? '';
        failed.push(...sent.failed);
        if (progressKey) await ctx.store.set(progressKey, timestamp || 'sent', { ttlSeconds: PROGRESS_TTL_SECONDS });
      }
      if (/^\d+$/.test(timestamp)) {
        ref[refKey(batch.id)] = timestamp;
        remoteId ??= timestamp;
      }
    }
    const w = words(message.locale);
    const notes = [built.cut ? w.cut(built.cut) : '', failed.length ? w.notDelivered(failed.join(', ')) : ''].filter(
      Boolean,
    );
    if (built.cut)
      ctx.log.warn({ deliveryId: message.deliveryId, cut: built.cut }, 'message cut to fit the Signal limit');
    if (failed.length)
      ctx.log.warn({ deliveryId: message.deliveryId, failed }, 'some recipients did not get the message');
    return { remoteId, detail: notes.join('; ') || undefined, messageRef: ref };
  }

  return {
    send: (message, { signal }) => deliver(message, signal),
    /**
     * Not used: the REST API can edit (`edit_timestamp`), but Signal allows edits for 24 hours
     * only and an edit does not notify, so a changed state would pass unseen.
     */
    async update() {
      return NOT_SUPPORTED;
    },
    /** A new message quoting the earlier one and opening with "Update to “<earlier title>”:". */
    async reply({ previous, message }, { signal }) {
      if (typeof previous.messageRef.title !== 'string') return NOT_SUPPORTED;
      return deliver(message, signal, previous.messageRef);
    },
  };
}

export default defineTarget({
  manifest: {
    id: 'signal',
    kind: 'target',
    apiVersion: PLUGIN_API_VERSION,
    displayName: 'Signal (signal-cli REST API)',
    description: 'Sends notifications as Signal messages through a signal-cli REST API server, to numbers or groups.',
    locales: { en: enLocale, ru: ruLocale },
    configSchema,
    // Plain text in, styled here. Signal shows at most 2,000 bytes of text inline: the plugin cuts
    // the body by bytes (Cyrillic takes two per character). One message a second keeps a busy
    // sender clear of Signal's spam limits; one at a time keeps the order.
    limits: {
      maxMessageLength: MAX_BODY,
      maxTitleLength: MAX_TITLE,
      formats: ['text'],
      overflow: 'truncate',
      ratePerSecond: 1,
      concurrency: 1,
    },
  },
  validateConfig: validateSignalConfig,
  create: (ctx) => createSignalTarget(ctx),
});
