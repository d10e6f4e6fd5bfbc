/**
 * A loopback fake of bbernhard/signal-cli-rest-api's `POST /v2/send`, from its Swagger
 * documentation (SendMessageV2, 201 SendMessageResponse, 400/429 `{"error"}`) and the behaviour
 * its handler documents:
 * - body `{number, recipients[], message, text_mode?: "normal"|"styled", quote_timestamp?,
 *   quote_author?, quote_message?, …}`; `recipients` are numbers, UUIDs or `group.<id>` ids;
 *   numbers and groups cannot be mixed in one request, nor two groups;
 * - `text_mode: "styled"` turns `**bold**`, `*italic*`, `~strike~`, `` `mono` `` and `||spoiler||`
 *   into text styles (`start:length:STYLE`, UTF-16 offsets) and removes the markers; a backslash
 *   before a marker makes it literal (the parser of 0.96 and later, ported here);
 * - `201 {"timestamp": "<ms>"}` (string); `arrayAnswer` gives the newer
 *   `[{"timestamp", "errors": {"recipients": [{number, reason}]}}]`;
 * - `400 {"error": "…"}` for what signal-cli refuses, `429 {"error", "challenge_tokens", "account"}`
 *   when Signal rate-limits the sender.
 * Messages recipients receive are recorded with their visible text and styles; a text over the
 * 2,000 bytes Signal shows inline is recorded as clipped.
 */
import http from 'node:http';

export const SENDER = '+4915112345678';
/** group.<base64 of signal-cli's base64 group id (32 bytes)> */
export const GROUP = `group.${Buffer.from(Buffer.alloc(32, 7).toString('base64')).toString('base64')}`;
export const OTHER_GROUP = `group.${Buffer.from(Buffer.alloc(32, 9).toString('base64')).toString('base64')}`;
export const INLINE_LIMIT_BYTES = 2000;

export interface Delivered {
  to: string[];
  text: string;
  styles: string[];
  timestamp: string;
  quote?: { timestamp: number; author: string; message: string };
  clipped: boolean;
  textMode: string;
}
export interface SignalReceived {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: any;
}

/** The REST API's styled-text parser: the visible text and its `start:length:STYLE` ranges. */
export function parseStyled(input: string): { text: string; styles: string[] } {
  const runes = [...input];
  const stack: Array<{ begin: number; token: string }> = [];
  const styles: string[] = [];
  let text = '';
  let prev = '';
  let i = 0;
  const handle = (token: string) => {
    if (stack.length && stack[stack.length - 1]!.token === token) {
      const begin = stack.pop()!.begin;
      const length = text.length - begin;
      if (token === 'BOLD_ITALIC') styles.push(`${begin}:${length}:BOLD`, `${begin}:${length}:ITALIC`);
      else styles.push(`${begin}:${length}:${token}`);
    } else stack.push({ begin: text.length, token });
  };
  while (i < runes.length) {
    const c = runes[i++]!;
    const next = runes[i] ?? '';
    if (c === '*') {
      if (next === '*') {
        i++;
        if (runes[i] === '*') {
          i++;
          if (prev === '\\') {
            prev = c;
            text += '***';
            continue;
          }
          handle('BOLD_ITALIC');
        } else {
          if (prev === '\\') {
            prev = c;
            text += '**';
            continue;
          }
          handle('BOLD');
        }
      } else {
        if (prev === '\\') {
          prev = c;
          text += '*';
          continue;
        }
        handle('ITALIC');
      }
    } else if (c === '|' && next === '|') {
      i++;
      if (prev === '\\') {
        prev = c;
        text += '||';
        continue;
      }
      handle('SPOILER');
    } else if (c === '~') {
      if (prev === '\\') {
        prev = c;
        text += '~';
        continue;
      }
      handle('STRIKETHROUGH');
    } else if (c === '`') {
      if (prev === '\\') {
        prev = c;
        text += '`';
        continue;
      }
      handle('MONOSPACE');
    } else if (c === '\\' && (next === '*' || next === '`' || next === '|' || next === '~')) {
      prev = c;
      continue;
    } else text += c;
    prev = c;
  }
  return { text, styles };
}

const isGroup = (r: string) => r.startsWith('group.');
const isNumber = (r: string) =>
  /^\+[0-9]{7,15}$/.test(r) || /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(r);

export class SignalRestApiFake {
  private server = http.createServer((req, res) => this.handle(req, res));
  private port = 0;
  private clock = 1767225600000;
  readonly received: SignalReceived[] = [];
  readonly delivered: Delivered[] = [];
  /** Accounts registered on this server (senders). */
  accounts = new Set([SENDER]);
  /** Groups the sender is a member of. */
  groups = new Set([GROUP, OTHER_GROUP]);
  /** Numbers without a Signal account. */
  unregistered = new Set<string>();
  /** Answer the next request with this status and `{"error"}` (or the body given). */
  failNext: { status: number; error: string } | null = null;
  /** Fail the request for this group with a 500 (signal-cli's daemon gone mid-send). */
  failGroup: string | null = null;
  /** Answer the next `count` requests with 429 and challenge tokens. */
  rateLimit: { count: number; retryAfter?: string } | null = null;
  /** Answer in the newer list form, with per-recipient errors. */
  arrayAnswer = false;
  /** Recipients the message did not reach though the send succeeded (list form only). */
  partial: Array<{ number: string; reason: string }> = [];

  async start(): Promise<this> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.port = (this.server.address() as { port: number }).port;
    return this;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((r) => this.server.close(() => r()));
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  private json(res: http.ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}): void {
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers }).end(JSON.stringify(value));
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = new URL(req.url ?? '/', this.url).pathname;
      let body: any;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        body = undefined;
      }
      this.received.push({ method: req.method ?? '', path, headers: req.headers, body });
      if (path !== '/v2/send')
        return void res.writeHead(404, { 'content-type': 'text/plain' }).end('404 page not found');
      if (req.method !== 'POST')
        return void res.writeHead(405, { 'content-type': 'text/plain' }).end('405 method not allowed');
      if (this.rateLimit && this.rateLimit.count > 0) {
        this.rateLimit.count--;
        return this.json(
          res,
          429,
          {
            error:
              'Failed to send message due to rate limiting. Use the attached challenge tokens to lift the rate ' +
              "limit restrictions via the '/v1/accounts/{number}/rate-limit-challenge' endpoint.",
            challenge_tokens: ['0b0e6c8e-1a7b-4f31-9a8c-2d1f00c0ffee'],
            account: body?.number ?? '',
          },
          this.rateLimit.retryAfter ? { 'retry-after': this.rateLimit.retryAfter } : {},
        );
      }
      if (this.failNext) {
        const f = this.failNext;
        this.failNext = null;
        return this.json(res, f.status, { error: f.error });
      }
      if (!body || typeof body !== 'object' || typeof body.message !== 'string' || !Array.isArray(body.recipients))
        return this.json(res, 400, { error: "Couldn't process request - invalid request" });
      if (!body.recipients.length)
        return this.json(res, 400, { error: "Couldn't process request - please provide at least one recipient" });
      if (!body.number)
        return this.json(res, 400, { error: "Couldn't process request - please provide a valid number" });
      const recipients: string[] = body.recipients;
      const groups = recipients.filter(isGroup);
      const numbers = recipients.filter((r) => !isGroup(r));
      if (numbers.length && groups.length)
        return this.json(res, 400, {
          error:
            'Signal Messenger Groups and phone numbers cannot be specified together in one request! Please split ' +
            'them up into multiple REST API calls.',
        });
      if (groups.length > 1)
        return this.json(res, 400, {
          error:
            'A signal message cannot be sent to more than one group at once! Please use multiple REST API calls ' +
            'for that.',
        });
      if (!this.accounts.has(body.number))
        return this.json(res, 400, { error: `User ${body.number} is not registered.` });
      if (numbers.some((n) => !isNumber(n)))
        return this.json(res, 400, { error: `Invalid identifier ${numbers.find((n) => !isNumber(n))}` });
      if (groups[0] && groups[0] === this.failGroup)
        return this.json(res, 500, { error: 'Post "http://127.0.0.1:6001/api/v1/rpc": EOF' });
      if (groups[0] && !this.groups.has(groups[0]))
        return this.json(res, 400, { error: 'Failed to send message: Invalid group id' });
      const gone = numbers.find((n) => this.unregistered.has(n));
      if (gone) return this.json(res, 400, { error: `Failed to send message: Unregistered user "${gone}"` });

      const { text, styles } =
        body.text_mode === 'styled' ? parseStyled(body.message) : { text: body.message, styles: [] };
      const timestamp = String(++this.clock);
      const clipped = Buffer.byteLength(text, 'utf8') > INLINE_LIMIT_BYTES;
      const quote =
        body.quote_timestamp !== undefined
          ? { timestamp: body.quote_timestamp, author: body.quote_author, message: body.quote_message }
          : undefined;
      this.delivered.push({
        to: recipients,
        text,
        styles,
        timestamp,
        quote,
        clipped,
        textMode: body.text_mode ?? 'normal',
      });
      if (!this.arrayAnswer) return this.json(res, 201, { timestamp });
      const errors = this.partial.length ? { errors: { recipients: this.partial } } : {};
      this.json(res, 201, [{ timestamp, ...errors }]);
    });
  }
}
