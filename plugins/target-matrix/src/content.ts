/**
 * The `m.room.message` content for a rendered message, and the transaction id that makes
 * a retried delivery a no-op on the homeserver.
 */
import { createHash } from 'node:crypto';
import type { OutboundMessage } from '@herald/plugin-api';

/**
 * Longest body declared to the pipeline. A Matrix event is at most 65,536 bytes of JSON and the
 * message is carried twice (plain `body` and HTML `formatted_body`); Cyrillic text takes 2 bytes
 * per character, so 16,000 characters keeps both copies inside the limit for nearly all messages.
 */
export const MAX_MESSAGE_LENGTH = 16_000;

/** Budget for the content JSON: the event envelope (ids, sender, signatures, hashes) needs the rest. */
export const MAX_CONTENT_BYTES = 60_000;

/**
 * Budget for the content JSON in an encrypted room: Megolm carries it (with the event type and room
 * id) as unpadded base64 of its AES-CBC ciphertext, 4/3 of its size plus the MAC and signature, and
 * the encrypted event adds the sender key, session id and device id.
 */
export const MAX_ENCRYPTED_CONTENT_BYTES = 45_000;

export interface NoticeContent {
  msgtype: 'm.notice';
  body: string;
  format?: 'org.matrix.custom.html';
  formatted_body?: string;
  /** An edit (`m.replace`): the replacement content; `body` then is the fallback for clients without edits. */
  'm.new_content'?: Omit<NoticeContent, 'm.new_content' | 'm.relates_to'>;
  'm.relates_to'?: { rel_type: 'm.replace'; event_id: string };
}

/**
 * An edit of the earlier event `eventId` (Matrix spec, "Event replacements"): the new content in
 * `m.new_content`, and a `* `-prefixed fallback for clients that do not show edits. Undefined when
 * even the plain-text form does not fit one event (the core then sends a new message).
 */
export function buildEdit(m: OutboundMessage, eventId: string, budget = MAX_CONTENT_BYTES): NoticeContent | undefined {
  const { content } = buildContent(m, budget);
  const edit: NoticeContent = {
    ...content,
    body: `* ${content.body}`,
    ...(content.formatted_body !== undefined ? { formatted_body: `* ${content.formatted_body}` } : {}),
    'm.new_content': content,
    'm.relates_to': { rel_type: 'm.replace', event_id: eventId },
  };
  if (byteSize(edit) <= budget) return edit;
  // Carried twice (fallback and new content): drop the HTML copies before giving up.
  const plain: NoticeContent = {
    msgtype: 'm.notice',
    body: `* ${content.body}`,
    'm.new_content': { msgtype: 'm.notice', body: content.body },
    'm.relates_to': { rel_type: 'm.replace', event_id: eventId },
  };
  return byteSize(plain) <= budget ? plain : undefined;
}

/**
 * Transaction id for a delivery. The homeserver scopes transaction ids to the access token and
 * answers a repeated one with the first event's id instead of posting again.
 */
export function transactionId(deliveryId: string): string {
  return `herald-${createHash('sha256').update(deliveryId).digest('hex').slice(0, 32)}`;
}

const escapeHtml = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

const BLOCK_TAGS = /<(p|div|ul|ol|li|h[1-6]|table|blockquote|pre|br)\b/i;

/**
 * Matrix clients render `formatted_body` as HTML, where a bare newline is just a space. Inline-only
 * HTML (Telegram-style: tags plus newlines) gets `<br>` for its newlines; HTML that already has
 * block structure is left as it is.
 */
export function newlinesToBreaks(html: string): string {
  return BLOCK_TAGS.test(html) ? html : html.replace(/\r?\n/g, '<br>');
}

/** Builds the notice: plain text in `body`, the HTML rendering in `formatted_body`, within `budget` bytes of JSON. */
export function buildContent(
  m: OutboundMessage,
  budget = MAX_CONTENT_BYTES,
): { content: NoticeContent; plainOnly: boolean; cut: boolean } {
  const link = m.url && /^https?:\/\//.test(m.url) ? m.url : undefined;
  const plain = [m.plainTitle, m.plainBody, link && !m.plainBody.includes(link) ? link : '']
    .filter(Boolean)
    .join('\n\n');
  const htmlParts: string[] = [];
  if (m.title) htmlParts.push(`<strong>${m.title}</strong>`);
  if (m.body) htmlParts.push(newlinesToBreaks(m.body));
  if (link && !m.body.includes(link)) htmlParts.push(`<a href="${escapeHtml(link)}">${escapeHtml(link)}</a>`);
  const full: NoticeContent = {
    msgtype: 'm.notice',
    body: plain,
    format: 'org.matrix.custom.html',
    formatted_body: htmlParts.join('<br><br>'),
  };
  if (byteSize(full) <= budget) return { content: full, plainOnly: false, cut: false };
  // Too big for one event with both copies: HTML cannot be cut safely, so send the plain text alone, cut to fit.
  const body = cutToBytes(plain, budget - 100);
  return { content: { msgtype: 'm.notice', body }, plainOnly: true, cut: body !== plain };
}

const byteSize = (v: unknown) => Buffer.byteLength(JSON.stringify(v), 'utf8');

/** The longest prefix of `text` whose JSON string form fits `budget` bytes, marked with an ellipsis. */
export function cutToBytes(text: string, budget: number): string {
  if (byteSize(text) <= budget) return text;
  let lo = 0;
  let hi = text.length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (byteSize(`${text.slice(0, mid)}…`) <= budget) lo = mid;
    else hi = mid - 1;
  }
  let end = lo;
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end -= 1;
  return `${text.slice(0, end)}…`;
}
