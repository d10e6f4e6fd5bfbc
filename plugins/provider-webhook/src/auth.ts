/** Authentication of inbound generic webhooks: none (explicit opt-in), bearer token or HMAC-SHA256. */

import type { WebhookAuthRequest, WebhookVerdict } from '@herald/plugin-api';
import { hmacSha256Hex, safeEqual, WebhookRejectedError } from '@herald/plugin-api';
import type { WebhookConfig } from './config.ts';

/** Header carrying `sha256=<hex of HMAC-SHA256(raw body)>` in `hmac_sha256` mode. */
export const SIGNATURE_HEADER = 'x-signature-256';

const BEARER = /^Bearer[ \t]+(.+)$/i;
const SIGNATURE = /^sha256=([0-9a-f]{64})$/i;

/**
 * The plugin's `verifyWebhook`: throws WebhookRejectedError(401) unless the request satisfies the
 * configured mode. `none` and `bearer` are decided from the headers, before the core reads the
 * body; `hmac_sha256` refuses a missing or malformed signature header at once and asks for the
 * body only to compare the signature.
 */
export function verifyAuth(cfg: WebhookConfig, req: WebhookAuthRequest): WebhookVerdict {
  switch (cfg.auth_mode) {
    case 'none':
      if (cfg.acknowledge_unauthenticated !== true) {
        throw new WebhookRejectedError(401, 'unauthenticated webhooks need acknowledge_unauthenticated: true');
      }
      return 'ok';
    case 'bearer': {
      const m = BEARER.exec(req.headers.authorization?.trim() ?? '');
      if (!m) throw new WebhookRejectedError(401, 'missing bearer token (Authorization: Bearer <secret>)');
      if (!safeEqual(m[1]!.trim(), cfg.secret ?? ''))
        throw new WebhookRejectedError(401, 'bearer token does not match');
      return 'ok';
    }
    case 'hmac_sha256': {
      const m = SIGNATURE.exec(req.headers[SIGNATURE_HEADER]?.trim() ?? '');
      if (!m)
        throw new WebhookRejectedError(401, 'missing or malformed X-Signature-256 header (expected sha256=<hex>)');
      if (!req.rawBody) return 'needs_body';
      const expected = hmacSha256Hex(cfg.secret ?? '', req.rawBody);
      if (!safeEqual(m[1]!.toLowerCase(), expected))
        throw new WebhookRejectedError(401, 'signature does not match the body');
      return 'ok';
    }
    default:
      throw new WebhookRejectedError(401, 'unknown auth_mode');
  }
}
