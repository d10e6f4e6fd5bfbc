/**
 * Just enough MIME (RFC 2045-2047) to check what the SMTP server received: unfolded headers with
 * encoded words decoded, multipart bodies split by boundary, base64 and quoted-printable decoded.
 * mailparser is not available here, and a tiny honest parser keeps the assertions on real bytes.
 */

export interface MimePart {
  headers: Map<string, string>;
  /** Main type/subtype, lower case, e.g. `text/plain`. */
  type: string;
  params: Record<string, string>;
  /** Decoded body (for text parts, decoded with the part's charset). */
  body: string;
  parts: MimePart[];
}

/** Decodes `=?charset?B|Q?...?=` words (RFC 2047); adjacent words join without the space between. */
export function decodeWords(value: string): string {
  return value
    .replace(/(=\?[^?]+\?[BQ]\?[^?]*\?=)\s+(?==\?)/gi, '$1')
    .replace(/=\?([^?]+)\?([BQ])\?([^?]*)\?=/gi, (_, charset: string, enc: string, text: string) => {
      const bytes =
        enc.toUpperCase() === 'B'
          ? Buffer.from(text, 'base64')
          : Buffer.from(
              text
                .replace(/_/g, ' ')
                .replace(/=([0-9A-F]{2})/gi, (_m, h: string) => String.fromCharCode(parseInt(h, 16))),
              'latin1',
            );
      return new TextDecoder(charset).decode(bytes);
    });
}

function decodeQuotedPrintable(s: string): Buffer {
  const soft = s.replace(/=\r?\n/g, '');
  const out: number[] = [];
  for (let i = 0; i < soft.length; i++) {
    if (soft[i] === '=' && /^[0-9A-F]{2}$/i.test(soft.slice(i + 1, i + 3))) {
      out.push(parseInt(soft.slice(i + 1, i + 3), 16));
      i += 2;
    } else out.push(soft.charCodeAt(i));
  }
  return Buffer.from(out);
}

function parseParams(value: string): { main: string; params: Record<string, string> } {
  const [main, ...rest] = value.split(';');
  const params: Record<string, string> = {};
  for (const p of rest) {
    const m = /^\s*([^=\s]+)\s*=\s*"?([^"]*)"?\s*$/.exec(p);
    if (m) params[m[1].toLowerCase()] = m[2];
  }
  return { main: main.trim().toLowerCase(), params };
}

export function parseMime(raw: string): MimePart {
  const split = raw.search(/\r?\n\r?\n/);
  const head = split < 0 ? raw : raw.slice(0, split);
  const rest = split < 0 ? '' : raw.slice(split).replace(/^\r?\n\r?\n/, '');
  const headers = new Map<string, string>();
  for (const line of head.replace(/\r?\n[ \t]+/g, ' ').split(/\r?\n/)) {
    const i = line.indexOf(':');
    if (i > 0) headers.set(line.slice(0, i).trim().toLowerCase(), decodeWords(line.slice(i + 1).trim()));
  }
  const { main, params } = parseParams(headers.get('content-type') ?? 'text/plain; charset=us-ascii');
  const part: MimePart = { headers, type: main, params, body: '', parts: [] };
  if (main.startsWith('multipart/') && params.boundary) {
    const sections = rest.split(`--${params.boundary}`);
    for (const s of sections.slice(1)) {
      if (s.startsWith('--')) break;
      part.parts.push(parseMime(s.replace(/^\r?\n/, '').replace(/\r?\n$/, '')));
    }
    return part;
  }
  const cte = (headers.get('content-transfer-encoding') ?? '7bit').toLowerCase();
  const bytes =
    cte === 'base64'
      ? Buffer.from(rest.replace(/\s+/g, ''), 'base64')
      : cte === 'quoted-printable'
        ? decodeQuotedPrintable(rest)
        : Buffer.from(rest, 'utf8');
  // SMTP carries text with CRLF line ends; compare against the LF the sender started from.
  part.body = new TextDecoder(params.charset ?? 'utf-8').decode(bytes).replace(/\r\n/g, '\n');
  return part;
}

/** All leaf parts, depth first. */
export function leaves(part: MimePart): MimePart[] {
  return part.parts.length ? part.parts.flatMap(leaves) : [part];
}
