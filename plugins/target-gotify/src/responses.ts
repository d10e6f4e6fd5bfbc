/**
 * What a Gotify answer means for the delivery. Gotify answers errors as JSON
 * `{"error": "Unauthorized", "errorCode": 401, "errorDescription": "you need to provide a valid access token or user
 * credentials to access this api"}`.
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

/** Delay used for a 429 that names none (Gotify itself has no rate limit; a proxy in front may). */
export const DEFAULT_RETRY_AFTER_MS = 5_000;

/** The server's words: `errorDescription`, else `error`, else the start of whatever it answered. */
export function remoteDetail(res: OutboundResponse): string {
  try {
    const body = res.json<{ error?: unknown; errorDescription?: unknown }>();
    if (body && typeof body === 'object') {
      if (typeof body.errorDescription === 'string' && body.errorDescription) return body.errorDescription;
      if (typeof body.error === 'string' && body.error) return body.error;
    }
  } catch {
    /* not JSON */
  }
  const raw = res.text().replace(/\s+/g, ' ').trim().slice(0, 200);
  return raw || `HTTP ${res.status}`;
}

export function retryAfterMs(res: OutboundResponse, now: Date): number {
  const header = res.headers['retry-after'];
  if (header !== undefined) {
    const seconds = Number(header);
    if (Number.isFinite(seconds) && seconds >= 0) return Math.ceil(seconds * 1000);
    const at = Date.parse(header);
    if (!Number.isNaN(at)) return Math.max(0, at - now.getTime());
  }
  return DEFAULT_RETRY_AFTER_MS;
}

/** The error to throw for a non-2xx answer, worded in the target's language. */
export function failureFor(res: OutboundResponse, locale: Locale, now: Date): Error {
  const status = res.status;
  const head = text.answered(locale, status, remoteDetail(res));
  if (status === 429) return new RateLimitedError(`${head}; ${text.slowDown(locale)}`, retryAfterMs(res, now), 429);
  if (status >= 500 || status === 408) return new RetryableSendError(head, status);
  // A rejected token does not heal by retrying: the owner must paste a valid application token.
  if (status === 401 || status === 403)
    return new AuthFailedError(`${head}; ${text.tokenRejected(locale)}`, { statusCode: status });
  if (status === 404 || status === 405) return new PermanentSendError(`${head}; ${text.notFound(locale)}`, status);
  return new PermanentSendError(head, status);
}

/** The error to throw when no HTTP answer came back. */
export function transportFailure(err: unknown, locale: Locale): Error {
  const why = err instanceof Error ? err.message : String(err);
  if (errorCode(err) === OUTBOUND_REFUSED) return new PermanentSendError(text.refused(locale, why), 0, { cause: err });
  if (errorCode(err) === OUTBOUND_REDIRECTS) return new PermanentSendError(text.redirect(locale), 0, { cause: err });
  return new RetryableSendError(text.unreachable(locale, why), 0, { cause: err });
}
