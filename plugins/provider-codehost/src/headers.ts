/**
 * Where each code host puts the event name, delivery id and body signature.
 * Gitea also sends GitHub- and Gogs-style copies; Forgejo also sends Gitea-style ones.
 */

import type { InboundWebhook, WebhookAuthRequest, WebhookVerdict } from '@herald/plugin-api';
import { hmacSha256Hex, safeEqual, WebhookRejectedError } from '@herald/plugin-api';
import type { Host } from './config.ts';

interface SignatureHeader {
  name: string;
  prefix: string;
}
interface HostHeaders {
  event: string[];
  eventType: string[];
  delivery: string[];
  signature: SignatureHeader[];
}

const HUB_256: SignatureHeader = { name: 'x-hub-signature-256', prefix: 'sha256=' };

/** Header names in order of preference (lower case, as the core hands them over). */
export const HOST_HEADERS: Record<Host, HostHeaders> = {
  github: { event: ['x-github-event'], eventType: [], delivery: ['x-github-delivery'], signature: [HUB_256] },
  gitea: {
    event: ['x-gitea-event', 'x-gogs-event', 'x-github-event'],
    eventType: ['x-gitea-event-type', 'x-gogs-event-type', 'x-github-event-type'],
    delivery: ['x-gitea-delivery', 'x-gogs-delivery', 'x-github-delivery'],
    signature: [{ name: 'x-gitea-signature', prefix: '' }, HUB_256],
  },
  forgejo: {
    event: ['x-forgejo-event', 'x-gitea-event'],
    eventType: ['x-forgejo-event-type', 'x-gitea-event-type'],
    delivery: ['x-forgejo-delivery', 'x-gitea-delivery'],
    signature: [{ name: 'x-forgejo-signature', prefix: '' }, { name: 'x-gitea-signature', prefix: '' }, HUB_256],
  },
};

const HEX64 = /^[0-9a-f]{64}$/i;
const MAX_DELIVERY_ID = 200;

function first(req: InboundWebhook, names: string[]): { name: string; value: string } | undefined {
  for (const name of names) {
    const value = req.headers[name]?.trim();
    if (value) return { name, value };
  }
  return undefined;
}

/**
 * The plugin's `verifyWebhook`: the HMAC-SHA256 of the raw body against the first signature header
 * the host sends. A missing or malformed header is refused from the headers alone, before the body
 * is read; the body is asked for only to compare the signature. Throws WebhookRejectedError(401)
 * when the header is missing, malformed or wrong.
 */
export function verifySignature(host: Host, secret: string, req: WebhookAuthRequest): WebhookVerdict {
  const headers = HOST_HEADERS[host].signature;
  for (const h of headers) {
    const value = req.headers[h.name]?.trim();
    if (!value) continue;
    const hex = value.toLowerCase().startsWith(h.prefix) ? value.slice(h.prefix.length) : '';
    if (!HEX64.test(hex)) throw new WebhookRejectedError(401, `malformed ${h.name} header`);
    if (!req.rawBody) return 'needs_body';
    if (!safeEqual(hex.toLowerCase(), hmacSha256Hex(secret, req.rawBody)))
      throw new WebhookRejectedError(401, 'signature does not match the body');
    return 'ok';
  }
  throw new WebhookRejectedError(
    401,
    `missing signature header (${headers.map((h) => h.name).join(' or ')}); is the webhook secret set?`,
  );
}

export interface DeliveryInfo {
  /** Event name, e.g. `push`, `pull_request`. */
  event: string;
  /** Finer event type Gitea and Forgejo add (e.g. `pull_request_comment`), when present. */
  eventType?: string;
  deliveryId: string;
}

/** Reads event name and delivery id; 400 when either is missing. */
export function deliveryInfo(host: Host, req: InboundWebhook): DeliveryInfo {
  const h = HOST_HEADERS[host];
  const event = first(req, h.event);
  if (!event) throw new WebhookRejectedError(400, `missing ${h.event[0]} header`);
  const delivery = first(req, h.delivery);
  if (!delivery) throw new WebhookRejectedError(400, `missing ${h.delivery[0]} header`);
  if (delivery.value.length > MAX_DELIVERY_ID)
    throw new WebhookRejectedError(400, `${delivery.name} header is too long`);
  return {
    event: event.value.toLowerCase(),
    eventType: first(req, h.eventType)?.value.toLowerCase(),
    deliveryId: delivery.value,
  };
}
