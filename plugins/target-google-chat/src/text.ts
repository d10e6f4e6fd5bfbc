/**
 * The message text, in Google Chat's own markup (`*bold*`, `_italic_`, `~strike~`, `` `code` ``,
 * `<url|label>` links, `<users/…>` mentions), built from the plain rendering.
 *
 * Google Chat's markup has no escape character. Two rules keep payload text literal:
 * - a `<` is followed by a zero-width space, so no text can form a link or a mention (`<users/all>`
 *   would notify everyone in the space);
 * - a `*`, `_`, `~` or `` ` `` where formatting could open (after a space or punctuation, before a
 *   non-space) is followed by a zero-width space, and where it could close, preceded by one, so it
 *   pairs with nothing. Inside a word (`disk_usage_high`) and inside links nothing is changed.
 */
import type { OutboundMessage } from '@herald/plugin-api';
import { words } from './strings.ts';

/** Google Chat's limit on a message's text, in characters (counted here in UTF-16 code units). */
export const MAX_TEXT = 4096;
export const MAX_TITLE = 256;
const ZWSP = '\u200b';

const URL_RE = /https?:\/\/[^\s<>]+/g;
const MARK = /[*_~`]/;
const EDGE = /[\s\p{P}\p{S}]/u;

function neutralize(s: string): string {
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (c === '<') {
      out += `<${ZWSP}`;
      continue;
    }
    if (!MARK.test(c)) {
      out += c;
      continue;
    }
    const prev = i > 0 ? s[i - 1]! : '';
    const next = i + 1 < s.length ? s[i + 1]! : '';
    const opens = (prev === '' || EDGE.test(prev)) && next !== '' && !/\s/.test(next);
    const closes = prev !== '' && !/\s/.test(prev) && (next === '' || EDGE.test(next));
    out += `${closes ? ZWSP : ''}${c}${opens ? ZWSP : ''}`;
  }
  return out;
}

/** Plain text made literal in Google Chat's markup; bare links are left as they are (Chat links them). */
export function escapeChat(s: string): string {
  let out = '';
  let last = 0;
  for (const m of s.matchAll(URL_RE)) {
    out += neutralize(s.slice(last, m.index)) + m[0];
    last = m.index + m[0].length;
  }
  return out + neutralize(s.slice(last));
}

/** Cuts `text` to at most `max` code units, ending with an ellipsis and never splitting a surrogate pair. */
export function fit(text: string, max: number): { text: string; cut: number } {
  if (text.length <= max) return { text, cut: 0 };
  let end = Math.max(0, max - 1);
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end -= 1;
  return { text: `${text.slice(0, end)}…`, cut: text.length - end };
}

const isHttpUrl = (u: string | undefined): u is string => !!u && /^https?:\/\/\S+$/.test(u);
/** A URL inside `<url|label>` must not contain the delimiters. */
const linkTarget = (u: string) => u.replace(/\|/g, '%7C').replace(/>/g, '%3E');

/**
 * The `text` of the message: the title in bold, the body, and the event link as `<url|Open>`
 * when the body does not already show it. The body is cut so the whole stays within {@link MAX_TEXT}.
 */
export function buildText(m: OutboundMessage): { text: string; cut: number } {
  const title = fit(m.plainTitle.replace(/\s+/g, ' ').trim(), MAX_TITLE).text;
  const head = title ? `*${escapeChat(title)}*\n` : '';
  const tail =
    isHttpUrl(m.url) && !m.plainBody.includes(m.url) ? `\n<${linkTarget(m.url)}|${words(m.locale).open}>` : '';
  const body = fit(escapeChat(m.plainBody.trim()), Math.max(0, MAX_TEXT - head.length - tail.length));
  const whole = fit(`${head}${body.text}${tail}`, MAX_TEXT);
  return { text: whole.text.trim() ? whole.text : '…', cut: body.cut + whole.cut };
}
