/** The JSON body of a `/notify` request, built from a rendered message. */
import type { OutboundMessage, Severity } from '@herald/plugin-api';
import type { AppriseApiConfig } from './config.ts';
import { updatePrefix } from './strings.ts';

export const MAX_BODY = 32_768;
export const MAX_TITLE = 250;

/** Apprise's notification types; `success` is not used (Herald has no such severity). */
export const NOTIFY_TYPE: Record<Severity, 'info' | 'warning' | 'failure'> = {
  info: 'info',
  warning: 'warning',
  critical: 'failure',
};

/** Cuts `text` to at most `max` code units, ending with an ellipsis and never splitting a surrogate pair. */
export function fit(text: string, max: number): { text: string; cut: number } {
  if (text.length <= max) return { text, cut: 0 };
  let end = Math.max(0, max - 1);
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end -= 1;
  return { text: `${text.slice(0, end)}…`, cut: text.length - end };
}

const markdownEscape = (s: string) => s.replace(/[\\`*_{}[\]()#+\-.!|<>~]/g, '\\$&');
const isHttpUrl = (u: string | undefined): u is string => !!u && /^https?:\/\/\S+$/.test(u);

/**
 * `{title, body, type, format, tag?, urls?}`. In `text` the body is the plain rendering, in
 * `markdown` the Markdown one; the event link follows when the body does not show it, and an
 * update opens with "Update to “<earlier title>”:".
 */
export function buildPayload(
  cfg: AppriseApiConfig,
  m: OutboundMessage,
  previousTitle?: string,
): { json: Record<string, unknown>; cut: number } {
  const markdown = cfg.body_format === 'markdown';
  const title = fit(m.plainTitle.replace(/\s+/g, ' ').trim(), MAX_TITLE).text;
  const prefix = previousTitle !== undefined ? updatePrefix(m.locale, previousTitle) : '';
  const head = prefix ? (markdown ? `_${markdownEscape(prefix)}_\n\n` : `${prefix}\n\n`) : '';
  const link = isHttpUrl(m.url) && !m.plainBody.includes(m.url) ? m.url : '';
  const tail = link ? (markdown ? `\n\n<${link}>` : `\n\n${link}`) : '';
  const source = (markdown ? m.body : m.plainBody).trim();
  const body = fit(source, Math.max(0, MAX_BODY - head.length - tail.length));
  let text = `${head}${body.text}${tail}`;
  let shownTitle = title;
  // Apprise refuses an empty body: a notification with a title only carries it as the body.
  if (!text.trim()) {
    text = title || '…';
    shownTitle = '';
  }
  const json: Record<string, unknown> = {
    title: shownTitle,
    body: text,
    type: NOTIFY_TYPE[m.severity],
    format: markdown ? 'markdown' : 'text',
  };
  if (cfg.tag) json.tag = cfg.tag;
  if (!cfg.key && cfg.urls) json.urls = cfg.urls;
  return { json, cut: body.cut };
}
