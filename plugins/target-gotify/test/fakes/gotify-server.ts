/**
 * A loopback fake of a Gotify server's message API, as Gotify's REST documentation (`POST /message`,
 * the Message and Error models) and the message-extras documentation give it:
 * - `POST {prefix}/message` authenticated by an application token in `X-Gotify-Key`, the `token`
 *   query parameter or `Authorization: Bearer`; an unknown token → 401
 *   `{"error":"Unauthorized","errorCode":401,"errorDescription":"you need to provide a valid access token or user
 *   credentials to access this api"}`.
 * - A client token authenticates too (recent servers), but without an application id the message
 *   is refused: 400 "appid is required when not authenticating with an application token".
 * - Body as JSON or form; `message` is required (400 "Field 'message' is required"); `extras` are
 *   accepted with a JSON body only; an empty title becomes the application's name and a missing
 *   priority its default priority.
 * - Success: 200 with the created message `{id, appid, message, title, priority, extras, date}`.
 * - Other paths: 404 `404 page not found` (text, as gin answers).
 * Gotify itself has no rate limit; `rateLimit` stands for a reverse proxy answering 429.
 */
import http from 'node:http';

export interface Received {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: http.IncomingHttpHeaders;
  body: any;
}

export interface StoredMessage {
  id: number;
  appid: number;
  message: string;
  title: string;
  priority: number;
  extras?: Record<string, unknown>;
  date: string;
}

export const APP_TOKEN = 'AVyv0pIxuW9d.Qk';
export const CLIENT_TOKEN = 'CcJ2q8yJ7e3rm5o';

export class GotifyServer {
  private server = http.createServer((req, res) => this.handle(req, res));
  private port = 0;
  private nextId = 1;
  readonly received: Received[] = [];
  readonly messages: StoredMessage[] = [];
  /** Applications by token. */
  apps = new Map<string, { id: number; name: string; defaultPriority: number }>([
    [APP_TOKEN, { id: 5, name: 'Herald', defaultPriority: 0 }],
  ]);
  clients = new Set([CLIENT_TOKEN]);
  /** Answer the next `count` requests with 429 (as a proxy would), with this Retry-After. */
  rateLimit: { count: number; retryAfter?: string } | null = null;
  /** Answer the next request with this status and Gotify error description. */
  failNext: { status: number; description: string } | null = null;

  /** The path the API is mounted under, as behind a reverse proxy (`/gotify`). */
  private readonly prefix: string;

  constructor(prefix = '') {
    this.prefix = prefix;
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

  get url(): string {
    return `http://127.0.0.1:${this.port}${this.prefix}`;
  }

  private error(res: http.ServerResponse, status: number, description: string): void {
    res
      .writeHead(status, { 'content-type': 'application/json; charset=utf-8' })
      .end(JSON.stringify({ error: http.STATUS_CODES[status], errorCode: status, errorDescription: description }));
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', `http://127.0.0.1:${this.port}`);
      const raw = Buffer.concat(chunks).toString('utf8');
      const json = /^application\/json/.test(req.headers['content-type'] ?? '');
      let body: any;
      if (json) {
        try {
          body = JSON.parse(raw);
        } catch {
          body = undefined;
        }
      } else body = Object.fromEntries(new URLSearchParams(raw));
      this.received.push({
        method: req.method ?? 'GET',
        path: url.pathname,
        query: Object.fromEntries(url.searchParams),
        headers: req.headers,
        body,
      });
      if (url.pathname !== `${this.prefix}/message` || req.method !== 'POST')
        return void res.writeHead(404, { 'content-type': 'text/plain' }).end('404 page not found');
      if (this.rateLimit && this.rateLimit.count > 0) {
        this.rateLimit.count--;
        return void res
          .writeHead(429, {
            'content-type': 'text/html',
            ...(this.rateLimit.retryAfter ? { 'retry-after': this.rateLimit.retryAfter } : {}),
          })
          .end('<html><body><h1>429 Too Many Requests</h1></body></html>');
      }
      if (this.failNext) {
        const f = this.failNext;
        this.failNext = null;
        return this.error(res, f.status, f.description);
      }
      const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
      const token = (req.headers['x-gotify-key'] as string | undefined) ?? url.searchParams.get('token') ?? bearer;
      const app = token ? this.apps.get(token) : undefined;
      if (!app && !(token && this.clients.has(token)))
        return this.error(res, 401, 'you need to provide a valid access token or user credentials to access this api');
      if (json && (body === undefined || typeof body !== 'object'))
        return this.error(res, 400, "invalid character 'x' looking for beginning of value");
      if (typeof body.message !== 'string' || body.message === '')
        return this.error(res, 400, "Field 'message' is required");
      if (!app) return this.error(res, 400, 'appid is required when not authenticating with an application token');
      if (body.priority !== undefined && !Number.isInteger(Number(body.priority)))
        return this.error(res, 400, "Field 'priority' is not valid");
      const m: StoredMessage = {
        id: this.nextId++,
        appid: app.id,
        message: body.message,
        title: typeof body.title === 'string' && body.title.trim() ? body.title : app.name,
        priority: body.priority !== undefined ? Number(body.priority) : app.defaultPriority,
        ...(json && body.extras ? { extras: body.extras } : {}),
        date: new Date().toISOString(),
      };
      this.messages.push(m);
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify(m));
    });
  }
}
