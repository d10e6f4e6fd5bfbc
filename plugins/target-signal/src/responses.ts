/**
 * What a signal-cli REST API answer means for the delivery. `POST /v2/send` answers `201` with
 * `{"timestamp": "…"}` (newer servers: a list of them, with per-recipient `errors`); a failure is
 * `{"error": "…"}`, mostly `400` whatever the cause (signal-cli's own message), `429` when Signal
 * rate-limits the sender (with `challenge_tokens`).
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

/**
 * Delay after a 429 without `Retry-After`. Signal's sender limits last minutes to hours and
 * retrying quickly prolongs them.
 */
export const DEFAULT_RETRY_AFTER_MS = 5 * 60_000;

/**
 * A 400 whose message says the REST API could not reach signal-cli or Signal (its JSON-RPC
 * daemon restarting, a network timeout): waiting can fix it, unlike an unregistered recipient.
 */
const TRANSIENT = new RegExp(
  /time(d)? ?out|connection (refused|reset|closed)|connect: |no route to host|/.source +
    /network|temporar|unavailable|try again|EOF\b/.source,
  'i',
);

export function remoteDetail(res: OutboundResponse): string {
  try {
    const e = res.json<{ error?: unknown }>()?.error;
    if (typeof e === 'string' && e.trim()) return e.replace(/\s+/g, ' ').trim().slice(0, 300);
  } catch {
    /* not JSON */
  }
  return res.text().replace(/\s+/g, ' ').trim().slice(0, 200) || `HTTP ${res.status}`;
}

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
  const detail = remoteDetail(res);
  const said = w.answered(status, detail);
  if (status === 429) return new RateLimitedError(`${said}; ${w.rateLimited}`, retryAfterMs(res, now), 429);
  if (status >= 500 || status === 408) return new RetryableSendError(said, status);
  if (status === 401 || status === 403)
    return new AuthFailedError(`${said}; ${w.proxyRefused}`, { statusCode: status });
  if (status === 404 || status === 405) return new PermanentSendError(`${said}; ${w.noApi}`, status);
  if (status === 400 && TRANSIENT.test(detail)) return new RetryableSendError(said, status);
  return new PermanentSendError(said, status);
}

/** The error to throw when no HTTP answer came back. */
export function transportFailure(locale: Locale, err: unknown): Error {
  const w = words(locale);
  const message = err instanceof Error ? err.message : String(err);
  if (errorCode(err) === OUTBOUND_REFUSED) return new PermanentSendError(w.refused(message), 0, { cause: err });
  return new RetryableSendError(w.unreachable(message), 0, { cause: err });
}

interface SendAnswer {
  timestamp?: unknown;
  errors?: { recipients?: Array<{ number?: unknown; uuid?: unknown; username?: unknown; reason?: unknown }> };
}

/** The timestamp of a successful send and the recipients it did not reach, from either answer shape. */
export function parseSent(res: OutboundResponse): { timestamp?: string; failed: string[] } {
  let body: unknown;
  try {
    body = res.json();
  } catch {
    return { failed: [] };
  }
  const answers = (Array.isArray(body) ? body : [body]) as SendAnswer[];
  const first = answers.find((a) => a && (typeof a.timestamp === 'string' || typeof a.timestamp === 'number'));
  const failed = answers
    .flatMap((a) => a?.errors?.recipients ?? [])
    .map((r) => `${String(r.number || r.uuid || r.username || '?')} (${String(r.reason ?? 'failed')})`);
  return { timestamp: first ? String(first.timestamp) : undefined, failed };
}
