/**
 * What an ntfy answer means for the delivery. ntfy answers errors as JSON
 * `{"code": 40101, "http": 401, "error": "unauthorized", "link": "…"}` (the server's errHTTP).
 */

import type { Locale, OutboundResponse } from '@herald/plugin-api';
import {
  AuthFailedError,
  errorCode,
  OUTBOUND_REDIRECTS,
  OUTBOUND_REFUSED,
  PermanentSendError,
  RateLimitedError,
  RetryableSendError,
} from '@herald/plugin-api';
import { text } from './text.ts';

/** Delay used for a 429 that names none: ntfy refills a visitor's request bucket at one request per 5 s. */
export const DEFAULT_RETRY_AFTER_MS = 5_000;
/** ntfy's error code for "limit reached: daily message quota reached"; quotas reset at 00:00 UTC. */
export const DAILY_QUOTA_CODE = 42908;

interface NtfyError {
  code?: number;
  http?: number;
  error?: string;
  link?: string;
}

function errorBody(res: OutboundResponse): NtfyError | undefined {
  try {
    const v = res.json<NtfyError>();
    return v && typeof v === 'object' ? v : undefined;
  } catch {
    return undefined;
  }
}

/** The server's words for the failure: `error (code)`, or the start of whatever it answered. */
export function remoteDetail(res: OutboundResponse): { code?: number; said: string } {
  const body = errorBody(res);
  if (body && typeof body.error === 'string') {
    return {
      code: typeof body.code === 'number' ? body.code : undefined,
      said: `${body.error}${typeof body.code === 'number' ? ` (${body.code})` : ''}`,
    };
  }
  const raw = res.text().replace(/\s+/g, ' ').trim().slice(0, 200);
  return { said: raw || `HTTP ${res.status}` };
}

/** Milliseconds until the next 00:00 UTC after `now`. */
export function untilUtcMidnight(now: Date): number {
  const next = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
  return next - now.getTime();
}

/** Milliseconds to wait after a 429: `Retry-After` (a proxy's; ntfy sends none), the daily quota's reset, else 5 s. */
export function retryAfterMs(res: OutboundResponse, code: number | undefined, now: Date): number {
  const header = res.headers['retry-after'];
  if (header !== undefined) {
    const seconds = Number(header);
    if (Number.isFinite(seconds) && seconds >= 0) return Math.ceil(seconds * 1000);
    const at = Date.parse(header);
    if (!Number.isNaN(at)) return Math.max(0, at - now.getTime());
  }
  if (code === DAILY_QUOTA_CODE) return untilUtcMidnight(now);
  return DEFAULT_RETRY_AFTER_MS;
}

/** The error to throw for a non-2xx answer, worded in the target's language. */
export function failureFor(res: OutboundResponse, locale: Locale, now: Date): Error {
  const { code, said } = remoteDetail(res);
  const status = res.status;
  const head = text.answered(locale, status, said);
  if (status === 429) {
    const why = code === DAILY_QUOTA_CODE ? text.quota(locale) : text.slowDown(locale);
    return new RateLimitedError(`${head}; ${why}`, retryAfterMs(res, code, now), 429);
  }
  if (status >= 500 || status === 408) return new RetryableSendError(head, status);
  // AuthFailedError has no status field of its own; it is attached so the failure metric records the HTTP answer.
  if (status === 401 || status === 403)
    return new AuthFailedError(`${head}; ${text.authRejected(locale)}`, { statusCode: status });
  if (status === 413) return new PermanentSendError(`${head}; ${text.tooLarge(locale)}`, status);
  return new PermanentSendError(head, status);
}

/** The error to throw when no HTTP answer came back. */
export function transportFailure(err: unknown, locale: Locale): Error {
  const why = err instanceof Error ? err.message : String(err);
  // A refused destination or a redirect does not change by retrying: the configuration must.
  if (errorCode(err) === OUTBOUND_REFUSED) return new PermanentSendError(text.refused(locale, why), 0, { cause: err });
  if (errorCode(err) === OUTBOUND_REDIRECTS) return new PermanentSendError(text.redirect(locale), 0, { cause: err });
  return new RetryableSendError(text.unreachable(locale, why), 0, { cause: err });
}
