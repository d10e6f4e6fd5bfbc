/**
 * @herald/target-http: sends each notification as one HTTP request (POST, PUT or PATCH) to an
 * address of the user's choosing, with their headers and, optionally, their body template.
 */

import type {
  Locale,
  OutboundMessage,
  OutboundResponse,
  SendResult,
  TargetContext,
  TargetInstance,
} from '@herald/plugin-api';
import {
  ConfigError,
  defineTarget,
  errorCode,
  NOT_SUPPORTED,
  OUTBOUND_REDIRECTS,
  OUTBOUND_REFUSED,
  PermanentSendError,
  PLUGIN_API_VERSION,
  RateLimitedError,
  RetryableSendError,
} from '@herald/plugin-api';
import enLocale from '../locales/en.json' with { type: 'json' };
import ruLocale from '../locales/ru.json' with { type: 'json' };
import type { Previous } from './body.ts';
import { buildBody, CONTENT_TYPES } from './body.ts';
import type { HttpConfig } from './config.ts';
import { configSchema, RESERVED_HEADERS, validateHttpConfig } from './config.ts';
import { compile, MAX_OUTPUT } from './template.ts';
import { text } from './text.ts';

export { buildBody, CONTENT_TYPES, defaultBody, valuesOf } from './body.ts';
export type { HttpConfig } from './config.ts';
export { configSchema, HEADER_NAME_PATTERN, RESERVED_HEADERS, validateHttpConfig } from './config.ts';
export { compile, FIELDS, jsonTemplateProblem, MAX_OUTPUT, MAX_PLACEHOLDERS, render } from './template.ts';

/** The header every request carries with the delivery id, the same on every retry of one delivery. */
export const IDEMPOTENCY_HEADER = 'idempotency-key';
/** Delay used for a 429 that names none. */
export const DEFAULT_RETRY_AFTER_MS = 5_000;
/** Longest title and body passed to the template (the core fits messages to them). */
export const MAX_MESSAGE_LENGTH = 32_000;
export const MAX_TITLE_LENGTH = 1_000;

function excerpt(res: OutboundResponse): string {
  return res.text().replace(/\s+/g, ' ').trim().slice(0, 200) || `HTTP ${res.status}`;
}

function retryAfterMs(res: OutboundResponse, now: Date): number {
  const header = res.headers['retry-after'];
  if (header !== undefined) {
    const seconds = Number(header);
    if (Number.isFinite(seconds) && seconds >= 0) return Math.ceil(seconds * 1000);
    const at = Date.parse(header);
    if (!Number.isNaN(at)) return Math.max(0, at - now.getTime());
  }
  return DEFAULT_RETRY_AFTER_MS;
}

/** The error for a non-2xx answer: 429 rate limited, 5xx and 408 retried, any other answer permanent. */
export function failureFor(res: OutboundResponse, locale: Locale, now: Date): Error {
  const status = res.status;
  const head = text.answered(locale, status, excerpt(res));
  if (status === 429) return new RateLimitedError(`${head}; ${text.slowDown(locale)}`, retryAfterMs(res, now), 429);
  if (status >= 500 || status === 408) return new RetryableSendError(head, status);
  if (status === 401 || status === 403) return new PermanentSendError(`${head}; ${text.authHint(locale)}`, status);
  return new PermanentSendError(head, status);
}

/** The error when no HTTP answer came back: a refused address or a redirect is permanent, the rest retried. */
export function transportFailure(err: unknown, locale: Locale): Error {
  const why = err instanceof Error ? err.message : String(err);
  if (errorCode(err) === OUTBOUND_REFUSED) return new PermanentSendError(text.refused(locale, why), 0, { cause: err });
  if (errorCode(err) === OUTBOUND_REDIRECTS) return new PermanentSendError(text.redirect(locale), 0, { cause: err });
  return new RetryableSendError(text.unreachable(locale, why), 0, { cause: err });
}

/** Creates the target instance for one endpoint. */
export function createHttpTarget(ctx: TargetContext<HttpConfig>): TargetInstance {
  const cfg = ctx.config;
  const type = cfg.content_type ?? 'json';
  // create() guards itself (validateConfig runs on save only): a config that would fail it fails each send.
  const fatal = [...new Set(validateHttpConfig(cfg).map((p) => p.path.split('/')[1]!))];
  const template = cfg.body_template?.trim() ? compile(cfg.body_template).template : undefined;
  const plainHeaders = Object.entries(cfg.headers ?? {})
    .filter(([name]) => !RESERVED_HEADERS.has(name.toLowerCase()))
    .map(([name, value]) => [name.toLowerCase(), value]);
  const authName = (cfg.auth_header || 'Authorization').toLowerCase();
  const credential = cfg.auth_value && !RESERVED_HEADERS.has(authName) ? { [authName]: cfg.auth_value } : {};
  const userHeaders: Record<string, string> = { ...Object.fromEntries(plainHeaders), ...credential };

  async function send(message: OutboundMessage, signal: AbortSignal, previous?: Previous): Promise<SendResult> {
    if (fatal.length) throw new ConfigError(text.badConfig(message.locale, fatal.join(', ')));
    const body = buildBody(cfg, template, message, previous);
    if (body === undefined) throw new PermanentSendError(text.tooLarge(message.locale, MAX_OUTPUT));
    let res: OutboundResponse;
    try {
      // Redirects are refused: following one would re-send the body and the headers somewhere else.
      res = await ctx.http.request(cfg.url, {
        method: cfg.method ?? 'POST',
        body,
        signal,
        maxRedirects: 0,
        maxResponseBytes: 64 * 1024,
        headers: { ...userHeaders, 'content-type': CONTENT_TYPES[type], [IDEMPOTENCY_HEADER]: message.deliveryId },
        // The credential header, whatever its name, never goes to another origin.
        credentialHeaders: Object.keys(credential),
      });
    } catch (err) {
      throw transportFailure(err, message.locale);
    }
    if (res.status < 200 || res.status >= 300) throw failureFor(res, message.locale, ctx.clock.now());
    return {
      detail: text.delivered(message.locale, res.status),
      messageRef: { title: (message.plainTitle || message.plainBody.split('\n')[0] || '').slice(0, 200) },
    };
  }

  return {
    send: (message, { signal }) => send(message, signal),

    /** An HTTP endpoint cannot be asked to edit what it received. */
    async update() {
      return NOT_SUPPORTED;
    },

    /**
     * A new request for the later event, carrying the earlier delivery's id and title
     * (`in_reply_to`, `previous_title`) so the receiver can relate them; the default text body
     * opens with "Update to “…”:".
     */
    async reply({ previous, message }, { signal }) {
      if (typeof previous.messageRef.title !== 'string') return NOT_SUPPORTED;
      return send(message, signal, { deliveryId: previous.deliveryId, title: previous.messageRef.title });
    },
  };
}

export default defineTarget({
  manifest: {
    id: 'http',
    kind: 'target',
    apiVersion: PLUGIN_API_VERSION,
    displayName: 'HTTP request',
    description:
      'Sends each notification as an HTTP request (POST, PUT or PATCH) to an address of your choice, with your ' +
      'headers and body template.',
    locales: { en: enLocale, ru: ruLocale },
    configSchema,
    // A generic endpoint has no limit of its own; these keep one request reasonable.
    limits: {
      maxMessageLength: MAX_MESSAGE_LENGTH,
      maxTitleLength: MAX_TITLE_LENGTH,
      overflow: 'truncate',
      formats: ['text'],
    },
  },
  validateConfig: validateHttpConfig,
  create: (ctx) => createHttpTarget(ctx),
});
