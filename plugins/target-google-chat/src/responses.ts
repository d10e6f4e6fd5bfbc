/**
 * What a Google Chat answer means for the delivery. Success is `200` with the created Message;
 * errors are Google's JSON `{"error": {"code", "message", "status", "details"}}`.
 */

import type { Locale, OutboundResponse } from '@herald/plugin-api';
import {
  AuthFailedError,
  errorCode,
  OUTBOUND_REFUSED,
  PermanentSendError,
  RateLimitedError,
  RetryableSendError,
} from '@herald/plugin-api';
import { words } from './strings.ts';

/** Delay used when a 429 names none (Google Chat allows about one webhook message a second per space). */
export const DEFAULT_RETRY_AFTER_MS = 5_000;

interface GoogleError {
  message?: unknown;
  status?: unknown;
  details?: Array<{ reason?: unknown }>;
}

function googleError(res: OutboundResponse): GoogleError | undefined {
  try {
    const e = res.json<{ error?: GoogleError }>()?.error;
    return e && typeof e === 'object' ? e : undefined;
  } catch {
    return undefined;
  }
}

/** Google's own words: `message (STATUS)`, else the body's first 200 characters. */
export function remoteDetail(res: OutboundResponse): string {
  const e = googleError(res);
  if (e && typeof e.message === 'string') {
    const message = e.message.replace(/\s+/g, ' ').trim().slice(0, 300);
    return typeof e.status === 'string' && e.status ? `${message} (${e.status})` : message;
  }
  return res.text().replace(/\s+/g, ' ').trim().slice(0, 200) || `HTTP ${res.status}`;
}

/** Milliseconds to wait from a 429's `Retry-After` (seconds or an HTTP date). */
export function retryAfterMs(res: OutboundResponse, now: Date): number {
  const header = res.headers['retry-after'];
  if (header !== undefined) {
    const seconds = Number(header);
    if (header.trim() !== '' && Number.isFinite(seconds) && seconds >= 0) return Math.ceil(seconds * 1000);
    const at = Date.parse(header);
    if (!Number.isNaN(at)) return Math.max(0, at - now.getTime());
  }
  return DEFAULT_RETRY_AFTER_MS;
}

/** The error to throw for a non-2xx answer, worded in the target's language. */
export function failureFor(locale: Locale, res: OutboundResponse, now: Date): Error {
  const w = words(locale);
  const status = res.status;
  const said = w.answered(status, remoteDetail(res));
  if (status === 429) return new RateLimitedError(said, retryAfterMs(res, now), 429);
  if (status >= 500 || status === 408) return new RetryableSendError(said, status);
  const apiKeyInvalid = googleError(res)?.details?.some((d) => d?.reason === 'API_KEY_INVALID') ?? false;
  // The webhook's token (or the key beside it) no longer authenticates: the owner must replace the URL.
  if (status === 401 || status === 403 || apiKeyInvalid)
    return new AuthFailedError(`${said}; ${w.credentialRejected}`, { statusCode: status });
  if (status === 404) return new PermanentSendError(`${said}; ${w.spaceGone}`, status);
  return new PermanentSendError(said, status);
}

/** The error to throw when no HTTP answer came back. */
export function transportFailure(locale: Locale, err: unknown): Error {
  const w = words(locale);
  const message = err instanceof Error ? err.message : String(err);
  if (errorCode(err) === OUTBOUND_REFUSED) return new PermanentSendError(w.refused(message), 0, { cause: err });
  return new RetryableSendError(w.unreachable(message), 0, { cause: err });
}
