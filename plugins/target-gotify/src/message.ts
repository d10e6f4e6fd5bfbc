/**
 * The JSON of Gotify's `POST /message` (CreateMessage) built from a rendered message:
 * `{title, message, priority, extras}`, with the message extras Gotify's clients read —
 * `client::display.contentType` (`text/markdown` renders Markdown in the web UI and the Android
 * app) and `client::notification.click.url` (the Android notification opens the link).
 */
import type { OutboundMessage, Severity } from '@herald/plugin-api';
import { text } from './text.ts';

/**
 * Gotify priorities as its Android app treats them: 0 min importance, 1–3 low (no sound), 4–7
 * default (sound), 8 and above high (sound and a heads-up pop-over). Info and warning both sound;
 * warning sorts above info in the web UI; only critical pops up.
 */
export const PRIORITY: Record<Severity, number> = { info: 4, warning: 7, critical: 10 };

/** Longest body sent: Gotify stores a message as TEXT (65,535 bytes on MySQL), at most 3 bytes per UTF-16 unit. */
export const MAX_MESSAGE_LENGTH = 20_000;

export interface GotifyMessage {
  title?: string;
  message: string;
  priority: number;
  extras?: Record<string, unknown>;
}

const isHttpUrl = (u: string | undefined): u is string => !!u && /^https?:\/\/\S+$/.test(u);

/** Markdown special characters escaped, for text that must show literally (a quoted title). */
const markdownEscape = (s: string) => s.replace(/[\\`*_{}[\]()#+\-.!|<>~]/g, '\\$&');

/** The title a later message names this one by: the plain title, else the body's first line. */
export function refTitle(m: OutboundMessage): string {
  return (m.plainTitle || m.plainBody.split('\n')[0] || '').slice(0, 200);
}

/** Cuts `s` to at most `max` code units, ending with an ellipsis and never splitting a surrogate pair. */
export function fit(s: string, max: number): string {
  if (s.length <= max) return s;
  let end = max - 1;
  const code = s.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end -= 1;
  return `${s.slice(0, end)}…`;
}

/** The request body for `m`; `replyTo` opens it with the line saying which earlier message it updates. */
export function buildMessage(m: OutboundMessage, replyTo?: string): GotifyMessage {
  const markdown = m.format === 'markdown';
  let body = m.body;
  let title = m.plainTitle;
  if (replyTo !== undefined) {
    body = markdown
      ? `_${text.updatePrefix(m.locale, markdownEscape(replyTo))}_\n\n${body}`
      : `${text.updatePrefix(m.locale, replyTo)}\n${body}`;
  }
  // Gotify requires a message (400 "Field 'message' is required"): a title-only notification
  // sends its title as the message, and Gotify shows the application's name as the title.
  if (!body.trim()) {
    body = markdown ? markdownEscape(title) : title;
    title = '';
  }
  if (!body.trim()) body = '…';
  const extras: Record<string, unknown> = {};
  if (markdown) extras['client::display'] = { contentType: 'text/markdown' };
  if (isHttpUrl(m.url)) extras['client::notification'] = { click: { url: m.url } };
  return {
    ...(title ? { title } : {}),
    // The core fits bodies to the declared limit; a reply's opening line can still push one over.
    message: fit(body, MAX_MESSAGE_LENGTH),
    priority: PRIORITY[m.severity] ?? PRIORITY.info,
    ...(Object.keys(extras).length ? { extras } : {}),
  };
}
