/**
 * A loopback fake of an ntfy server's publishing, as ntfy's documentation ("Publishing", "Publish as
 * JSON", "Authentication", "Limitations") and its error table give it:
 * - `PUT/POST /` with a JSON body `{topic, message, title, tags, priority, click, markdown, …}`;
 *   a body over 8,192 bytes (twice the message size) → 413 `{"code":41303,…}`; not JSON → 400 40024;
 *   a topic outside `^[-_A-Za-z0-9]{1,64}$` → 400 40009; a priority outside 1–5 → 400 40007.
 * - A message over 4,096 bytes of UTF-8 becomes an attachment on a server with an attachment
 *   cache; this fake has none, as ntfy without `attachment-cache-dir`: 400 40014 "attachments not allowed".
 * - `Authorization: Bearer tk_…` or `Basic` user:password; a credential that does not match → 401 40101;
 *   a protected topic without a user allowed to write → 403 40301.
 * - 429 `{"code":42901,…}` ("too many requests") or 42908 ("daily message quota reached"), without
 *   Retry-After as ntfy sends it (a proxy in front may add one); 500 50001.
 * - Success: 200 with the message as JSON (`id`, `time`, `expires`, `event: "message"`, `topic`,
 *   `message`, `title`, `tags`, `priority`, `click`, `content_type: "text/markdown"` for Markdown).
 * Errors are ntfy's errHTTP JSON: `{"code": 40101, "http": 401, "error": "unauthorized", "link": "…"}`.
 */

import { randomBytes } from 'node:crypto';
import http from 'node:http';

export interface Received {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  /** The parsed JSON body (undefined when it did not parse). */
  body: any;
  bytes: number;
}

export interface Published {
  id: string;
  topic: string;
  message: string;
  title?: string;
  tags?: string[];
  priority?: number;
  click?: string;
  content_type?: string;
}

export const ERR = {
  notFound: [404, 40401, 'page not found'],
  jsonInvalid: [400, 40024, 'invalid request: request body must be valid JSON'],
  jsonTooLarge: [413, 41303, 'JSON body too large'],
  topicInvalid: [400, 40009, 'invalid request: topic invalid'],
  priorityInvalid: [400, 40007, 'invalid priority parameter'],
  attachmentsDisallowed: [400, 40014, 'invalid request: attachments not allowed'],
  unauthorized: [401, 40101, 'unauthorized'],
  forbidden: [403, 40301, 'forbidden'],
  tooManyRequests: [429, 42901, 'limit reached: too many requests'],
  dailyQuota: [429, 42908, 'limit reached: daily message quota reached'],
  internal: [500, 50001, 'internal server error'],
} as const;

export class NtfyServer {
  private server = http.createServer((req, res) => this.handle(req, res));
  private port = 0;
  readonly received: Received[] = [];
  readonly published: Published[] = [];
  /** Users by name: password, access tokens, and the protected topics each may write to. */
  users = new Map<string, { password: string; tokens: string[]; write: string[] }>([
    ['phil', { password: 'mypass-123', tokens: ['tk_AgQdq7mVBoFD37zQVN29RhuMzNIz2'], write: ['protected'] }],
    ['reader', { password: 'reader-pass', tokens: [], write: [] }],
  ]);
  /** Topics only their users may write to (others are open to everyone, as on ntfy.sh). */
  protectedTopics = new Set(['protected']);
  /** Answer the next `count` publishes with 429 and this ntfy error code, optionally with a proxy's Retry-After. */
  rateLimit: { count: number; code: 42901 | 42908; retryAfter?: string } | null = null;
  /** Answer the next publish with this documented error (an entry of `ERR`). */
  failNext: readonly [number, number, string] | null = null;
  /** Answer the `n`-th publish (counting from 1) with 500, once. */
  failAt: number | null = null;
  private publishes = 0;

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

  private error(
    res: http.ServerResponse,
    e: readonly [number, number, string],
    headers: Record<string, string> = {},
  ): void {
    const link =
      e[1] === 40101 || e[1] === 40301
        ? 'https://ntfy.sh/docs/publish/#authentication'
        : e[0] === 429
          ? 'https://ntfy.sh/docs/publish/#limitations'
          : undefined;
    res
      .writeHead(e[0], { 'content-type': 'application/json', 'access-control-allow-origin': '*', ...headers })
      .end(`${JSON.stringify({ code: e[1], http: e[0], error: e[2], ...(link ? { link } : {}) })}\n`);
  }

  /** Who the Authorization header names: a user, null for none, false for a credential that does not match. */
  private user(header: string | undefined): string | null | false {
    if (!header) return null;
    const [scheme, value = ''] = header.split(' ', 2);
    if (scheme === 'Bearer') {
      for (const [name, u] of this.users) if (u.tokens.includes(value)) return name;
      return false;
    }
    if (scheme === 'Basic') {
      const decoded = Buffer.from(value, 'base64').toString('utf8');
      const i = decoded.indexOf(':');
      const u = this.users.get(decoded.slice(0, i));
      return u && (u.password === decoded.slice(i + 1) || u.tokens.includes(decoded.slice(i + 1)))
        ? decoded.slice(0, i)
        : false;
    }
    return false;
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const path = new URL(req.url ?? '/', this.url).pathname;
      let body: any;
      try {
        body = JSON.parse(raw.toString('utf8'));
      } catch {
        body = undefined;
      }
      this.received.push({ method: req.method ?? 'GET', path, headers: req.headers, body, bytes: raw.length });
      if ((req.method !== 'POST' && req.method !== 'PUT') || path !== '/') return this.error(res, ERR.notFound);
      this.publishes++;
      if (this.failAt === this.publishes) {
        this.failAt = null;
        return this.error(res, ERR.internal);
      }
      if (this.failNext) {
        const e = this.failNext;
        this.failNext = null;
        return this.error(res, e);
      }
      if (raw.length > 8192) return this.error(res, ERR.jsonTooLarge);
      if (!body || typeof body !== 'object' || Array.isArray(body)) return this.error(res, ERR.jsonInvalid);
      if (typeof body.topic !== 'string' || !/^[-_A-Za-z0-9]{1,64}$/.test(body.topic))
        return this.error(res, ERR.topicInvalid);
      const user = this.user(req.headers.authorization);
      if (user === false) return this.error(res, ERR.unauthorized);
      if (this.protectedTopics.has(body.topic) && (user === null || !this.users.get(user)!.write.includes(body.topic)))
        return this.error(res, ERR.forbidden);
      if (this.rateLimit && this.rateLimit.count > 0) {
        this.rateLimit.count--;
        const { code, retryAfter } = this.rateLimit;
        return this.error(
          res,
          code === 42908 ? ERR.dailyQuota : ERR.tooManyRequests,
          retryAfter ? { 'retry-after': retryAfter } : {},
        );
      }
      if (body.priority !== undefined && ![1, 2, 3, 4, 5].includes(body.priority))
        return this.error(res, ERR.priorityInvalid);
      const message = typeof body.message === 'string' && body.message !== '' ? body.message : 'triggered';
      if (Buffer.byteLength(message, 'utf8') > 4096) return this.error(res, ERR.attachmentsDisallowed);
      const now = Math.floor(Date.now() / 1000);
      const m: Published = {
        id: randomBytes(8).toString('base64url').replace(/[-_]/g, 'x').slice(0, 12),
        topic: body.topic,
        message,
        ...(body.title ? { title: body.title } : {}),
        ...(Array.isArray(body.tags) && body.tags.length ? { tags: body.tags } : {}),
        ...(body.priority ? { priority: body.priority } : {}),
        ...(body.click ? { click: body.click } : {}),
        ...(body.markdown === true ? { content_type: 'text/markdown' } : {}),
      };
      this.published.push(m);
      res
        .writeHead(200, { 'content-type': 'application/json', 'access-control-allow-origin': '*' })
        .end(`${JSON.stringify({ ...m, time: now, expires: now + 43200, event: 'message' })}\n`);
    });
  }
}
