/**
 * What a webhook answer means for the delivery: done, retry later, retry after a delay,
 * give up, or the webhook itself is gone (the owner must replace the URL).
 */

import type { OutboundResponse } from '@herald/plugin-api';
import {
  AuthFailedError,
  errorCode,
  OUTBOUND_REFUSED,
  PermanentSendError,
  RateLimitedError,
  RetryableSendError,
} from '@herald/plugin-api';
import type { ChatFormat } from './config.ts';

/** Delay used when a 429 names none. */
export const DEFAULT_RETRY_AFTER_MS = 5_000;

const SERVICE_NAMES: Record<ChatFormat, string> = { discord: 'Discord', slack: 'Slack', mattermost: 'Mattermost' };

function safeJson(res: OutboundResponse): Record<string, unknown> | undefined {
  try {
    const v = res.json();
    return v && typeof v === 'object' ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The service's own words for the failure: Discord `{message, code}`, Slack's plain-text code
 * (`invalid_token`, `channel_not_found`…), Mattermost's AppError `{id, message}`.
 */
export function remoteDetail(format: ChatFormat, res: OutboundResponse): { code?: string; text: string } {
  const body = safeJson(res);
  if (format === 'discord' && body && typeof body.message === 'string') {
    return { code: body.code !== undefined ? String(body.code) : undefined, text: body.message };
  }
  if (format === 'mattermost' && body && typeof body.message === 'string') {
    return { code: typeof body.id === 'string' ? body.id : undefined, text: body.message };
  }
  const raw = res.text().replace(/\s+/g, ' ').trim().slice(0, 200);
  if (format === 'slack' && /^[a-z_]+$/.test(raw)) return { code: raw, text: raw };
  return { text: raw || `HTTP ${res.status}` };
}

/**
 * Milliseconds to wait from a 429: Discord's JSON `retry_after` (float seconds), then `Retry-After` (seconds or a
 * date).
 */
export function retryAfterMs(format: ChatFormat, res: OutboundResponse, now: Date): number {
  if (format === 'discord') {
    const after = safeJson(res)?.retry_after;
    if (typeof after === 'number' && after >= 0) return Math.ceil(after * 1000);
  }
  const header = res.headers['retry-after'] ?? res.headers['x-ratelimit-reset-after'];
  if (header !== undefined) {
    const seconds = Number(header);
    if (Number.isFinite(seconds) && seconds >= 0) return Math.ceil(seconds * 1000);
    const at = Date.parse(header);
    if (!Number.isNaN(at)) return Math.max(0, at - now.getTime());
  }
  return DEFAULT_RETRY_AFTER_MS;
}

/** The error to throw for a non-2xx answer. */
export function failureFor(format: ChatFormat, res: OutboundResponse, now: Date): Error {
  const name = SERVICE_NAMES[format];
  const { code, text } = remoteDetail(format, res);
  const said = `${name} answered ${res.status}: ${text}${code && code !== text ? ` (${code})` : ''}`;
  const status = res.status;
  if (status === 429) return new RateLimitedError(said, retryAfterMs(format, res, now), 429);
  // 501 is Mattermost with incoming webhooks switched off: waiting does not fix that.
  if (status === 501) return new PermanentSendError(`${said}; incoming webhooks are disabled on the server`, status);
  if (status >= 500 || status === 408) return new RetryableSendError(said, status);
  // The webhook URL no longer authenticates: the owner has to create a new one.
  // AuthFailedError has no status field; it is attached so the failure metric records the HTTP answer, not 0.
  const rejected = (why: string) =>
    new AuthFailedError(`${said}; ${why}, replace the webhook URL`, { statusCode: status });
  if (status === 401) return rejected('the webhook token was rejected');
  if (format === 'slack' && code === 'invalid_token') return rejected('the webhook was revoked');
  if (format === 'mattermost' && code === 'web.incoming_webhook.invalid.app_error')
    return rejected('the webhook no longer exists');
  if (status === 404) return new PermanentSendError(`${said}; the webhook or its channel does not exist`, status);
  return new PermanentSendError(said, status);
}

/** The error to throw when no HTTP answer came back. */
export function transportFailure(format: ChatFormat, err: unknown): Error {
  const message = err instanceof Error ? err.message : String(err);
  // A refused destination (private address not allowed by the operator) will not change by retrying.
  if (errorCode(err) === OUTBOUND_REFUSED)
    return new PermanentSendError(`${SERVICE_NAMES[format]} webhook: ${message}`, 0, { cause: err });
  return new RetryableSendError(`${SERVICE_NAMES[format]} webhook unreachable: ${message}`, 0, { cause: err });
}

/**
 * A send stopped (timed out, or the service stopping) while it waited for its turn to post: nothing was posted, so it
 * may go again.
 */
export function stoppedWaiting(format: ChatFormat, reason: unknown): Error {
  const why = reason instanceof Error ? reason.message : String(reason ?? 'aborted');
  return new RetryableSendError(
    `${SERVICE_NAMES[format]} webhook: the send was stopped (${why}) while it waited for an earlier post to this ` +
      'webhook to finish; nothing was posted.',
    0,
  );
}
