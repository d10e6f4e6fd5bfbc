/**
 * Authentication of Alertmanager's requests, decided from the headers alone (before the body is
 * read): the `Authorization` header its `http_config` sends.
 */

import type { WebhookAuthRequest, WebhookVerdict } from '@herald/plugin-api';
import { safeEqual, WebhookRejectedError } from '@herald/plugin-api';
import type { AlertmanagerConfig } from './config.ts';

const CREDENTIALS = /^(\S+)[ \t]+(\S.*)$/;

/** The scheme (lower case) and credentials of an `Authorization` header, if it has both. */
function authorization(req: WebhookAuthRequest): { scheme: string; value: string } | undefined {
  const m = CREDENTIALS.exec(req.headers.authorization?.trim() ?? '');
  return m ? { scheme: m[1]!.toLowerCase(), value: m[2]!.trim() } : undefined;
}

/** `verifyWebhook`: `ok`, or a 401 `WebhookRejectedError` saying what is missing or wrong. */
export function verifyAuth(cfg: AlertmanagerConfig, req: WebhookAuthRequest): WebhookVerdict {
  if (cfg.auth === 'none') return 'ok';
  const given = authorization(req);
  if (cfg.auth === 'bearer') {
    if (given?.scheme !== 'bearer') {
      throw new WebhookRejectedError(
        401,
        'missing bearer token: set http_config.authorization.credentials in the Alertmanager receiver ' +
          '(Authorization: Bearer <secret>)',
      );
    }
    if (!safeEqual(given.value, cfg.secret ?? '')) throw new WebhookRejectedError(401, 'bearer token does not match');
    return 'ok';
  }
  if (given?.scheme !== 'basic') {
    throw new WebhookRejectedError(
      401,
      'missing basic credentials: set http_config.basic_auth in the Alertmanager receiver',
    );
  }
  const decoded = Buffer.from(given.value, 'base64').toString('utf8');
  if (!safeEqual(decoded, `${cfg.username ?? ''}:${cfg.secret ?? ''}`))
    throw new WebhookRejectedError(401, 'basic credentials do not match');
  return 'ok';
}
