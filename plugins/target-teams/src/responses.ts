/**
 * What a Workflows webhook answer means for the delivery. The trigger answers 202 Accepted once
 * it has queued the workflow run (the card is posted by the run, after the answer); errors are
 * Azure Logic Apps / Power Automate JSON `{"error": {"code", "message"}}`.
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

/** Delay used when a 429 names none. */
export const DEFAULT_RETRY_AFTER_MS = 5_000;

/** The service's own words for a failure: `error.message (error.code)`, else the body's first 200 characters. */
export function remoteDetail(res: OutboundResponse): string {
  try {
    const err = res.json<{ error?: { code?: unknown; message?: unknown } }>()?.error;
    if (err && typeof err.message === 'string') {
      const message = err.message.replace(/\s+/g, ' ').trim().slice(0, 300);
      return typeof err.code === 'string' && err.code ? `${message} (${err.code})` : message;
    }
  } catch {
    /* not JSON */
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
  // A wrong or missing signature, or a flow that only signed-in users may trigger: the owner must
  // replace the URL. AuthFailedError carries the status so the failure metric records it.
  if (status === 401 || status === 403)
    return new AuthFailedError(`${said}; ${w.signatureRejected}`, { statusCode: status });
  if (status === 404) return new PermanentSendError(`${said}; ${w.workflowGone}`, status);
  return new PermanentSendError(said, status);
}

/** The error to throw when no HTTP answer came back. */
export function transportFailure(locale: Locale, err: unknown): Error {
  const w = words(locale);
  const message = err instanceof Error ? err.message : String(err);
  // A destination the operator's address policy refuses will not change by retrying.
  if (errorCode(err) === OUTBOUND_REFUSED) return new PermanentSendError(w.refused(message), 0, { cause: err });
  return new RetryableSendError(w.unreachable(message), 0, { cause: err });
}
