import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { WebhookRejectedError } from './errors.ts';
import type { InboundWebhook } from './index.ts';

/**
 * Compares two strings in time independent of where they differ. Both sides are hashed first so
 * that inputs of different lengths compare without leaking the expected length.
 */
export function safeEqual(given: string, expected: string): boolean {
  const a = createHash('sha256').update(given, 'utf8').digest();
  const b = createHash('sha256').update(expected, 'utf8').digest();
  return timingSafeEqual(a, b) && given.length === expected.length;
}

/** Lower-case hex HMAC-SHA256 of `body` keyed with `secret`: verify webhook signatures over the raw body. */
export function hmacSha256Hex(secret: string, body: Uint8Array): string {
  return createHmac('sha256', secret).update(body).digest('hex');
}

/** The webhook's JSON body, parsed from the raw bytes when the sender gave no JSON content type; 400 otherwise. */
export function jsonBody(req: InboundWebhook): unknown {
  if (req.body !== undefined) return req.body;
  try {
    return JSON.parse(req.rawBody.toString('utf8'));
  } catch {
    throw new WebhookRejectedError(400, 'the request body must be JSON');
  }
}
