import { hash, timingSafeEqual } from 'node:crypto';
import { WebhookRejectedError } from './errors.ts';
import type { InboundWebhook } from './index.ts';

/**
 * Compares two strings in time independent of where they differ. Both sides are hashed first so
 * that inputs of different lengths compare without leaking the expected length.
 */
export function safeEqual(given: string, expected: string): boolean {
  // One-shot digests, without a hash object for each side (this runs for every signed webhook).
  const a = hash('sha256', given, 'buffer');
  const b = hash('sha256', expected, 'buffer');
  return timingSafeEqual(a, b) && given.length === expected.length;
}

/** SHA-256's block size in bytes: HMAC pads its key to it (RFC 2104). */
const BLOCK = 64;

/**
 * Lower-case hex HMAC-SHA256 of `body` keyed with `secret`: verify webhook signatures over the raw body.
 *
 * RFC 2104 over two one-shot digests, H((K ^ opad) || H((K ^ ipad) || body)), rather than an HMAC object: `createHmac`
 * sets up OpenSSL's HMAC context and fetches its digest anew for each call, which in the running service cost ~20 µs
 * a webhook (a tight loop hides it, its caches warm); the one-shot digest is looked up once per process.
 */
export function hmacSha256Hex(secret: string, body: Uint8Array): string {
  let key: Uint8Array = Buffer.from(secret, 'utf8');
  if (key.length > BLOCK) key = hash('sha256', key, 'buffer');
  const inner = Buffer.allocUnsafe(BLOCK + body.length);
  const outer = Buffer.allocUnsafe(BLOCK + 32);
  for (let i = 0; i < BLOCK; i++) {
    const k = key[i] ?? 0;
    inner[i] = k ^ 0x36;
    outer[i] = k ^ 0x5c;
  }
  inner.set(body, BLOCK);
  hash('sha256', inner, 'buffer').copy(outer, BLOCK);
  const mac = hash('sha256', outer, 'hex');
  // The padded keys are the secret's equivalent: not left behind in memory that pooled buffers hand out again.
  inner.fill(0, 0, BLOCK);
  outer.fill(0);
  return mac;
}

/**
 * Deepest nesting of objects and arrays accepted in an inbound JSON body (the outermost container
 * is depth 1). The core refuses deeper bodies with 400 before it parses them; {@link jsonBody} and
 * {@link parseJsonBounded} hold what a plugin parses itself to the same bound.
 */
export const MAX_JSON_DEPTH = 64;

/**
 * Whether JSON text nests objects and arrays deeper than `maxDepth`, found in one pass over the
 * bytes (brackets outside strings) before anything is parsed. A body nested thousands deep parses,
 * then overflows the stack of whatever walks it next (redaction, an excerpt, a template). The
 * syntax is not checked: `JSON.parse` does that afterwards.
 */
export function jsonTooDeep(text: Uint8Array | string, maxDepth: number = MAX_JSON_DEPTH): boolean {
  const b = typeof text === 'string' ? Buffer.from(text, 'utf8') : text;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < b.length; i++) {
    const c = b[i]!;
    if (inString) {
      if (c === 0x5c /* \ */) i++;
      else if (c === 0x22 /* " */) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      if (++depth > maxDepth) return true;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) depth--;
  }
  return false;
}

/**
 * Parses JSON a plugin reads itself (a form's `payload` field, a body sent without a JSON content
 * type) once its depth is known to be within {@link MAX_JSON_DEPTH}. Throws
 * `WebhookRejectedError(400)` naming `what` when it is nested too deep or is not JSON.
 *
 * @example
 * ```ts
 * const field = new URLSearchParams(req.rawBody.toString()).get('payload') ?? '';
 * const payload = parseJsonBounded(field, 'the payload field');
 * ```
 */
export function parseJsonBounded(text: Uint8Array | string, what = 'the request body'): unknown {
  if (jsonTooDeep(text)) throw new WebhookRejectedError(400, `${what} is nested deeper than ${MAX_JSON_DEPTH} levels`);
  try {
    return JSON.parse(
      typeof text === 'string' ? text : Buffer.from(text.buffer, text.byteOffset, text.byteLength).toString('utf8'),
    );
  } catch {
    throw new WebhookRejectedError(400, `${what} must be JSON`);
  }
}

/**
 * The webhook's JSON body: the core's parse, or the raw bytes parsed (depth-bounded) when the
 * sender gave no JSON content type; 400 when it is not JSON or nested too deep.
 */
export function jsonBody(req: InboundWebhook): unknown {
  return req.body !== undefined ? req.body : parseJsonBounded(req.rawBody);
}
