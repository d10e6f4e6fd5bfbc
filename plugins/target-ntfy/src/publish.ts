/**
 * The JSON ntfy takes at its root URL (`POST /`, "publish as JSON"): `{topic, message, title,
 * priority, tags, click, markdown}`, built from a rendered message, and the split of a body that
 * is over ntfy's message size.
 *
 * ntfy counts the message in bytes of UTF-8: a message over 4,096 bytes is not refused but turned
 * into a file attachment ("You received a file: attachment.txt"), or refused with 400 when the
 * server has attachments off. The core fits bodies to 4,096 UTF-16 code units, which is 4,096 bytes
 * for ASCII text only; Cyrillic takes two bytes a character. A body still over 4,096 bytes is
 * therefore sent here as several messages, each at most 4,096 bytes, cut at a line break or space
 * where one is near, each ending with a "(part k of n)" line in the target's language. The JSON
 * body is held to ntfy's 8,192 bytes as well (a message of quotes and line breaks doubles when
 * escaped).
 */
import type { OutboundMessage, Severity } from '@herald/plugin-api';
import type { NtfyConfig } from './config.ts';
import { text } from './text.ts';

/** ntfy's message size limit (the server's `message-size-limit` default), in bytes of UTF-8. */
export const MAX_MESSAGE_BYTES = 4096;
/** The largest JSON body ntfy reads at its root URL (twice the message size; 413 beyond). */
export const MAX_JSON_BYTES = 2 * MAX_MESSAGE_BYTES;

/** ntfy priorities: 3 is the default (short vibration and sound), 4 high and 5 max (long bursts, pop-over). */
export const PRIORITY: Record<Severity, number> = { info: 3, warning: 4, critical: 5 };

/** Tags that ntfy shows as an emoji before the title (its emoji short codes). */
export const SEVERITY_TAG: Record<Severity, string | undefined> = {
  info: undefined,
  warning: 'warning',
  critical: 'rotating_light',
};

export interface NtfyPayload {
  topic: string;
  message: string;
  title?: string;
  priority: number;
  tags: string[];
  click?: string;
  markdown?: true;
}

export const utf8Length = (s: string): number => Buffer.byteLength(s, 'utf8');

const isHttpUrl = (u: string | undefined): u is string => !!u && /^https?:\/\/\S+$/.test(u);

/** Markdown special characters escaped, for text that must show literally (a quoted title). */
const markdownEscape = (s: string) => s.replace(/[\\`*_{}[\]()#+\-.!|<>~]/g, '\\$&');

/** The title a later message names this one by: the plain title, else the body's first line. */
export function refTitle(m: OutboundMessage): string {
  return (m.plainTitle || m.plainBody.split('\n')[0] || '').slice(0, 200);
}

/**
 * The body and fields of one publish, before any split. `replyTo` opens the body with the line
 * saying which earlier message this one updates.
 */
export function buildPayload(cfg: NtfyConfig, m: OutboundMessage, replyTo?: string): NtfyPayload {
  const markdown = cfg.markdown && m.format === 'markdown';
  let body = markdown ? m.body : m.plainBody;
  let title = m.plainTitle;
  if (replyTo !== undefined) {
    const head = markdown
      ? `_${text.updatePrefix(m.locale, markdownEscape(replyTo))}_\n\n`
      : `${text.updatePrefix(m.locale, replyTo)}\n`;
    body = `${head}${body}`;
  }
  // ntfy shows "triggered" for an empty message: a title-only notification shows its title instead.
  if (!body.trim()) {
    body = title || ' ';
    title = '';
  }
  const severityTag = SEVERITY_TAG[m.severity];
  const tags = [...(severityTag ? [severityTag] : []), m.eventType.replace(/[,\s]+/g, '_').slice(0, 64)].filter(
    Boolean,
  );
  return {
    topic: cfg.topic,
    message: body,
    ...(title ? { title } : {}),
    priority: PRIORITY[m.severity] ?? 3,
    tags,
    ...(isHttpUrl(m.url) ? { click: m.url } : {}),
    ...(markdown ? { markdown: true as const } : {}),
  };
}

/** Bytes of UTF-8 of the code point starting at `i`, and its length in UTF-16 units. */
function codePointAt(s: string, i: number): { bytes: number; units: number } {
  const cp = s.codePointAt(i)!;
  return { bytes: cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4, units: cp > 0xffff ? 2 : 1 };
}

/**
 * Cuts `s` into pieces of at most `budget` bytes, at a line break or space when one is in the second half of a piece.
 */
function cutBytes(s: string, budget: number): string[] {
  const pieces: string[] = [];
  let rest = s;
  while (utf8Length(rest) > budget) {
    let bytes = 0;
    let end = 0;
    while (end < rest.length) {
      const c = codePointAt(rest, end);
      if (bytes + c.bytes > budget) break;
      bytes += c.bytes;
      end += c.units;
    }
    if (end === 0) end = codePointAt(rest, 0).units; // a budget below one character: progress anyway
    const half = Math.floor(end / 2);
    const nl = rest.lastIndexOf('\n', end);
    const sp = rest.lastIndexOf(' ', end);
    const at = nl >= half && nl > 0 ? nl : sp >= half && sp > 0 ? sp : -1;
    if (at > 0) {
      pieces.push(rest.slice(0, at));
      rest = rest.slice(at + 1);
    } else {
      pieces.push(rest.slice(0, end));
      rest = rest.slice(end);
    }
  }
  pieces.push(rest);
  return pieces;
}

/**
 * `body` as one message when it fits `maxBytes` of UTF-8, else as pieces that each fit, each
 * ending with a part marker in `locale`.
 */
export function splitBody(body: string, locale: OutboundMessage['locale'], maxBytes = MAX_MESSAGE_BYTES): string[] {
  if (utf8Length(body) <= maxBytes) return [body];
  let n = 2;
  for (let round = 0; ; round++) {
    const reserve = utf8Length(`\n\n${text.part(locale, n, n)}`);
    const pieces = cutBytes(body, Math.max(1, maxBytes - reserve));
    // The marker's length depends on the digits of the count: cut again when the count outgrew the reserve.
    if (String(pieces.length).length <= String(n).length || round === 3) {
      return pieces.map((p, k) => `${p}\n\n${text.part(locale, k + 1, pieces.length)}`);
    }
    n = pieces.length;
  }
}

/** The messages to publish for `payload`: its body whole, or split so that each message and its JSON body fit. */
export function pieces(payload: NtfyPayload, locale: OutboundMessage['locale']): string[] {
  let limit = MAX_MESSAGE_BYTES;
  let out = splitBody(payload.message, locale, limit);
  for (let round = 0; round < 4; round++) {
    const worst = Math.max(...out.map((message) => utf8Length(JSON.stringify({ ...payload, message }))));
    if (worst <= MAX_JSON_BYTES) break;
    limit = Math.max(64, limit - (worst - MAX_JSON_BYTES));
    out = splitBody(payload.message, locale, limit);
  }
  return out;
}
