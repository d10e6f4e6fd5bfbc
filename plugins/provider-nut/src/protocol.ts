/**
 * Wire format of the NUT network protocol (TCP port 3493, one command or reply per line).
 * Multi-word elements are "quoted"; embedded quotes and backslashes are backslash-escaped.
 */

/** An `ERR <code>` answer from upsd, e.g. `ACCESS-DENIED`, `UNKNOWN-UPS`, `DATA-STALE`. */
export class NutServerError extends Error {
  readonly nutCode: string;
  constructor(nutCode: string, command: string) {
    super(`upsd answered ERR ${nutCode} to ${command}`);
    this.name = 'NutServerError';
    this.nutCode = nutCode;
  }
}

/** The conversation failed below the protocol: refused, timed out, cut or garbled. */
export class NutConnectionError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'NutConnectionError';
  }
}

/** STARTTLS could not be used as configured (not offered, or the certificate is not trusted). */
export class NutTlsError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'NutTlsError';
  }
}

/** Quotes one command argument when needed; refuses line breaks, which would inject commands. */
export function quoteArg(value: string): string {
  if (/[\r\n\0]/.test(value)) throw new NutConnectionError('a NUT command argument cannot contain line breaks');
  if (value !== '' && /^[^\s"\\]+$/.test(value)) return value;
  return `"${value.replace(/[\\"]/g, '\\$&')}"`;
}

/** Splits a reply line into words, honouring quotes and backslash escapes. */
export function tokenize(line: string): string[] {
  const out: string[] = [];
  let cur = '';
  let inWord = false;
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i]!;
    if (ch === '\\' && i + 1 < line.length) {
      cur += line[++i];
      inWord = true;
      continue;
    }
    if (ch === '"') {
      quoted = !quoted;
      inWord = true;
      continue;
    }
    if (!quoted && (ch === ' ' || ch === '\t')) {
      if (inWord) {
        out.push(cur);
        cur = '';
        inWord = false;
      }
      continue;
    }
    cur += ch;
    inWord = true;
  }
  if (quoted) throw new NutConnectionError('unterminated quote in a reply from upsd');
  if (inWord) out.push(cur);
  return out;
}

/** The ERR code of a reply line, or undefined for any other line. */
export function errCode(line: string): string | undefined {
  const words = line.split(' ');
  return words[0] === 'ERR' ? words[1] || 'UNKNOWN' : undefined;
}

/** Parses `VAR <ups> <name> "<value>"`; returns undefined for any other line. */
export function parseVarLine(line: string, ups: string): [string, string] | undefined {
  const words = tokenize(line);
  if (words.length !== 4 || words[0] !== 'VAR' || words[1]!.toLowerCase() !== ups.toLowerCase()) return undefined;
  return [words[2]!, words[3]!];
}
