/**
 * Fits a rendered message to the limits its target declares (`maxMessageLength`, `maxTitleLength`,
 * `overflow`): titles are cut with `…`; a long body is cut with `…` (`truncate`, the default), sent
 * as several parts each ending with a localized part marker (`split`), or passed whole when the
 * plugin fits bodies itself (`plugin`).
 *
 * Lengths are UTF-16 code units of the string as sent, markup included, so a part never exceeds the
 * declared limit. Cuts prefer a line break, then a space, when that keeps the part at least half
 * full; they never land inside an HTML tag or entity or a surrogate pair. HTML tags open at a cut
 * are closed at the end of the part and opened again (with their attributes) at the start of the
 * next; a Markdown code fence open at a cut is closed and reopened the same way. In Markdown a
 * backslash escape (`\.`) is one piece: no cut falls between the `\` and the character it escapes.
 *
 * The core fits every message with this before `send()` sees it, and the test host's `message()`
 * does the same, so a plugin's tests see what the service would send.
 */
import type { Locale, MessageFormat, OutboundMessage, TargetLimits } from './index.ts';

const ELLIPSIS = '…';

type Tok =
  | { kind: 'text'; raw: string; space: boolean }
  | { kind: 'open'; raw: string; name: string }
  | { kind: 'close'; raw: string; name: string };

interface Markup {
  tokenize(s: string): Tok[];
  /** What closes the open elements at the end of a part. */
  closer(stack: Tok[]): string;
  /** What opens them again at the start of the next. */
  opener(stack: Tok[]): string;
}

function chars(s: string, from: number, out: Tok[]): number {
  const cp = s.codePointAt(from)!;
  const raw = String.fromCodePoint(cp);
  out.push({ kind: 'text', raw, space: raw === ' ' || raw === '\n' || raw === '\t' || raw === '\r' });
  return raw.length;
}

const text: Markup = {
  tokenize(s) {
    const out: Tok[] = [];
    for (let i = 0; i < s.length; ) i += chars(s, i, out);
    return out;
  },
  closer: () => '',
  opener: () => '',
};

/**
 * The characters the core escapes with a backslash when it puts a value into a Markdown message
 * (`{{path}}` in a template rendered for a target whose format is `markdown`): CommonMark's
 * backslash escapes, for the ones Markdown dialects give a meaning (emphasis, code, links, headings,
 * lists, tables, quotes, strikethrough, spoilers, HTML).
 */
export const MARKDOWN_ESCAPED = '\\`*_{}[]()#+-.!|>~<';

const ASCII_PUNCTUATION = /^[!-/:-@[-`{-~]$/;
const ESCAPE = /\\([\\`*_{}[\]()#+\-.!|>~<])/g;

/** A Markdown body as plain text: the core's backslash escapes taken out (`1\.5` → `1.5`). */
export function markdownToPlain(s: string): string {
  return s.replace(ESCAPE, '$1');
}

/**
 * Markdown: only code fences need closing; a cut elsewhere at a space leaves inline markup mostly
 * whole. A backslash escape is one piece, so a cut never leaves a lone `\` at the end of a part.
 */
const markdown: Markup = {
  tokenize(s) {
    const out: Tok[] = [];
    let open = false;
    for (let i = 0; i < s.length; ) {
      if (s[i] === '\\' && i + 1 < s.length && ASCII_PUNCTUATION.test(s[i + 1]!)) {
        out.push({ kind: 'text', raw: s.slice(i, i + 2), space: false });
        i += 2;
        continue;
      }
      if (s.startsWith('```', i) && (i === 0 || s[i - 1] === '\n')) {
        // The fence with its info string (```js) up to the end of the line.
        const nl = s.indexOf('\n', i);
        const raw = open ? '```' : s.slice(i, nl < 0 ? s.length : nl);
        out.push(open ? { kind: 'close', raw, name: '```' } : { kind: 'open', raw, name: '```' });
        open = !open;
        i += raw.length;
        continue;
      }
      i += chars(s, i, out);
    }
    return out;
  },
  closer: (stack) => (stack.length ? '\n```' : ''),
  opener: (stack) => (stack.length ? `${stack[stack.length - 1]!.raw}\n` : ''),
};

const ENTITY = /^&(#[0-9]{1,7}|#x[0-9a-f]{1,6}|[a-z][a-z0-9]{1,31});/i;
const VOID = new Set([
  'br',
  'hr',
  'img',
  'wbr',
  'input',
  'meta',
  'link',
  'area',
  'base',
  'col',
  'embed',
  'source',
  'track',
]);

/** Index of the `>` that ends the tag starting at `start`, honouring quoted attribute values; -1 if none. */
function tagEnd(html: string, start: number): number {
  let quote = '';
  for (let i = start + 1; i < html.length; i++) {
    const c = html[i];
    if (quote) {
      if (c === quote) quote = '';
      continue;
    }
    if (c === '"' || c === "'") quote = c;
    else if (c === '>') return i;
    else if (c === '<') return -1;
  }
  return -1;
}

const html: Markup = {
  tokenize(s) {
    const out: Tok[] = [];
    for (let i = 0; i < s.length; ) {
      const c = s[i];
      if (c === '<') {
        const end = tagEnd(s, i);
        const m = end > 0 ? /^<(\/?)([a-z][a-z0-9-]*)/i.exec(s.slice(i, end + 1)) : null;
        if (m) {
          const raw = s.slice(i, end + 1);
          const name = m[2]!.toLowerCase();
          // A void or self-closed tag is an indivisible piece of text as far as cutting goes.
          if (m[1]) out.push({ kind: 'close', raw, name });
          else if (raw.endsWith('/>') || VOID.has(name)) out.push({ kind: 'text', raw, space: name === 'br' });
          else out.push({ kind: 'open', raw, name });
          i = end + 1;
          continue;
        }
      } else if (c === '&') {
        const m = ENTITY.exec(s.slice(i, i + 40));
        if (m) {
          out.push({ kind: 'text', raw: m[0], space: false });
          i += m[0].length;
          continue;
        }
      }
      i += chars(s, i, out);
    }
    return out;
  },
  closer: (stack) =>
    stack
      .map((t) => `</${(t as { name: string }).name}>`)
      .reverse()
      .join(''),
  opener: (stack) => stack.map((t) => t.raw).join(''),
};

const MARKUP: Record<MessageFormat, Markup> = { text, markdown, html };

function applyTok(stack: Tok[], t: Tok): Tok[] {
  if (t.kind === 'open') return [...stack, t];
  if (t.kind === 'close') {
    const k = stack.map((s) => (s as { name: string }).name).lastIndexOf(t.name);
    return k >= 0 ? stack.slice(0, k) : stack;
  }
  return stack;
}

/** A close tag matching no open element: left out, so every part stays balanced. */
const stray = (stack: Tok[], t: Tok): boolean =>
  t.kind === 'close' && !stack.some((s) => (s as { name: string }).name === t.name);

/** Cuts a string to at most `limit` code units without splitting a surrogate pair. */
function hardCut(s: string, limit: number): string {
  if (s.length <= limit) return s;
  let end = Math.max(0, limit);
  const c = s.charCodeAt(end - 1);
  if (c >= 0xd800 && c <= 0xdbff) end--;
  return s.slice(0, end);
}

/**
 * Splits `s` into parts of at most `limit` code units each, markup balanced in every part.
 * `max` stops after that many parts (truncation wants only the first).
 */
export function splitFormatted(s: string, limit: number, format: MessageFormat, max = Infinity): string[] {
  const m = MARKUP[format] ?? text;
  const tokens = m.tokenize(s);
  const parts: string[] = [];
  let stack: Tok[] = [];
  let i = 0;
  while (i < tokens.length && parts.length < max) {
    const prefix = m.opener(stack);
    let cur = stack;
    let len = prefix.length;
    let j = i;
    let lineBreak: { at: number; stack: Tok[]; len: number } | undefined;
    let spaceBreak: typeof lineBreak;
    for (; j < tokens.length; j++) {
      const t = tokens[j]!;
      if (stray(cur, t)) continue;
      const next = applyTok(cur, t);
      if (len + t.raw.length + m.closer(next).length > limit) break;
      len += t.raw.length;
      cur = next;
      if (t.kind === 'text' && t.space) {
        const point = { at: j + 1, stack: cur, len };
        if (t.raw === '\n' || t.raw.startsWith('<')) lineBreak = point;
        else spaceBreak = point;
      }
    }
    let end = j;
    if (j < tokens.length) {
      const point = [lineBreak, spaceBreak].find((p) => p && p.len * 2 >= limit);
      if (point) {
        end = point.at;
        cur = point.stack;
      }
      // Elements opened right before the cut belong to the next part, or this one ends in `<b></b>`.
      while (end > i && tokens[end - 1]!.kind === 'open') {
        end--;
        cur = cur.slice(0, -1);
      }
      // A close right after the cut ends this part (its closer is already counted): no empty element next.
      while (
        end < tokens.length &&
        tokens[end]!.kind === 'close' &&
        cur.length &&
        (cur[cur.length - 1] as { name: string }).name === (tokens[end] as { name: string }).name
      ) {
        cur = cur.slice(0, -1);
        end++;
      }
    }
    if (end <= i) {
      // Not even one piece fits with the markup around it (a limit smaller than a tag): give up the
      // markup that does not fit (its close tags are dropped as strays), then, for a single piece
      // longer than the limit, cut it hard.
      const t = tokens[i]!;
      if (t.kind !== 'text') {
        stack = t.kind === 'close' ? applyTok(stack, t) : stack;
        i++;
        continue;
      }
      if (stack.length) {
        stack = [];
        continue;
      }
      // (Only a limit of 1 cannot hold a surrogate pair: it becomes U+FFFD.)
      parts.push(hardCut(t.raw, limit) || '\ufffd');
      i++;
      continue;
    }
    let body = '';
    for (let k = i, st = stack; k < end; k++) {
      const t = tokens[k]!;
      if (stray(st, t)) continue;
      st = applyTok(st, t);
      body += t.raw;
    }
    const part = prefix + body + m.closer(cur);
    if (/\S/.test(part)) parts.push(part);
    stack = cur;
    i = end;
  }
  return parts;
}

/** Cuts `s` to at most `limit` code units, ending with `…`, markup balanced. */
export function truncateFormatted(s: string, limit: number, format: MessageFormat): string {
  if (s.length <= limit) return s;
  if (limit <= ELLIPSIS.length) return hardCut(ELLIPSIS, limit);
  const head = splitFormatted(s, limit - ELLIPSIS.length, format, 1)[0] ?? '';
  // Trailing blanks before the ellipsis read badly; markup closers stay where they are.
  const trimmed = format === 'html' ? head : head.replace(/\s+$/, '');
  return hardCut(trimmed + ELLIPSIS, limit);
}

const MARKER: Record<Locale, (k: number, n: number) => string> = {
  en: (k, n) => `(part ${k} of ${n})`,
  ru: (k, n) => `(часть ${k} из ${n})`,
};

/** The line that ends part `k` of `n`, in the target's locale. */
export function partMarker(locale: Locale, k: number, n: number): string {
  return (MARKER[locale] ?? MARKER.en)(k, n);
}

const NAMED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };

/** Plain text of an HTML part (for the plain-text alternative of a split message). */
export function htmlToPlain(s: string): string {
  return s
    .replace(/<br\s*\/?>/gi, '\n')
    .replace(/<[^>]*>/g, '')
    .replace(/&(#[0-9]+|#x[0-9a-f]+|[a-z]+);/gi, (all, e: string) => {
      if (e[0] === '#') {
        const cp = e[1] === 'x' || e[1] === 'X' ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10);
        return cp > 0 && cp <= 0x10ffff ? String.fromCodePoint(cp) : all;
      }
      return NAMED[e.toLowerCase()] ?? all;
    });
}

/** The plain-text copy of a part rendered in `format`: HTML tags and entities or Markdown escapes taken out. */
export function plainOf(format: MessageFormat, s: string): string {
  return format === 'html' ? htmlToPlain(s) : format === 'markdown' ? markdownToPlain(s) : s;
}

/** Splits a body into at most-`limit` parts, each with room for its marker line. */
function splitWithMarkers(body: string, limit: number, format: MessageFormat, locale: Locale): string[] {
  // The marker's length depends on the number of parts; grow the reserve until it is stable.
  let n = 2;
  for (let round = 0; round < 4; round++) {
    const reserve = 2 + partMarker(locale, n, n).length;
    const parts = splitFormatted(body, Math.max(1, limit - reserve), format);
    if (String(parts.length).length <= String(n).length || round === 3) {
      return parts.map((p, k) => hardCut(`${p}\n\n${partMarker(locale, k + 1, parts.length)}`, limit));
    }
    n = parts.length;
  }
  return [body];
}

/**
 * The messages to send for one rendered message: one, unless the target's `overflow` is `split`
 * and the body is too long. Cheap when everything fits (two length checks).
 */
export function fitMessage(msg: OutboundMessage, limits: TargetLimits | undefined): OutboundMessage[] {
  if (!limits) return [msg];
  const maxBody = limits.maxMessageLength;
  const maxTitle = limits.maxTitleLength;
  let out = msg;
  if (maxTitle !== undefined && maxTitle > 0 && (msg.title.length > maxTitle || msg.plainTitle.length > maxTitle)) {
    out = {
      ...out,
      title: truncateFormatted(msg.title, maxTitle, msg.format),
      plainTitle: truncateFormatted(msg.plainTitle, maxTitle, 'text'),
    };
  }
  const overflow = limits.overflow ?? 'truncate';
  if (overflow === 'plugin' || !(maxBody > 0) || (msg.body.length <= maxBody && msg.plainBody.length <= maxBody))
    return [out];
  if (overflow === 'split' && msg.body.length > maxBody) {
    const parts = splitWithMarkers(msg.body, maxBody, msg.format, msg.locale);
    if (parts.length > 1) {
      return parts.map((body, k) => {
        const plain = plainOf(msg.format, body);
        return {
          ...out,
          body,
          plainBody: hardCut(plain, maxBody),
          deliveryId: k === 0 ? msg.deliveryId : `${msg.deliveryId}-${k + 1}`,
          part: { index: k + 1, count: parts.length },
        };
      });
    }
  }
  return [
    {
      ...out,
      body: truncateFormatted(msg.body, maxBody, msg.format),
      plainBody: truncateFormatted(msg.plainBody, maxBody, 'text'),
    },
  ];
}
