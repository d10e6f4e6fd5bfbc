/**
 * Authentication of Grafana's webhook requests. Bearer and basic are decided from the headers
 * alone; an HMAC signature (`hmac`) is checked over the exact body bytes, preceded by
 * `<timestamp>:` when the contact point sends a timestamp header (Grafana signs
 * `HMAC-SHA256(secret, timestamp + ":" + body)` then, and the body alone otherwise, as lower-case hex).
 */

import type { WebhookAuthRequest, WebhookVerdict } from '@herald/plugin-api';
import { hmacSha256Hex, safeEqual, WebhookRejectedError } from '@herald/plugin-api';
import type { GrafanaConfig } from './config.ts';

/**
 * Headers Grafana puts the signature in when the contact point names none: its documentation and
 * form say `X-Grafana-Alerting-Signature`, the sender's built-in default is `X-Grafana-Alert-Signature`.
 */
export const DEFAULT_SIGNATURE_HEADERS = ['x-grafana-alerting-signature', 'x-grafana-alert-signature'];
/** Largest difference between a signed timestamp and Herald's clock, in seconds. */
export const MAX_SKEW_SECONDS = 300;

const CREDENTIALS = /^(\S+)[ \t]+(\S.*)$/;
const HEX_SHA256 = /^[0-9a-f]{64}$/i;
const UNIX_SECONDS = /^\d{1,12}$/;

/** The signature as sent, and the timestamp when the config names a timestamp header. */
export function signatureOf(cfg: GrafanaConfig, req: WebhookAuthRequest): { signature: string; timestamp?: string } {
  const names = cfg.signature_header ? [cfg.signature_header.toLowerCase()] : DEFAULT_SIGNATURE_HEADERS;
  const signature =
    names
      .map((n) => req.headers[n])
      .find((v) => v !== undefined)
      ?.trim() ?? '';
  if (!HEX_SHA256.test(signature)) {
    throw new WebhookRejectedError(
      401,
      `missing or malformed ${cfg.signature_header || 'X-Grafana-Alerting-Signature'} header (hex HMAC-SHA256 of ` +
        'the body): set HMAC Signature in the contact point',
    );
  }
  if (!cfg.timestamp_header) return { signature: signature.toLowerCase() };
  const timestamp = req.headers[cfg.timestamp_header.toLowerCase()]?.trim() ?? '';
  if (!UNIX_SECONDS.test(timestamp)) {
    throw new WebhookRejectedError(
      401,
      `missing or malformed ${cfg.timestamp_header} header (Unix seconds): set the same Timestamp header in the ` +
        `contact point's HMAC Signature`,
    );
  }
  return { signature: signature.toLowerCase(), timestamp };
}

/** `verifyWebhook`: `ok`, `needs_body` for a signature before the body is read, or a 401 saying what is wrong. */
export function verifyAuth(cfg: GrafanaConfig, req: WebhookAuthRequest, now: Date): WebhookVerdict {
  if (cfg.auth === 'none') return 'ok';
  if (cfg.auth === 'hmac') {
    const { signature, timestamp } = signatureOf(cfg, req);
    if (timestamp !== undefined) {
      const skew = Math.abs(now.getTime() / 1000 - Number(timestamp));
      if (skew > MAX_SKEW_SECONDS) {
        throw new WebhookRejectedError(
          401,
          `the ${cfg.timestamp_header} timestamp is ${Math.round(skew)} s away from Herald's clock (at most ` +
            `${MAX_SKEW_SECONDS} s)`,
        );
      }
    }
    if (!req.rawBody) return 'needs_body';
    const signed = timestamp === undefined ? req.rawBody : Buffer.concat([Buffer.from(`${timestamp}:`), req.rawBody]);
    if (!safeEqual(signature, hmacSha256Hex(cfg.secret ?? '', signed)))
      throw new WebhookRejectedError(401, 'signature does not match the body');
    return 'ok';
  }
  const m = CREDENTIALS.exec(req.headers.authorization?.trim() ?? '');
  const scheme = m ? m[1]!.toLowerCase() : undefined;
  const value = m ? m[2]!.trim() : '';
  if (cfg.auth === 'bearer') {
    if (scheme !== 'bearer')
      throw new WebhookRejectedError(
        401,
        'missing bearer token: set Authorization Header (scheme Bearer, credentials <secret>) in the contact point',
      );
    if (!safeEqual(value, cfg.secret ?? '')) throw new WebhookRejectedError(401, 'bearer token does not match');
    return 'ok';
  }
  if (scheme !== 'basic')
    throw new WebhookRejectedError(
      401,
      'missing basic credentials: set HTTP Basic Authentication in the contact point',
    );
  const decoded = Buffer.from(value, 'base64').toString('utf8');
  if (!safeEqual(decoded, `${cfg.username ?? ''}:${cfg.secret ?? ''}`))
    throw new WebhookRejectedError(401, 'basic credentials do not match');
  return 'ok';
}
