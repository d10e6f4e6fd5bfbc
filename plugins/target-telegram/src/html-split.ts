/**
 * Splits Telegram HTML into parts that each fit the Bot API's text limit.
 *
 * Telegram counts the limit on the text left after entity parsing (tags removed, `&amp;` is one
 * character), so the budget is spent on visible characters only. A cut never lands inside a tag,
 * an entity or a surrogate pair; tags open at the cut are closed at the end of the part and opened
 * again, with their attributes, at the start of the next one.
 */

type Token =
  | { kind: 'text'; raw: string; units: number; space: boolean }
  | { kind: 'open'; raw: string; name: string }
  | { kind: 'close'; raw: string; name: string }
  | { kind: 'void'; raw: string };

const ENTITY = /^&(#[0-9]{1,7}|#x[0-9a-f]{1,6}|[a-z]{2,8});/i;

/** Length in UTF-16 code units of what an entity stands for (Telegram limits count these). */
function entityUnits(body: string): number {
  if (body[0] !== '#') return 1;
  const cp = body[1] === 'x' || body[1] === 'X' ? parseInt(body.slice(2), 16) : parseInt(body.slice(1), 10);
  return cp > 0xffff && cp <= 0x10ffff ? 2 : 1;
}

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

function tokenize(html: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < html.length) {
    const c = html[i];
    if (c === '<') {
      const end = tagEnd(html, i);
      const m = end > 0 ? /^<(\/?)([a-z][a-z0-9-]*)/i.exec(html.slice(i, end + 1)) : null;
      if (m) {
        const raw = html.slice(i, end + 1);
        const name = m[2].toLowerCase();
        tokens.push(
          m[1]
            ? { kind: 'close', raw, name }
            : raw.endsWith('/>')
              ? { kind: 'void', raw }
              : { kind: 'open', raw, name },
        );
        i = end + 1;
        continue;
      }
    } else if (c === '&') {
      const m = ENTITY.exec(html.slice(i, i + 12));
      if (m) {
        tokens.push({ kind: 'text', raw: m[0], units: entityUnits(m[1]), space: false });
        i += m[0].length;
        continue;
      }
    }
    const cp = html.codePointAt(i)!;
    const raw = String.fromCodePoint(cp);
    tokens.push({ kind: 'text', raw, units: raw.length, space: /\s/.test(raw) });
    i += raw.length;
  }
  return tokens;
}

/** Closes the open tags innermost first. */
const closers = (stack: { name: string }[]): string =>
  stack
    .map((t) => `</${t.name}>`)
    .reverse()
    .join('');

/** Visible length of Telegram HTML, in UTF-16 code units (tags removed, entities count as what they encode). */
export function visibleLength(html: string): number {
  let n = 0;
  for (const t of tokenize(html)) if (t.kind === 'text') n += t.units;
  return n;
}

/**
 * Splits `html` into parts of at most `limit` visible characters, each with balanced tags.
 * Prefers to cut after a line break, then after a space, when that keeps a part at least half full.
 */
export function splitHtml(html: string, limit: number): string[] {
  if (limit < 1) throw new RangeError('limit must be positive');
  const tokens = tokenize(html);
  const parts: string[] = [];
  let stack: Extract<Token, { kind: 'open' }>[] = [];
  let i = 0;
  while (i < tokens.length) {
    const prefix = stack.map((t) => t.raw).join('');
    let cur = [...stack];
    let visible = 0;
    let j = i;
    let lineBreak: { at: number; stack: typeof cur; visible: number } | undefined;
    let spaceBreak: typeof lineBreak;
    for (; j < tokens.length; j++) {
      const t = tokens[j];
      if (t.kind === 'text') {
        if (visible + t.units > limit) break;
        visible += t.units;
        if (t.space) {
          const point = { at: j + 1, stack: [...cur], visible };
          if (t.raw === '\n') lineBreak = point;
          else spaceBreak = point;
        }
      } else if (t.kind === 'open') cur.push(t);
      else if (t.kind === 'close') {
        const k = cur.map((s) => s.name).lastIndexOf(t.name);
        if (k >= 0) cur = cur.slice(0, k);
      }
    }
    const full = { end: j, stack: cur };
    let end = j;
    if (j < tokens.length) {
      const point = [lineBreak, spaceBreak].find((p) => p && p.visible * 2 >= limit);
      if (point) {
        end = point.at;
        cur = point.stack;
      }
      // Tags opened right before the cut belong to the next part, or this one would end in `<b></b>`.
      while (end > i && tokens[end - 1].kind === 'open') {
        end--;
        cur = cur.slice(0, -1);
      }
      // Close tags right after the cut end this part, or the next would start with an empty entity.
      while (end < tokens.length && tokens[end].kind === 'close') {
        const name = (tokens[end] as { name: string }).name;
        const k = cur.map((s) => s.name).lastIndexOf(name);
        if (k < 0) break;
        cur = cur.slice(0, k);
        end++;
      }
    }
    // A single character wider than the limit (a surrogate pair with limit 1) still has to go somewhere.
    if (end <= i) {
      end = full.end + 1;
      cur = full.stack;
    }
    const body = tokens
      .slice(i, end)
      .map((t) => t.raw)
      .join('');
    const text = prefix + body + closers(cur);
    // Telegram refuses a text that is empty once trimmed ("message text is empty").
    if (/\S/.test(stripTags(text))) parts.push(text);
    stack = cur;
    i = end;
  }
  return parts;
}

/** The text of Telegram HTML without tags (entities left encoded), for emptiness checks. */
function stripTags(html: string): string {
  return tokenize(html)
    .filter((t) => t.kind === 'text')
    .map((t) => t.raw)
    .join('');
}
