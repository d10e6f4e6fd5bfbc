/**
 * Per-bot webhook secrets. A bot service proves each webhook delivery with a secret the core gave
 * it in setWebhook; each bot has its own, derived from SERVICE_MESSAGING_WEBHOOK_SECRET (the key)
 * and the bot's webhook path id: base64url(HMAC-SHA256(key, "herald/bot-webhook-secret/v1/" + path id)),
 * 43 characters of the `A-Za-z0-9_-` alphabet bot services accept. The key never leaves the
 * service: a user who points a bot at an API server of their own learns that bot's secret, which
 * proves nothing on any other path.
 *
 * Derived rather than stored, the secrets are in no table and no backup. A bot's secret changes
 * with its path id (a restore without it) and with the key; `webhook_key_id` on the bot records
 * which key its registered webhook uses, so the runtime registers it again after either.
 */
import crypto from 'node:crypto';

/** `webhook_key_id` of a webhook registered with the shared value itself (before per-bot secrets). */
export const SHARED_SECRET = 'shared';

const hmac = (key: string, text: string) => crypto.createHmac('sha256', key).update(text).digest();

/** The secret a bot whose webhook path id is `pathId` gives its service. */
export function botWebhookSecret(key: string, pathId: string): string {
  return hmac(key, `herald/bot-webhook-secret/v1/${pathId}`).toString('base64url');
}

/** The fingerprint of a key, stored as `webhook_key_id` (tells nothing about the key). */
export function webhookKeyId(key: string): string {
  return `v1:${hmac(key, 'herald/bot-webhook-key-id/v1').subarray(0, 8).toString('hex')}`;
}
