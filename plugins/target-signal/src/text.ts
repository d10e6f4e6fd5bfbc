/**
 * The `message` of a Signal send, built from the plain rendering.
 *
 * Styled mode (`text_mode: "styled"`): the REST API turns `**bold**`, `*italic*`, `~strike~`,
 * `` `mono` `` and `||spoiler||` into Signal text styles and removes the markers, so every such
 * character of the notification's own text is escaped with a backslash (honoured from
 * signal-cli REST API 0.96). The title is bold, an update's opening line italic.
 *
 * Length: Signal shows at most 2,000 bytes (UTF-8) of a message's text inline; the body is cut so
 * that what the recipient sees, markers removed, stays within that.
 */
import type { OutboundMessage } from '@herald/plugin-api';
import { updatePrefix } from './strings.ts';

/** The inline text limit of a Signal message, in UTF-8 bytes of the visible text. */
export const MAX_VISIBLE_BYTES = 2000;
export const MAX_BODY = 2000;
export const MAX_TITLE = 200;

/** Escapes the characters the REST API's styled mode reads as formatting. */
export function escapeStyled(s: string): string {
  const escaped = s.replace(/[*~`|]/g, '\\$&');
  // A backslash cannot be escaped: one at the end would escape the marker that follows it.
  return escaped.endsWith('\\') ? `${escaped}\u200b` : escaped;
}

const utf8 = (s: string) => Buffer.byteLength(s, 'utf8');

/** Cuts `text` to at most `maxBytes` UTF-8 bytes, ending with an ellipsis, on a code point boundary. */
export function fitBytes(text: string, maxBytes: number): { text: string; cut: number } {
  if (utf8(text) <= maxBytes) return { text, cut: 0 };
  const budget = Math.max(0, maxBytes - utf8('…'));
  let used = 0;
  let end = 0;
  for (const ch of text) {
    const b = utf8(ch);
    if (used + b > budget) break;
    used += b;
    end += ch.length;
  }
  return { text: `${text.slice(0, end)}…`, cut: text.length - end };
}

const isHttpUrl = (u: string | undefined): u is string => !!u && /^https?:\/\/\S+$/.test(u);

/**
 * The message for `m` in `mode`; `previousTitle` opens it with "Update to “…”:" (an update to an
 * earlier message). `cut` counts the body's characters left out.
 */
export function buildMessage(
  m: OutboundMessage,
  mode: 'styled' | 'normal',
  previousTitle?: string,
): { message: string; cut: number } {
  const prefix = previousTitle !== undefined ? updatePrefix(m.locale, previousTitle) : '';
  const title = m.plainTitle.replace(/\s+/g, ' ').trim();
  const link = isHttpUrl(m.url) && !m.plainBody.includes(m.url) ? m.url : '';
  const visibleRest = [prefix, title, link].filter(Boolean);
  const separators = visibleRest.length; // one line break between each part and the body
  const styled = mode === 'styled';
  // Styled parts may each end with a zero-width space (3 bytes) after a trailing backslash.
  const budget = MAX_VISIBLE_BYTES - visibleRest.reduce((n, s) => n + utf8(s), 0) - separators - (styled ? 12 : 0);
  const body = fitBytes(m.plainBody.trim(), Math.max(0, budget));
  const esc = styled ? escapeStyled : (s: string) => s;
  const lines = [
    prefix && (styled ? `*${esc(prefix)}*` : prefix),
    title && (styled ? `**${esc(title)}**` : title),
    body.text && esc(body.text),
    link && esc(link),
  ].filter(Boolean);
  return { message: lines.join('\n') || '…', cut: body.cut };
}
