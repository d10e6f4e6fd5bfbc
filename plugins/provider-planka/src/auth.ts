/** Planka authenticates webhooks with the configured access token as a bearer token. */

import type { WebhookAuthRequest, WebhookVerdict } from '@herald/plugin-api';
import { safeEqual, WebhookRejectedError } from '@herald/plugin-api';

const BEARER = /^Bearer[ \t]+(.+)$/i;

/**
 * The plugin's `verifyWebhook`, decided from the headers before the body is read: throws
 * WebhookRejectedError(401) unless `Authorization: Bearer <token>` matches, compared in constant time.
 */
export function verifyBearer(req: WebhookAuthRequest, token: string): WebhookVerdict {
  const m = BEARER.exec(req.headers.authorization?.trim() ?? '');
  if (!m) throw new WebhookRejectedError(401, 'missing bearer token; set the access token on the Planka webhook');
  if (!safeEqual(m[1]!.trim(), token)) throw new WebhookRejectedError(401, 'bearer token does not match');
  return 'ok';
}
