/**
 * Typed errors a plugin throws to tell the core what to do next.
 * The core matches on `code`, never on `instanceof`, so a plugin bundling its
 * own copy of this module is still understood.
 */
export class PluginError extends Error {
  readonly code: string;
  constructor(code: string, message: string, options?: ErrorOptions) {
    super(message, options);
    this.code = code;
    this.name = new.target.name;
  }
}

/** The remote service is not reachable yet; the core retries in the background with backoff. */
export class NotReadyError extends PluginError {
  constructor(message: string, options?: ErrorOptions) {
    super('NOT_READY', message, options);
  }
}

/**
 * The credential was rejected; the core disables the instance and alerts its owner. `statusCode` is
 * the HTTP status that said so (401, 403…), 0 when the rejection did not come over HTTP (SMTP, NUT).
 */
export class AuthFailedError extends PluginError {
  readonly statusCode: number;
  constructor(message: string, options?: ErrorOptions & { statusCode?: number }) {
    super('AUTH_FAILED', message, options);
    this.statusCode = options?.statusCode ?? 0;
  }
}

/** The configuration can never work; permanent, no retry. */
export class ConfigError extends PluginError {
  constructor(message: string, options?: ErrorOptions) {
    super('CONFIG', message, options);
  }
}

/** The remote asked us to slow down; retry after `retryAfterMs`. */
export class RateLimitedError extends PluginError {
  readonly retryAfterMs: number;
  readonly statusCode: number;
  constructor(message: string, retryAfterMs: number, statusCode = 429, options?: ErrorOptions) {
    super('RATE_LIMITED', message, options);
    this.retryAfterMs = retryAfterMs;
    this.statusCode = statusCode;
  }
}

/** A send that will never succeed as it is (4xx other than 429, bad recipient, rejected credential). */
export class PermanentSendError extends PluginError {
  readonly statusCode: number;
  constructor(message: string, statusCode = 0, options?: ErrorOptions) {
    super('PERMANENT_SEND', message, options);
    this.statusCode = statusCode;
  }
}

/** A send that may succeed later (5xx, network failure, timeout). `statusCode` 0 means no HTTP response. */
export class RetryableSendError extends PluginError {
  readonly statusCode: number;
  constructor(message: string, statusCode = 0, options?: ErrorOptions) {
    super('RETRYABLE_SEND', message, options);
    this.statusCode = statusCode;
  }
}

/**
 * An inbound webhook the plugin refuses. `status` is the HTTP answer:
 * 401 bad or missing signature, 409 replayed delivery, 422 unexpected payload shape.
 */
export class WebhookRejectedError extends PluginError {
  readonly status: number;
  constructor(status: number, message: string, options?: ErrorOptions) {
    super('WEBHOOK_REJECTED', message, options);
    this.status = status;
  }
}

export function errorCode(err: unknown): string | undefined {
  return typeof err === 'object' && err !== null && typeof (err as { code?: unknown }).code === 'string'
    ? (err as { code: string }).code
    : undefined;
}

/**
 * Codes of the errors the outbound client (`ctx.http`) throws. Match on these constants, never on
 * the message: `OUTBOUND_REFUSED` means the operator's address policy refused the destination (a
 * configuration problem, not worth retrying); the others are network conditions.
 */
export const OUTBOUND_REFUSED = 'OUTBOUND_REFUSED';
/** The request (or the name resolution or connection within it) ran out of time. */
export const OUTBOUND_TIMEOUT = 'OUTBOUND_TIMEOUT';
/** The response body grew past `maxResponseBytes`. */
export const OUTBOUND_TOO_LARGE = 'OUTBOUND_TOO_LARGE';
/** Too many redirects, or a redirect where `maxRedirects: 0` refused them. */
export const OUTBOUND_REDIRECTS = 'OUTBOUND_REDIRECTS';
/** The host name did not resolve. */
export const OUTBOUND_DNS = 'OUTBOUND_DNS';
/** Any other network failure (connection refused or reset, TLS…). */
export const OUTBOUND_NETWORK = 'OUTBOUND_NETWORK';

export type OutboundErrorCode =
  | typeof OUTBOUND_REFUSED
  | typeof OUTBOUND_TIMEOUT
  | typeof OUTBOUND_TOO_LARGE
  | typeof OUTBOUND_REDIRECTS
  | typeof OUTBOUND_DNS
  | typeof OUTBOUND_NETWORK;

/** A failure of the outbound client; `code` is one of the `OUTBOUND_*` constants. */
export class OutboundError extends PluginError {
  declare readonly code: OutboundErrorCode;
  constructor(code: OutboundErrorCode, message: string, options?: ErrorOptions) {
    super(code, message, options);
  }
}
