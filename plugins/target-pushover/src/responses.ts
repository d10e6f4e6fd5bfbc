/**
 * What a Pushover answer means for the delivery. Pushover answers every request with JSON:
 * `{"status": 1, "request": "<uuid>"}` when accepted, else an HTTP 4xx with `status` other than 1,
 * an `errors` array saying what was wrong and the invalid parameters named as keys
 * (`{"user": "invalid", "errors": ["user identifier is invalid"], "status": 0, "request": "…"}`).
 * Its documentation: a 4xx must not be retried as it is; after a 5xx or no answer, retry no sooner
 * than 5 s; a 429 means the application's monthly limit is used up until `X-Limit-App-Reset`.
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

/** Delay for a 429 without `X-Limit-App-Reset` or `Retry-After`. */
export const DEFAULT_RETRY_AFTER_MS = 15 * 60_000;

export interface PushoverAnswer {
  status?: unknown;
  request?: unknown;
  errors?: unknown;
  token?: unknown;
  user?: unknown;
  [field: string]: unknown;
}

export function answerOf(res: OutboundResponse): PushoverAnswer | undefined {
  try {
    const v = res.json<PushoverAnswer>();
    return v && typeof v === 'object' && !Array.isArray(v) ? v : undefined;
  } catch {
    return undefined;
  }
}

/** Pushover's own words: its `errors`, joined, else the start of whatever it answered. */
export function remoteDetail(res: OutboundResponse, body = answerOf(res)): string {
  const errors = Array.isArray(body?.errors) ? body.errors.filter((e): e is string => typeof e === 'string') : [];
  if (errors.length) return errors.join('; ').slice(0, 500);
  const raw = res
    .text()
    .replace(/<[^>]*>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, 200);
  return raw || `HTTP ${res.status}`;
}

/** Milliseconds to wait after a 429: until `X-Limit-App-Reset` (Unix seconds), else `Retry-After`, else 15 min. */
export function retryAfterMs(res: OutboundResponse, now: Date): number {
  const reset = Number(res.headers['x-limit-app-reset']);
  if (Number.isFinite(reset) && reset > 0) return Math.max(0, reset * 1000 - now.getTime());
  const header = res.headers['retry-after'];
  if (header !== undefined) {
    const seconds = Number(header);
    if (Number.isFinite(seconds) && seconds >= 0) return Math.ceil(seconds * 1000);
    const at = Date.parse(header);
    if (!Number.isNaN(at)) return Math.max(0, at - now.getTime());
  }
  return DEFAULT_RETRY_AFTER_MS;
}

/** The error to throw for an answer other than 200 with `status: 1`, worded in the target's language. */
export function failureFor(res: OutboundResponse, locale: Locale, now: Date): Error {
  const status = res.status;
  const body = answerOf(res);
  const said = remoteDetail(res, body);
  if (status >= 200 && status < 300) return new PermanentSendError(text.refusedMessage(locale, said), status);
  const head = text.answered(locale, status, said);
  if (status === 429) return new RateLimitedError(`${head}; ${text.monthlyLimit(locale)}`, retryAfterMs(res, now), 429);
  if (status >= 500 || status === 408) return new RetryableSendError(head, status);
  // The keys are the configuration's credentials: a rejected one needs the owner, not a retry.
  if (body?.token === 'invalid' || status === 401)
    return new AuthFailedError(`${head}; ${text.tokenRejected(locale)}`, { statusCode: status });
  if (body?.user === 'invalid')
    return new AuthFailedError(`${head}; ${text.userRejected(locale)}`, { statusCode: status });
  return new PermanentSendError(head, status);
}

/** The error to throw when no HTTP answer came back. */
export function transportFailure(err: unknown, locale: Locale): Error {
  const why = err instanceof Error ? err.message : String(err);
  if (errorCode(err) === OUTBOUND_REFUSED) return new PermanentSendError(text.refused(locale, why), 0, { cause: err });
  if (errorCode(err) === OUTBOUND_REDIRECTS) return new PermanentSendError(text.redirect(locale), 0, { cause: err });
  return new RetryableSendError(text.unreachable(locale, why), 0, { cause: err });
}
