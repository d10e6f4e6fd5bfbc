/**
 * What an Apprise API `/notify` answer means for the delivery. Asked for JSON, the server answers
 * `{"error": null | "…", "details": [[level, time, message], …]}`, the details being Apprise's
 * log of the notification (with `X-Apprise-Log-Level: INFO`, one "Sent … notification." line per
 * service that took it).
 *
 * 200 all services took it; 204 nothing to notify (no configuration under the key, or no valid
 * URL); 400 a malformed request; 424 at least one service failed, or none matched the tag; 431 the
 * payload is too large; 5xx the server failed.
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

export const DEFAULT_RETRY_AFTER_MS = 5_000;

type LogLine = [level: string, time: string, message: string];

interface Answer {
  error?: unknown;
  details?: unknown;
}

function answerOf(res: OutboundResponse): Answer | undefined {
  try {
    const v = res.json<Answer>();
    return v && typeof v === 'object' && !Array.isArray(v) ? v : undefined;
  } catch {
    return undefined;
  }
}

/** Apprise's log lines from the answer's `details`. */
export function logLines(res: OutboundResponse): LogLine[] {
  const details = answerOf(res)?.details;
  if (!Array.isArray(details)) return [];
  return details.filter(
    (l): l is LogLine => Array.isArray(l) && l.length >= 3 && l.every((x) => typeof x === 'string'),
  );
}

/** How many services took the notification: Apprise logs "Sent … notification" for each. */
export const sentCount = (lines: LogLine[]) =>
  lines.filter(([level, , msg]) => level === 'INFO' && /^sent\b.*\bnotification/i.test(msg)).length;

/** The first failure Apprise logged. */
const firstFailure = (lines: LogLine[]) =>
  lines.find(([level]) => level === 'WARNING' || level === 'ERROR' || level === 'CRITICAL')?.[2];

/**
 * Removes the configured secrets from text quoted back: Apprise may echo a service URL or a part of
 * it (a host, a token) in its log, so each URL's parts of 6 characters or more count too.
 */
export function redactor(secrets: Array<string | undefined>): (s: string) => string {
  const values = new Set<string>();
  for (const secret of secrets) {
    for (const token of secret?.split(/[\s,]+/) ?? []) {
      values.add(token);
      const rest = token.includes('://') ? token.slice(token.indexOf('://') + 3) : token;
      for (const part of rest.split(/[/:@?&=#]+/)) values.add(part);
    }
  }
  const sorted = [...values].filter((v) => v.length >= 6).sort((a, b) => b.length - a.length);
  return (s) => sorted.reduce((out, v) => out.split(v).join('[REDACTED]'), s);
}

export function remoteDetail(res: OutboundResponse): string {
  const answer = answerOf(res);
  const lines = logLines(res);
  const error = typeof answer?.error === 'string' ? answer.error : undefined;
  const failure = firstFailure(lines);
  const text = [error, failure].filter(Boolean).join(': ');
  if (text) return text.replace(/\s+/g, ' ').trim().slice(0, 300);
  return (
    res
      .text()
      .replace(/<[^>]*>/g, ' ')
      .replace(/\s+/g, ' ')
      .trim()
      .slice(0, 200) || `HTTP ${res.status}`
  );
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

/**
 * The error to throw for an answer that is not a delivery, worded in the target's language.
 * `key` names the configuration asked for (stateful); `redact` strips secrets from quoted text.
 */
export function failureFor(
  locale: Locale,
  res: OutboundResponse,
  now: Date,
  key: string | undefined,
  redact: (s: string) => string,
): Error {
  const w = words(locale);
  const status = res.status;
  const said = redact(w.answered(status, remoteDetail(res)));
  if (status === 204) return new PermanentSendError(`${said}; ${key ? w.noConfig(key) : w.noValidUrls}`, status);
  if (status === 429) return new RateLimitedError(said, retryAfterMs(res, now), 429);
  if (status === 424) {
    // Some services took it: a retry would send it to them again. None did: a retry may get through.
    return sentCount(logLines(res)) > 0
      ? new PermanentSendError(`${said}; ${w.partial}`, status)
      : new RetryableSendError(`${said}; ${w.noneSent}`, status);
  }
  if (status >= 500 || status === 408) return new RetryableSendError(said, status);
  if (status === 401 || status === 403)
    return new AuthFailedError(`${said}; ${w.authRejected}`, { statusCode: status });
  if (status === 404) return new PermanentSendError(`${said}; ${w.noApi}`, status);
  return new PermanentSendError(said, status);
}

export function transportFailure(locale: Locale, err: unknown): Error {
  const w = words(locale);
  const message = err instanceof Error ? err.message : String(err);
  if (errorCode(err) === OUTBOUND_REFUSED) return new PermanentSendError(w.refused(message), 0, { cause: err });
  return new RetryableSendError(w.unreachable(message), 0, { cause: err });
}
