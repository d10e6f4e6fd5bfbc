/** The optional bearer check, decided from the headers before the body is read. */

import type { WebhookAuthRequest, WebhookVerdict } from '@herald/plugin-api';
import { safeEqual, WebhookRejectedError } from '@herald/plugin-api';
import type { UptimeKumaConfig } from './config.ts';

const BEARER = /^Bearer[ \t]+(\S.*)$/i;

/** `verifyWebhook`: `ok`, or a 401 saying what is missing or wrong. */
export function verifyAuth(cfg: UptimeKumaConfig, req: WebhookAuthRequest): WebhookVerdict {
  if (cfg.auth === 'none') return 'ok';
  const m = BEARER.exec(req.headers.authorization?.trim() ?? '');
  if (!m)
    throw new WebhookRejectedError(
      401,
      'missing bearer token: add {"Authorization": "Bearer <secret>"} to the notification\'s Additional Headers ' +
        'in Uptime Kuma',
    );
  if (!safeEqual(m[1]!.trim(), cfg.secret ?? '')) throw new WebhookRejectedError(401, 'bearer token does not match');
  return 'ok';
}
