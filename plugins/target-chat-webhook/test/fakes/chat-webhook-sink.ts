/**
 * A loopback fake of the three incoming-webhook endpoints, answering with each service's real
 * status codes and bodies:
 * - Discord `POST /api/webhooks/{id}/{token}?wait=true&thread_id=` → 200 message JSON (204 without wait);
 *   errors `{message, code}` (10015 Unknown Webhook, 50027 Invalid Webhook Token, 50006 empty,
 *   50035 Invalid Form Body), 429 `{message, retry_after, global}` + `Retry-After`.
 * - Discord `PATCH /api/webhooks/{id}/{token}/messages/{message_id}` (Edit Webhook Message) → 200
 *   message JSON for a message this webhook posted; 404 `{message: 'Unknown Message', code: 10008}` otherwise.
 * - Slack `POST /services/T/B/secret` → 200 `ok` (text/plain); errors as text/plain codes
 *   (`invalid_payload`, `no_text`, `invalid_token`, `no_service`, `channel_not_found`), 429 `rate_limited` +
 *   `Retry-After`.
 * - Mattermost `POST /hooks/{key}` → 200 `ok`; errors as AppError JSON `{id, message, detailed_error, request_id,
 *   status_code}`.
 */

import { randomUUID } from 'node:crypto';
import http from 'node:http';

export type SinkFormat = 'discord' | 'slack' | 'mattermost';

export interface Received {
  format: SinkFormat;
  method: string;
  path: string;
  query: Record<string, string>;
  body: any;
  /** The `Idempotency-Key` header the post carried. */
  idempotencyKey?: string;
}

const DISCORD = { id: '112233445566778899', token: 'dIsCoRd-ToKeN_abc' };
const SLACK = { path: '/services/T0001/B0001/', secret: 'sLaCkSeCrEt123' };
const MATTERMOST = { key: 'mmhookkey0123456789abcdefg' };

export class ChatWebhookSink {
  private server = http.createServer((req, res) => this.handle(req, res));
  private port = 0;
  private nextId = 1_000_000_000_000_000_000n;
  readonly received: Received[] = [];
  /** Discord messages by id as they stand now (edits applied). */
  readonly discordMessages = new Map<string, { embeds: any[]; content: string; edited: number }>();
  /** Mattermost posts after the server's own splitting of over-long text. */
  readonly mattermostPosts: string[] = [];
  /** Answer the next `count` requests with 429, asking to wait `seconds` (Discord gets it as a float). */
  rateLimit: { count: number; seconds: number } | null = null;
  /** Answer the next request with this status (a 5xx). */
  failNext: number | null = null;
  /** Mattermost channels that exist. */
  channels = new Set(['town-square', 'alerts']);
  /**
   * While true, each request is recorded and then kept unanswered until `release()`: a post the service is still
   * working on.
   */
  hold = false;
  private waiting: (() => void)[] = [];
  /** The most requests kept unanswered at once. */
  peakHeld = 0;
  /** Requests received and not answered yet. */
  get held(): number {
    return this.waiting.length;
  }
  /** Answers up to `n` held requests, oldest first (each as it would have been answered); returns how many. */
  release(n = Number.POSITIVE_INFINITY): number {
    const go = this.waiting.splice(0, n);
    for (const answer of go) answer();
    return go.length;
  }

  async start(): Promise<this> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.port = (this.server.address() as { port: number }).port;
    return this;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((r) => this.server.close(() => r()));
  }

  get base(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /**
   * The webhook URL of a format; `valid: false` gives a URL with a wrong secret, `'unknown'` one that never existed.
   */
  url(format: SinkFormat, variant: 'valid' | 'bad-token' | 'unknown' = 'valid'): string {
    if (format === 'discord') {
      const id = variant === 'unknown' ? '999' : DISCORD.id;
      return `${this.base}/api/webhooks/${id}/${variant === 'bad-token' ? 'wrong' : DISCORD.token}`;
    }
    if (format === 'slack')
      return (
        `${this.base}${variant === 'unknown' ? '/services/T9/B9/' : SLACK.path}` +
        `${variant === 'bad-token' ? 'wrong' : SLACK.secret}`
      );
    return `${this.base}/hooks/${variant === 'valid' ? MATTERMOST.key : 'nosuchhook0000000000000000'}`;
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', this.base);
      const format: SinkFormat = url.pathname.startsWith('/api/webhooks/')
        ? 'discord'
        : url.pathname.startsWith('/services/')
          ? 'slack'
          : 'mattermost';
      let body: any;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        body = undefined;
      }
      this.received.push({
        format,
        method: req.method ?? 'GET',
        path: url.pathname,
        query: Object.fromEntries(url.searchParams),
        body,
        idempotencyKey: req.headers['idempotency-key'] as string | undefined,
      });
      const edit =
        format === 'discord' && req.method === 'PATCH'
          ? /^\/api\/webhooks\/[^/]+\/[^/]+\/messages\/([^/]+)$/.exec(url.pathname)
          : null;
      if (req.method !== 'POST' && !edit) return void res.writeHead(405).end();
      if (this.hold) {
        this.waiting.push(() => this.answer(format, url, edit, body, res));
        this.peakHeld = Math.max(this.peakHeld, this.waiting.length);
        return;
      }
      this.answer(format, url, edit, body, res);
    });
  }

  private answer(
    format: SinkFormat,
    url: URL,
    edit: RegExpExecArray | null,
    body: any,
    res: http.ServerResponse,
  ): void {
    if (this.rateLimit && this.rateLimit.count > 0) {
      this.rateLimit.count--;
      return this.tooMany(format, res);
    }
    if (this.failNext) {
      const s = this.failNext;
      this.failNext = null;
      return this.serverError(format, s, res);
    }
    if (edit) return this.discordEdit(url, edit[1]!, body, res);
    if (format === 'discord') return this.discord(url, body, res);
    if (format === 'slack') return this.slack(url, body, res);
    return this.mattermost(url, body, res);
  }

  private json(res: http.ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}): void {
    res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(value));
  }

  private text(res: http.ServerResponse, status: number, value: string, headers: Record<string, string> = {}): void {
    res.writeHead(status, { 'content-type': 'text/plain', ...headers }).end(value);
  }

  private appError(res: http.ServerResponse, status: number, id: string, message: string): void {
    this.json(res, status, {
      id,
      message,
      detailed_error: '',
      request_id: randomUUID().replace(/-/g, '').slice(0, 26),
      status_code: status,
    });
  }

  private tooMany(format: SinkFormat, res: http.ServerResponse): void {
    const seconds = this.rateLimit!.seconds;
    const retryAfter = String(Math.ceil(seconds));
    if (format === 'discord') {
      return this.json(
        res,
        429,
        { message: 'You are being rate limited.', retry_after: seconds, global: false },
        {
          'retry-after': retryAfter,
          'x-ratelimit-scope': 'user',
          'x-ratelimit-remaining': '0',
          'x-ratelimit-reset-after': String(seconds),
        },
      );
    }
    if (format === 'slack') return this.text(res, 429, 'rate_limited', { 'retry-after': retryAfter });
    this.text(res, 429, 'limit exceeded\n', {
      'retry-after': retryAfter,
      'x-ratelimit-limit': '10',
      'x-ratelimit-remaining': '0',
      'x-ratelimit-reset': retryAfter,
    });
  }

  private serverError(format: SinkFormat, status: number, res: http.ServerResponse): void {
    if (format === 'discord') return this.json(res, status, { message: '500: Internal Server Error', code: 0 });
    if (format === 'slack') return this.text(res, status, 'rollup_error');
    this.appError(res, status, 'app.post.create_post.internal_error', 'Unable to save the post.');
  }

  private discord(url: URL, body: any, res: http.ServerResponse): void {
    const [, , , id, token] = url.pathname.split('/');
    if (id !== DISCORD.id) return this.json(res, 404, { message: 'Unknown Webhook', code: 10015 });
    if (token !== DISCORD.token) return this.json(res, 401, { message: 'Invalid Webhook Token', code: 50027 });
    if (!body || typeof body !== 'object')
      return this.json(res, 400, { message: 'Cannot send an empty message', code: 50006 });
    const thread = url.searchParams.get('thread_id');
    if (thread !== null && !/^\d+$/.test(thread))
      return this.json(res, 400, { message: 'Invalid Form Body', code: 50035 });
    const errors: Record<string, string> = {};
    if (typeof body.content === 'string' && body.content.length > 2000)
      errors.content = 'Must be 2000 or fewer in length.';
    const embeds: any[] = Array.isArray(body.embeds) ? body.embeds : [];
    if (embeds.length > 10) errors.embeds = 'Must be 10 or fewer in length.';
    let total = 0;
    embeds.forEach((e, i) => {
      if ((e.title ?? '').length > 256) errors[`embeds.${i}.title`] = 'Must be 256 or fewer in length.';
      if ((e.description ?? '').length > 4096) errors[`embeds.${i}.description`] = 'Must be 4096 or fewer in length.';
      total += (e.title ?? '').length + (e.description ?? '').length;
    });
    if (total > 6000) errors.embeds = 'Embed size exceeds maximum size of 6000';
    if (Object.keys(errors).length) {
      const nested = Object.fromEntries(
        Object.entries(errors).map(([k, m]) => [k, { _errors: [{ code: 'BASE_TYPE_MAX_LENGTH', message: m }] }]),
      );
      return this.json(res, 400, { message: 'Invalid Form Body', code: 50035, errors: nested });
    }
    if (!body.content && embeds.length === 0)
      return this.json(res, 400, { message: 'Cannot send an empty message', code: 50006 });
    if (url.searchParams.get('wait') !== 'true') return void res.writeHead(204).end();
    const messageId = String(this.nextId++);
    this.discordMessages.set(messageId, { embeds, content: body.content ?? '', edited: 0 });
    this.json(res, 200, {
      id: messageId,
      type: 0,
      content: body.content ?? '',
      channel_id: thread ?? '223344556677889900',
      embeds,
      author: { id: DISCORD.id, username: body.username ?? 'Captain Hook', bot: true },
      webhook_id: DISCORD.id,
      timestamp: new Date().toISOString(),
    });
  }

  private discordEdit(url: URL, messageId: string, body: any, res: http.ServerResponse): void {
    const [, , , id, token] = url.pathname.split('/');
    if (id !== DISCORD.id) return this.json(res, 404, { message: 'Unknown Webhook', code: 10015 });
    if (token !== DISCORD.token) return this.json(res, 401, { message: 'Invalid Webhook Token', code: 50027 });
    const msg = this.discordMessages.get(messageId);
    if (!msg) return this.json(res, 404, { message: 'Unknown Message', code: 10008 });
    if (!body || typeof body !== 'object')
      return this.json(res, 400, { message: 'Cannot send an empty message', code: 50006 });
    if (Array.isArray(body.embeds)) msg.embeds = body.embeds;
    if (typeof body.content === 'string') msg.content = body.content;
    msg.edited++;
    this.json(res, 200, {
      id: messageId,
      type: 0,
      content: msg.content,
      embeds: msg.embeds,
      webhook_id: DISCORD.id,
      edited_timestamp: new Date().toISOString(),
    });
  }

  private slack(url: URL, body: any, res: http.ServerResponse): void {
    if (!url.pathname.startsWith(SLACK.path)) return this.text(res, 404, 'no_service');
    if (url.pathname.slice(SLACK.path.length) !== SLACK.secret) return this.text(res, 403, 'invalid_token');
    if (!body || typeof body !== 'object') return this.text(res, 400, 'invalid_payload');
    if (!body.text && !body.blocks && !body.attachments) return this.text(res, 400, 'no_text');
    if (body.channel && !this.channels.has(String(body.channel).replace(/^#/, '')))
      return this.text(res, 404, 'channel_not_found');
    this.text(res, 200, 'ok');
  }

  private mattermost(url: URL, body: any, res: http.ServerResponse): void {
    if (url.pathname !== `/hooks/${MATTERMOST.key}`)
      return this.appError(res, 400, 'web.incoming_webhook.invalid.app_error', 'Invalid webhook.');
    if (!body || typeof body !== 'object')
      return this.appError(res, 400, 'web.incoming_webhook.parse.app_error', 'Unable to parse incoming data.');
    if (!body.text && !body.attachments)
      return this.appError(res, 400, 'web.incoming_webhook.text.app_error', 'No text specified.');
    if (body.channel && !this.channels.has(String(body.channel).replace(/^#/, ''))) {
      return this.appError(res, 404, 'web.incoming_webhook.channel.app_error', "Couldn't find the channel.");
    }
    // Like the server: text over the post limit becomes several consecutive posts.
    for (let i = 0; i < body.text.length; i += 16383) this.mattermostPosts.push(body.text.slice(i, i + 16383));
    this.text(res, 200, 'ok');
  }
}
