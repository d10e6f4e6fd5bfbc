/**
 * The Bot API's `parse_mode: HTML` parser as the fake Telegram server applies it: the supported
 * tags only, strict nesting, the named entities `&lt; &gt; &amp; &quot;` and numeric ones.
 * Error texts follow the ones Telegram returns after "Bad Request: can't parse entities: ".
 * Written independently of the plugin's splitter so a splitter bug shows up as a rejected message.
 */

const SUPPORTED = new Set([
  'b',
  'strong',
  'i',
  'em',
  'u',
  'ins',
  's',
  'strike',
  'del',
  'span',
  'tg-spoiler',
  'a',
  'code',
  'pre',
  'blockquote',
  'tg-emoji',
  'tg-time',
]);
const NAMED: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"' };

export interface ParsedHtml {
  /** The message text after entity parsing. */
  text: string;
  entities: { type: string; offset: number; length: number }[];
}

export class HtmlParseError extends Error {}

const byteOffset = (s: string, i: number) => Buffer.byteLength(s.slice(0, i));

export function parseTelegramHtml(html: string): ParsedHtml {
  let text = '';
  const entities: ParsedHtml['entities'] = [];
  const stack: { name: string; offset: number }[] = [];
  let i = 0;
  while (i < html.length) {
    const c = html[i];
    if (c === '&') {
      const m = /^&(#x[0-9a-f]+|#[0-9]+|[a-z]+);/i.exec(html.slice(i, i + 16));
      if (m) {
        const body = m[1];
        let decoded: string | undefined;
        if (body[0] === '#') {
          const cp = body[1] === 'x' || body[1] === 'X' ? parseInt(body.slice(2), 16) : parseInt(body.slice(1), 10);
          if (cp > 0 && cp <= 0x10ffff) decoded = String.fromCodePoint(cp);
        } else decoded = NAMED[body];
        if (decoded !== undefined) {
          text += decoded;
          i += m[0].length;
          continue;
        }
      }
      text += '&';
      i++;
      continue;
    }
    if (c !== '<') {
      text += c;
      i++;
      continue;
    }
    const at = byteOffset(html, i);
    if (html[i + 1] === '/') {
      const close = html.indexOf('>', i);
      if (close < 0) throw new HtmlParseError(`Unclosed end tag at byte offset ${at}`);
      const name = html
        .slice(i + 2, close)
        .trim()
        .toLowerCase();
      const open = stack.pop();
      if (!open) throw new HtmlParseError(`Unexpected end tag at byte offset ${at}`);
      if (open.name !== name)
        throw new HtmlParseError(
          `Unmatched end tag at byte offset ${at}, expected "</${open.name}>", found "</${name}>"`,
        );
      entities.push({ type: open.name, offset: open.offset, length: text.length - open.offset });
      i = close + 1;
      continue;
    }
    const nm = /^<([a-z][a-z0-9-]*)/i.exec(html.slice(i));
    if (!nm) throw new HtmlParseError(`Unsupported start tag "" at byte offset ${at}`);
    const name = nm[1].toLowerCase();
    if (!SUPPORTED.has(name)) throw new HtmlParseError(`Unsupported start tag "${name}" at byte offset ${at}`);
    // Attributes: name="value", name='value', name=value or bare name, up to the closing `>`.
    let j = i + nm[0].length;
    const attrs: Record<string, string> = {};
    for (;;) {
      while (j < html.length && /\s/.test(html[j])) j++;
      if (j >= html.length) throw new HtmlParseError(`Unclosed start tag at byte offset ${at}`);
      if (html[j] === '>') {
        j++;
        break;
      }
      const an = /^[a-z0-9_-]+/i.exec(html.slice(j));
      if (!an) throw new HtmlParseError(`Empty attribute name in the tag "${name}" at byte offset ${at}`);
      j += an[0].length;
      let value = '';
      if (html[j] === '=') {
        j++;
        const q = html[j];
        if (q === '"' || q === "'") {
          const end = html.indexOf(q, j + 1);
          if (end < 0) throw new HtmlParseError(`Unclosed start tag at byte offset ${at}`);
          value = html.slice(j + 1, end);
          j = end + 1;
        } else {
          const v = /^[^\s>]*/.exec(html.slice(j))![0];
          value = v;
          j += v.length;
        }
      }
      attrs[an[0].toLowerCase()] = value;
    }
    if (name === 'span' && attrs.class !== 'tg-spoiler')
      throw new HtmlParseError(`Tag "span" must have class "tg-spoiler" at byte offset ${at}`);
    stack.push({ name, offset: text.length });
    i = j;
  }
  const open = stack.pop();
  if (open) throw new HtmlParseError(`Can't find end tag corresponding to start tag "${open.name}"`);
  return { text, entities };
}
