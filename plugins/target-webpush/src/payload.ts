/**
 * What a push message carries and how big it may be. The service worker of Herald's web client
 * reads this JSON (`core/web/sw.js`, served at `/sw.js`) and shows it as a notification.
 */
import crypto from 'node:crypto';
import type { OutboundMessage, Severity } from '@herald/plugin-api';

/**
 * Push services must accept 4096 bytes of encrypted body (RFC 8030 §7.2, RFC 8291 §4) and many
 * refuse more (FCM, Mozilla autopush answer 413). The body is the aes128gcm header (16-byte salt,
 * 4-byte record size, 1-byte key id length, the 65-byte sender key), then one record: the
 * plaintext, its 1-byte padding delimiter and the 16-byte tag.
 */
export const MAX_BODY_BYTES = 4096;
export const HEADER_BYTES = 16 + 4 + 1 + 65;
export const MAX_PLAINTEXT_BYTES = MAX_BODY_BYTES - HEADER_BYTES - 1 - 16;

/**
 * Declared limits, in UTF-16 code units. A notification shows a title and a few lines; the body
 * limit keeps the JSON within MAX_PLAINTEXT_BYTES even when every character takes three bytes in
 * UTF-8 (1000 × 3 + 120 × 3 + the other fields), and `fitPayload` cuts further in the rare case
 * it does not (control characters, which JSON escapes to six bytes each).
 */
export const MAX_BODY_LENGTH = 1000;
export const MAX_TITLE_LENGTH = 120;

/** How long the push service keeps a message for a browser that is offline. */
export const TTL_SECONDS = 24 * 3600;
/** A test message is worth nothing after a few minutes. */
export const TEST_TTL_SECONDS = 300;

export interface PushPayload {
  title: string;
  body: string;
  /** The web client's page of the event, opened when the notification is clicked. */
  url: string;
  /** The notification's tag: a later notification with the same tag replaces it in the browser. */
  tag: string;
  severity: Severity;
  lang: string;
  /** True when this replaces an earlier notification (the browser alerts again instead of swapping it silently). */
  renotify?: boolean;
  test?: boolean;
}

/** RFC 8030 §5.3 urgency by severity: a warning or worse wakes a device on battery. */
export function urgencyFor(severity: Severity): 'normal' | 'high' {
  return severity === 'info' ? 'normal' : 'high';
}

/**
 * RFC 8030 §5.4 topic: at most 32 base64url characters. A message waiting at the push service
 * with the same topic is replaced, so an update that follows never arrives after a stale one.
 */
export function topicFor(tag: string): string {
  return crypto.createHash('sha256').update(tag).digest('base64url').slice(0, 32);
}

export function buildPayload(message: OutboundMessage, url: string, tag: string, renotify = false): PushPayload {
  return {
    title: message.plainTitle || message.title,
    body: message.plainBody || message.body,
    url,
    tag,
    severity: message.severity,
    lang: message.locale,
    ...(renotify ? { renotify: true } : {}),
    ...(message.test ? { test: true } : {}),
  };
}

const bytes = (p: PushPayload) => Buffer.byteLength(JSON.stringify(p), 'utf8');

/** `text` cut to at most `keep` code points, ending with `…` when cut. */
function cut(text: string, keep: number): string {
  const points = [...text];
  if (points.length <= keep) return text;
  return `${points
    .slice(0, Math.max(0, keep - 1))
    .join('')
    .trimEnd()}…`;
}

/** The longest cut of `field` (in code points) that keeps the payload within `max` bytes. */
function shrink(p: PushPayload, field: 'body' | 'title', max: number): PushPayload {
  const n = [...p[field]].length;
  let lo = 0;
  let hi = n;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (bytes({ ...p, [field]: cut(p[field], mid) }) <= max) lo = mid;
    else hi = mid - 1;
  }
  return { ...p, [field]: lo === 0 ? '' : cut(p[field], lo) };
}

/**
 * The payload within `max` bytes of UTF-8 JSON: the body cut first (ending with `…`), then the
 * title, and the URL dropped only when nothing else helps. Returns the payload and how many
 * characters were cut.
 */
export function fitPayload(p: PushPayload, max = MAX_PLAINTEXT_BYTES): { payload: PushPayload; cut: number } {
  if (bytes(p) <= max) return { payload: p, cut: 0 };
  const before = [...p.body].length + [...p.title].length;
  let out = shrink(p, 'body', max);
  if (bytes(out) > max) out = shrink(out, 'title', max);
  if (bytes(out) > max) out = { ...out, url: '' };
  return { payload: out, cut: before - [...out.body].length - [...out.title].length };
}
