/**
 * The form fields of Pushover's `POST /1/messages.json` built from a rendered message: `token`,
 * `user`, `message`, `title`, `url`, `priority`, `html`, `device`, `sound`.
 *
 * Pushover's HTML mode (`html=1`) understands `<b>`, `<i>`, `<u>`, `<font color="…">` and
 * `<a href="…">` only; line breaks are the text's own. Herald's HTML rendering is turned into that
 * subset: `strong`/`em`/`ins` become `b`/`i`/`u`, `<br>` and the ends of block elements become line
 * breaks, list items start with "• ", and any other tag is dropped with its text kept. The
 * conversion never makes a message longer.
 */
import type { OutboundMessage, Severity } from '@herald/plugin-api';
import type { PushoverConfig } from './config.ts';
import { text } from './text.ts';

/** Pushover's limits, in characters (the core counts UTF-16 units, never fewer). */
export const MAX_MESSAGE_LENGTH = 1024;
export const MAX_TITLE_LENGTH = 250;
export const MAX_URL_LENGTH = 512;

/**
 * Pushover priorities: -2 no notification, -1 quiet, 0 normal (the user's sound and vibration),
 * 1 high (highlighted, and sounds even during the user's quiet hours), 2 emergency (repeats until
 * acknowledged; needs `retry` and `expire`, not used). Only critical may break through quiet hours.
 */
export const PRIORITY: Record<Severity, number> = { info: 0, warning: 0, critical: 1 };

const escapeHtml = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

function attr(attrs: string, name: string): string | undefined {
  const m = new RegExp(`\\b${name}\\s*=\\s*(?:"([^"]*)"|'([^']*)'|([^\\s"'>]+))`, 'i').exec(attrs);
  return m ? (m[1] ?? m[2] ?? m[3]) : undefined;
}

const RENAMED: Record<string, string> = { b: 'b', strong: 'b', i: 'i', em: 'i', u: 'u', ins: 'u' };
const BLOCKS = new Set([
  'p',
  'div',
  'li',
  'tr',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'blockquote',
  'pre',
  'ul',
  'ol',
  'table',
]);

/** Herald's HTML in Pushover's subset (see the module comment). */
export function toPushoverHtml(html: string): string {
  const open: string[] = [];
  const out = html.replace(
    /<(\/?)([a-zA-Z][a-zA-Z0-9]*)\b([^>]*)>/g,
    (_all, slash: string, rawName: string, attrs: string) => {
      const name = rawName.toLowerCase();
      const closing = slash === '/';
      if (name === 'br') return '\n';
      const kept = RENAMED[name];
      if (kept) return closing ? `</${kept}>` : `<${kept}>`;
      if (name === 'a') {
        if (closing) return open.pop() === 'a' ? '</a>' : '';
        const href = attr(attrs, 'href');
        if (!href || !/^(https?:|mailto:)/i.test(href)) {
          open.push('-');
          return '';
        }
        open.push('a');
        return `<a href="${escapeHtml(href)}">`;
      }
      if (name === 'font') {
        if (closing) return open.pop() === 'font' ? '</font>' : '';
        const color = attr(attrs, 'color');
        if (!color || !/^(#[0-9a-fA-F]{3}|#[0-9a-fA-F]{6}|[a-zA-Z]{1,20})$/.test(color)) {
          open.push('-');
          return '';
        }
        open.push('font');
        return `<font color="${color}">`;
      }
      if (name === 'li' && !closing) return '• ';
      if (BLOCKS.has(name) && closing) return '\n';
      return '';
    },
  );
  return out.replace(/\n{3,}/g, '\n\n');
}

/** Cuts `s` to at most `max` code units, ending with an ellipsis and never splitting a surrogate pair. */
export function fit(s: string, max: number): string {
  if (s.length <= max) return s;
  let end = max - 1;
  const code = s.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end -= 1;
  return `${s.slice(0, end)}…`;
}

/** The title a later message names this one by: the plain title, else the body's first line. */
export function refTitle(m: OutboundMessage): string {
  return (m.plainTitle || m.plainBody.split('\n')[0] || '').slice(0, 200);
}

const isUrl = (u: string | undefined): u is string => !!u && /^https?:\/\/\S+$/.test(u) && u.length <= MAX_URL_LENGTH;

/**
 * The form for `m`. `replyTo` opens the message with the line naming the earlier message. A body
 * that is still over 1,024 characters (the core fits it first; a reply's opening line can push it
 * over) is sent as plain text cut to 1,024, since an HTML cut could break a tag.
 */
export function buildForm(cfg: PushoverConfig, m: OutboundMessage, replyTo?: string): URLSearchParams {
  const html = m.format === 'html';
  let title = fit(m.plainTitle, MAX_TITLE_LENGTH);
  let message = html ? toPushoverHtml(m.body) : m.plainBody;
  let plain = m.plainBody;
  if (replyTo !== undefined) {
    const prefix = text.updatePrefix(m.locale, replyTo);
    message = html ? `<i>${escapeHtml(prefix)}</i>\n${message}` : `${prefix}\n${message}`;
    plain = `${prefix}\n${plain}`;
  }
  let asHtml = html;
  // A message is required: a title-only notification sends its title as the message (Pushover shows the app's name
  // above).
  if (!message.trim()) {
    message = html ? escapeHtml(title) : title;
    plain = title;
    title = '';
  }
  if (!message.trim()) message = plain = '…';
  if (message.length > MAX_MESSAGE_LENGTH) {
    message = fit(plain, MAX_MESSAGE_LENGTH);
    asHtml = false;
  }
  const form = new URLSearchParams({ token: cfg.app_token, user: cfg.user_key, message });
  if (title) form.set('title', title);
  if (isUrl(m.url)) form.set('url', m.url);
  form.set('priority', String(PRIORITY[m.severity] ?? 0));
  if (asHtml) form.set('html', '1');
  if (cfg.device) form.set('device', cfg.device);
  if (cfg.sound) form.set('sound', cfg.sound);
  return form;
}
