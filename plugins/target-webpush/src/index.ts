/**
 * @herald/target-webpush: shows notifications in the browsers the owner subscribed in Herald's web
 * client ("Notify this browser" on the account page), through each browser's push service (Web
 * Push: RFC 8030 messages, RFC 8291 encryption, RFC 8292 VAPID). The target has no configuration:
 * the core keeps the subscriptions and the service's VAPID key pair and hands them over as
 * `ctx.webPush`. The `web-push` library builds each request (encryption, VAPID JWT); the request
 * goes out through `ctx.http`, so the outbound address policy applies to push services too.
 */

import type {
  OutboundMessage,
  OutboundResponse,
  SendResult,
  TargetContext,
  TargetInstance,
  WebPushAccess,
  WebPushSubscription,
} from '@herald/plugin-api';
import {
  defineTarget,
  errorCode,
  OUTBOUND_REFUSED,
  PermanentSendError,
  PLUGIN_API_VERSION,
  RateLimitedError,
  RetryableSendError,
  Type,
} from '@herald/plugin-api';
import enLocale from '../locales/en.json' with { type: 'json' };
import ruLocale from '../locales/ru.json' with { type: 'json' };
import {
  buildPayload,
  fitPayload,
  MAX_BODY_LENGTH,
  MAX_TITLE_LENGTH,
  TEST_TTL_SECONDS,
  TTL_SECONDS,
  topicFor,
  urgencyFor,
} from './payload.ts';
import { type Strings, strings } from './strings.ts';

export type { PushPayload } from './payload.ts';
export { buildPayload, fitPayload, MAX_BODY_BYTES, MAX_PLAINTEXT_BYTES, topicFor, urgencyFor } from './payload.ts';

export const configSchema = Type.Object({}, { additionalProperties: false });

/** How long a browser that accepted a delivery is remembered, so a retry of that delivery skips it. */
const SENT_TTL_SECONDS = 2 * 24 * 3600;
/** Without Retry-After, a 429 waits this long. */
const DEFAULT_RETRY_AFTER_MS = 30_000;

type WebPushLib = typeof import('web-push');
let lib: Promise<WebPushLib> | undefined;
/** web-push (and its ASN.1 and JWS code) loads with the first send. */
const loadWebPush = (): Promise<WebPushLib> =>
  (lib ??= import('web-push').then((m) => (m as { default?: WebPushLib }).default ?? m));

type Outcome =
  | { kind: 'sent' }
  | { kind: 'gone'; id: string }
  | { kind: 'rate'; message: string; retryAfterMs: number }
  | { kind: 'retry'; message: string; status: number }
  | { kind: 'permanent'; message: string; status: number };

const hostOf = (endpoint: string): string => {
  try {
    return new URL(endpoint).host;
  } catch {
    return 'unknown';
  }
};

/** Retry-After in milliseconds (seconds or an HTTP date), else the default. */
function retryAfterMs(res: OutboundResponse, now: Date): number {
  const v = res.headers['retry-after'];
  if (!v) return DEFAULT_RETRY_AFTER_MS;
  if (/^\d+$/.test(v.trim())) return Number(v.trim()) * 1000;
  const at = Date.parse(v);
  return Number.isFinite(at) ? Math.max(1000, at - now.getTime()) : DEFAULT_RETRY_AFTER_MS;
}

/** A short, single-line excerpt of a refusal's body (push services answer JSON or text). */
const excerpt = (res: OutboundResponse): string => res.text().replace(/\s+/g, ' ').trim().slice(0, 200);

export function createWebPushTarget(ctx: TargetContext<Record<string, never>>): TargetInstance {
  /** Sends one message to one browser; the outcome, never a throw. */
  async function pushOne(
    push: WebPushAccess,
    sub: WebPushSubscription,
    body: string,
    o: {
      vapid: Awaited<ReturnType<WebPushAccess['vapid']>>;
      ttl: number;
      urgency: string;
      topic: string;
      deliveryId: string;
      s: Strings;
      signal: AbortSignal;
    },
  ): Promise<Outcome> {
    const sentKey = `sent:${o.deliveryId}:${sub.id}`;
    if (await ctx.store.get(sentKey)) return { kind: 'sent' };
    const host = hostOf(sub.endpoint);
    const webpush = await loadWebPush();
    let details: ReturnType<WebPushLib['generateRequestDetails']>;
    try {
      details = webpush.generateRequestDetails({ endpoint: sub.endpoint, keys: sub.keys }, body, {
        vapidDetails: o.vapid,
        TTL: o.ttl,
        urgency: o.urgency as 'normal',
        topic: o.topic,
        contentEncoding: 'aes128gcm',
      });
    } catch (err) {
      return { kind: 'permanent', message: o.s.invalidSubscription((err as Error).message), status: 0 };
    }
    // The library's header names as the wire wants them; the client sets the length itself.
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(details.headers))
      if (k.toLowerCase() !== 'content-length') headers[k.toLowerCase()] = String(v);
    let res: OutboundResponse;
    try {
      // A push service never redirects a message; following one would carry the VAPID token elsewhere.
      res = await ctx.http.request(details.endpoint, {
        method: 'POST',
        headers,
        body: details.body ?? undefined,
        maxRedirects: 0,
        timeoutMs: 15_000,
        maxResponseBytes: 16 * 1024,
        signal: o.signal,
      });
    } catch (err) {
      if (errorCode(err) === OUTBOUND_REFUSED) return { kind: 'permanent', message: o.s.refused(host), status: 0 };
      return { kind: 'retry', message: o.s.unreachable(host, (err as Error).message), status: 0 };
    }
    if (res.status >= 200 && res.status < 300) {
      await ctx.store.set(sentKey, 1, { ttlSeconds: SENT_TTL_SECONDS });
      await push
        .markSuccess(sub.id)
        .catch((err) => ctx.log.warn({ err, subscription_id: sub.id }, 'recording a delivered push failed'));
      return { kind: 'sent' };
    }
    // RFC 8030 §7.3: the subscription expired or the browser unsubscribed.
    if (res.status === 404 || res.status === 410) {
      await push.remove(sub.id);
      ctx.log.info(
        { subscription_id: sub.id, push_service: host, status: res.status },
        'browser subscription is gone; removed',
      );
      return { kind: 'gone', id: sub.id };
    }
    if (res.status === 429)
      return { kind: 'rate', message: o.s.rateLimited(host), retryAfterMs: retryAfterMs(res, ctx.clock.now()) };
    if (res.status >= 500) return { kind: 'retry', message: o.s.serverError(host, res.status), status: res.status };
    if (res.status === 401 || res.status === 403)
      return { kind: 'permanent', message: o.s.vapidRefused(host, res.status), status: res.status };
    if (res.status === 413) return { kind: 'permanent', message: o.s.tooLarge(host), status: 413 };
    return { kind: 'permanent', message: o.s.rejected(host, res.status, excerpt(res)), status: res.status };
  }

  /** Sends `message` to every browser of the owner; `tag` names the notification in the browser. */
  async function deliver(
    message: OutboundMessage,
    signal: AbortSignal,
    tag: string,
    renotify: boolean,
  ): Promise<SendResult> {
    const s = strings(message.locale);
    const push = ctx.webPush;
    if (!push) throw new PermanentSendError(s.noFacility);
    const subs = await push.subscriptions();
    if (!subs.length) throw new PermanentSendError(s.noSubscription);
    const vapid = await push.vapid();
    const { payload, cut } = fitPayload(buildPayload(message, push.eventUrl(message.eventId), tag, renotify));
    const body = JSON.stringify(payload);
    const o = {
      vapid,
      ttl: message.test ? TEST_TTL_SECONDS : TTL_SECONDS,
      urgency: urgencyFor(message.severity),
      topic: topicFor(tag),
      deliveryId: message.deliveryId,
      s,
      signal,
    };
    const outcomes = await Promise.all(subs.map((sub) => pushOne(push, sub, body, o)));
    const sent = outcomes.filter((x) => x.kind === 'sent').length;
    const gone = outcomes.filter((x) => x.kind === 'gone').length;
    // Browsers that failed for a while are tried again; those that took it are skipped on the retry.
    const rate = outcomes.filter((x): x is Extract<Outcome, { kind: 'rate' }> => x.kind === 'rate');
    if (rate.length) throw new RateLimitedError(rate[0]!.message, Math.max(...rate.map((x) => x.retryAfterMs)));
    const retry = outcomes.find((x): x is Extract<Outcome, { kind: 'retry' }> => x.kind === 'retry');
    if (retry) throw new RetryableSendError(retry.message, retry.status);
    const permanent = outcomes.find((x): x is Extract<Outcome, { kind: 'permanent' }> => x.kind === 'permanent');
    if (!sent) {
      if (permanent) throw new PermanentSendError(permanent.message, permanent.status);
      throw new PermanentSendError(s.allGone, 410);
    }
    const detail = [
      s.delivered(sent, subs.length),
      gone ? s.removed(gone) : '',
      permanent ? permanent.message : '',
      cut ? s.cut(cut) : '',
    ]
      .filter(Boolean)
      .join(' ');
    return { detail, messageRef: { tag } };
  }

  return {
    send: (message, { signal }) => deliver(message, signal, message.eventId, false),
    /**
     * A later event about the same thing replaces the notification the browser shows (same tag),
     * alerting again; a browser that dismissed it shows the new one.
     */
    async update({ previous, message }, { signal }) {
      const tag =
        typeof previous.messageRef.tag === 'string' && previous.messageRef.tag
          ? previous.messageRef.tag
          : message.eventId;
      return deliver(message, signal, tag, true);
    },
  };
}

export default defineTarget({
  manifest: {
    id: 'webpush',
    kind: 'target',
    apiVersion: PLUGIN_API_VERSION,
    displayName: 'Browser notifications (Web Push)',
    description: 'Shows notifications in the browsers you subscribed on the account page of the web client.',
    locales: { en: enLocale, ru: ruLocale },
    configSchema,
    // The whole message travels in one encrypted record of at most 4096 bytes; see payload.ts.
    limits: {
      maxMessageLength: MAX_BODY_LENGTH,
      maxTitleLength: MAX_TITLE_LENGTH,
      formats: ['text'],
      overflow: 'truncate',
      concurrency: 4,
    },
  },
  create: (ctx) => createWebPushTarget(ctx as TargetContext<Record<string, never>>),
});
