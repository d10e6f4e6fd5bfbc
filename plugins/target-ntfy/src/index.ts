/**
 * @herald/target-ntfy: publishes notifications to a topic of an ntfy server (ntfy.sh or
 * self-hosted) through ntfy's JSON publishing (`POST /` with the topic in the body).
 */

import type {
  Locale,
  MessageRef,
  OutboundMessage,
  OutboundResponse,
  SendResult,
  TargetContext,
  TargetInstance,
} from '@herald/plugin-api';
import { ConfigError, defineTarget, NOT_SUPPORTED, PLUGIN_API_VERSION } from '@herald/plugin-api';
import enLocale from '../locales/en.json' with { type: 'json' };
import ruLocale from '../locales/ru.json' with { type: 'json' };
import type { NtfyConfig } from './config.ts';
import { configSchema, serverBase, validateNtfyConfig } from './config.ts';
import type { NtfyPayload } from './publish.ts';
import { buildPayload, MAX_MESSAGE_BYTES, pieces as piecesOf, refTitle } from './publish.ts';
import { failureFor, transportFailure } from './responses.ts';
import { text } from './text.ts';

export type { NtfyConfig } from './config.ts';
export { configSchema, serverBase, TOPIC_PATTERN, validateNtfyConfig } from './config.ts';
export {
  buildPayload,
  MAX_JSON_BYTES,
  MAX_MESSAGE_BYTES,
  PRIORITY,
  pieces,
  SEVERITY_TAG,
  splitBody,
  utf8Length,
} from './publish.ts';
export { DAILY_QUOTA_CODE, DEFAULT_RETRY_AFTER_MS, failureFor, retryAfterMs, untilUtcMidnight } from './responses.ts';

/** How long the pieces of a split message already accepted are remembered, so a retry sends only the rest. */
const PIECES_TTL_SECONDS = 7 * 24 * 3600;

/** Creates the target instance for one topic. */
export function createNtfyTarget(ctx: TargetContext<NtfyConfig>): TargetInstance {
  const cfg = ctx.config;
  const base = serverBase(cfg.server_url);
  // create() guards itself (validateConfig runs on save only): an unusable address or topic fails each send as a
  // configuration error.
  const fatal = validateNtfyConfig(cfg)
    .filter((p) => p.path === '/server_url' || p.path === '/topic')
    .map((p) => p.path.slice(1));
  if (!base && !fatal.includes('server_url')) fatal.unshift('server_url');
  // An access token goes as Bearer, a user name and password as Basic (ntfy accepts both on every endpoint).
  const authorization = cfg.token
    ? `Bearer ${cfg.token}`
    : cfg.username
      ? `Basic ${Buffer.from(`${cfg.username}:${cfg.password ?? ''}`, 'utf8').toString('base64')}`
      : undefined;

  async function post(payload: NtfyPayload, locale: Locale, signal: AbortSignal): Promise<string | undefined> {
    let res: OutboundResponse;
    try {
      // Redirects are refused: a server that redirects a POST is misconfigured (or http:// where https:// is
      // meant), and following one would send the message and the credentials somewhere else.
      res = await ctx.http.request(`${base}/`, {
        method: 'POST',
        json: payload,
        signal,
        maxRedirects: 0,
        maxResponseBytes: 64 * 1024,
        headers: authorization ? { authorization } : {},
      });
    } catch (err) {
      throw transportFailure(err, locale);
    }
    if (res.status < 200 || res.status >= 300) throw failureFor(res, locale, ctx.clock.now());
    try {
      const id = res.json<{ id?: unknown }>().id;
      return typeof id === 'string' && id ? id : undefined;
    } catch {
      return undefined;
    }
  }

  async function publish(message: OutboundMessage, signal: AbortSignal, replyTo?: string): Promise<SendResult> {
    if (fatal.length) throw new ConfigError(text.badConfig(message.locale, fatal.join(', ')));
    const payload = buildPayload(cfg, message, replyTo);
    const pieces = piecesOf(payload, message.locale);
    let first: string | undefined;
    if (pieces.length === 1) {
      first = await post(payload, message.locale, signal);
    } else {
      // ntfy has no idempotency key: remember each accepted piece so a retry of this delivery sends only the rest.
      const key = `pieces:${message.deliveryId}`;
      const done = (await ctx.store.get<{ sent: number; first?: string }>(key)) ?? { sent: 0 };
      for (let k = done.sent; k < pieces.length; k++) {
        const id = await post({ ...payload, message: pieces[k]! }, message.locale, signal);
        if (k === 0 && id) done.first = id;
        done.sent = k + 1;
        await ctx.store.set(key, done, { ttlSeconds: PIECES_TTL_SECONDS });
      }
      first = done.first;
      ctx.log.info(
        { deliveryId: message.deliveryId, pieces: pieces.length },
        `message over ${MAX_MESSAGE_BYTES} bytes sent in pieces`,
      );
    }
    // No topic in the ref: it is a secret, and a ref is stored and shown as it is.
    const messageRef: MessageRef = { server: base!, ...(first ? { id: first } : {}), title: refTitle(message) };
    return {
      remoteId: first,
      ...(pieces.length > 1 ? { detail: text.pieces(message.locale, pieces.length, MAX_MESSAGE_BYTES) } : {}),
      messageRef,
    };
  }

  return {
    send: (message, { signal }) => publish(message, signal),

    /** ntfy cannot edit a published message. */
    async update() {
      return NOT_SUPPORTED;
    },

    /**
     * A new message that opens with "Update to “<earlier title>”:" in the target's language, since
     * ntfy has neither edits nor threads. Not for a message published to another server.
     */
    async reply({ previous, message }, { signal }) {
      const ref = previous.messageRef;
      if (ref.server !== base || typeof ref.title !== 'string') return NOT_SUPPORTED;
      return publish(message, signal, ref.title);
    },
  };
}

export default defineTarget({
  manifest: {
    id: 'ntfy',
    kind: 'target',
    apiVersion: PLUGIN_API_VERSION,
    displayName: 'ntfy',
    description:
      'Publishes notifications to a topic of an ntfy server (ntfy.sh or self-hosted), with priority, tags and a ' +
      'click link.',
    locales: { en: enLocale, ru: ruLocale },
    configSchema,
    // 4,096 is ntfy's message size in bytes; the core counts UTF-16 code units, so a body of
    // multi-byte text that still exceeds 4,096 bytes is split once more by the plugin (publish.ts).
    // Long bodies are split, not cut: each part is its own notification and nothing is lost.
    // No declared rate: ntfy.sh allows a burst of 60 requests, then one per 5 s, and answers 429 beyond.
    limits: {
      maxMessageLength: MAX_MESSAGE_BYTES,
      maxTitleLength: 256,
      overflow: 'split',
      formats: ['markdown', 'text'],
    },
  },
  validateConfig: validateNtfyConfig,
  create: (ctx) => createNtfyTarget(ctx),
});
