/**
 * The Adaptive Card message a Teams Workflows webhook posts ("Post to a channel when a webhook
 * request is received"): `{type: "message", attachments: [{contentType: adaptive card, content}]}`.
 *
 * Text comes from the plain rendering. A TextBlock renders a Markdown subset (bold, italic, lists,
 * links), so characters that would start formatting are backslash-escaped, and because a single
 * line break inside a TextBlock is not shown, lines become paragraphs (list items stay together).
 */
import type { OutboundMessage, Severity } from '@herald/plugin-api';
import { updatePrefix, words } from './strings.ts';

export const ADAPTIVE_CARD = 'application/vnd.microsoft.card.adaptive';
export const CARD_SCHEMA = 'http://adaptivecards.io/schemas/adaptive-card.json';
/** 1.4 renders in every Teams client (desktop, web and mobile); 1.5 is not everywhere yet. */
export const CARD_VERSION = '1.4';

/** Longest title and body the manifest declares, in UTF-16 code units. */
export const MAX_TITLE = 256;
export const MAX_BODY = 8000;
/**
 * Teams refuses a message over about 28 KB. The card's JSON is held under this many bytes;
 * a body that escaping makes longer is cut further.
 */
export const MAX_PAYLOAD_BYTES = 27_000;

/** TextBlock colour of the title per severity. */
export const SEVERITY_COLOR: Record<Severity, string> = { info: 'Default', warning: 'Warning', critical: 'Attention' };

/** Escapes the characters a TextBlock's Markdown would read as formatting. */
export const escapeCard = (s: string) => s.replace(/[\\*_`[\]]/g, '\\$&');

const LIST_ITEM = /^(\s*)([-*+•]|\d{1,9}[.)])\s+(.*)$/;

/**
 * Plain text as TextBlock Markdown: every line escaped, non-empty lines separated by a blank line
 * (a paragraph each), consecutive list items ("- x", "1. x") kept as one list.
 */
export function cardText(plain: string): string {
  let out = '';
  let previousWasItem = false;
  for (const line of plain.split(/\r?\n/)) {
    if (!line.trim()) {
      previousWasItem = false;
      continue;
    }
    const item = LIST_ITEM.exec(line);
    const rendered = item
      ? `${item[1]}${/\d/.test(item[2]!) ? item[2] : '-'} ${escapeCard(item[3]!)}`
      : escapeCard(line.trim());
    if (out) out += item && previousWasItem ? '\n' : '\n\n';
    out += rendered;
    previousWasItem = !!item;
  }
  return out;
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

export interface CardMessage {
  json: Record<string, unknown>;
  /** Characters of the body cut to fit, 0 when nothing was. */
  cut: number;
}

function build(m: OutboundMessage, body: string, previousTitle?: string): Record<string, unknown> {
  const blocks: Record<string, unknown>[] = [];
  if (previousTitle !== undefined) {
    blocks.push({
      type: 'TextBlock',
      text: escapeCard(updatePrefix(m.locale, previousTitle)),
      wrap: true,
      isSubtle: true,
      size: 'Small',
    });
  }
  const title = fit(m.plainTitle.replace(/\s+/g, ' ').trim(), MAX_TITLE).text;
  if (title)
    blocks.push({
      type: 'TextBlock',
      text: escapeCard(title),
      weight: 'Bolder',
      size: 'Medium',
      color: SEVERITY_COLOR[m.severity],
      wrap: true,
    });
  const text = cardText(body);
  if (text) blocks.push({ type: 'TextBlock', text, wrap: true });
  // A card needs a body; an empty notification still says something.
  if (!blocks.length) blocks.push({ type: 'TextBlock', text: '…', wrap: true });
  const content: Record<string, unknown> = {
    $schema: CARD_SCHEMA,
    type: 'AdaptiveCard',
    version: CARD_VERSION,
    body: blocks,
  };
  if (isHttpUrl(m.url)) content.actions = [{ type: 'Action.OpenUrl', title: words(m.locale).open, url: m.url }];
  // Without it Teams shows the card at a narrow fixed width.
  content.msteams = { width: 'Full' };
  return { type: 'message', attachments: [{ contentType: ADAPTIVE_CARD, contentUrl: null, content }] };
}

const bytes = (v: unknown) => Buffer.byteLength(JSON.stringify(v), 'utf8');

/**
 * The webhook request body for `m`; `previousTitle` makes it an update that names the earlier
 * message. The body is cut to {@link MAX_BODY} and, when escaping and JSON make the payload larger
 * than {@link MAX_PAYLOAD_BYTES}, further (a few bounded passes).
 */
export function buildCard(m: OutboundMessage, previousTitle?: string): CardMessage {
  let fitted = fit(m.plainBody, MAX_BODY);
  let json = build(m, fitted.text, previousTitle);
  for (let pass = 0; pass < 6 && bytes(json) > MAX_PAYLOAD_BYTES && fitted.text.length > 0; pass++) {
    const keep = Math.floor(fitted.text.length * (MAX_PAYLOAD_BYTES / bytes(json))) - 64;
    fitted = fit(m.plainBody, Math.max(0, keep));
    json = build(m, fitted.text, previousTitle);
  }
  return { json, cut: fitted.cut };
}
