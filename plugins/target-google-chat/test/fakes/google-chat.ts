/**
 * A loopback fake of a Google Chat space's incoming webhook, the Chat API's `spaces.messages.create`
 * as a webhook calls it, from Google's published reference:
 * - `POST /v1/spaces/{space}/messages?key={key}&token={token}` with a JSON `Message`
 *   (`text`, `thread: {threadKey} | {name}`, `cardsV2`, `fallbackText`…) → `200` with the created
 *   Message (`name: spaces/S/messages/M`, `thread: {name: spaces/S/threads/T, threadKey}`, `space`,
 *   `sender`, `createTime`, `text`, `argumentText`, `threadReply`).
 * - `messageReplyOption`: `MESSAGE_REPLY_OPTION_UNSPECIFIED` (default: a new thread),
 *   `REPLY_MESSAGE_FALLBACK_TO_NEW_THREAD` (into the thread named by `thread.threadKey` or
 *   `thread.name`, or a new thread with that key), `REPLY_MESSAGE_OR_FAIL` (404 without the thread).
 * - `requestId`: a request id seen before returns the message it created, and creates nothing.
 * - errors are `{"error": {"code", "message", "status", "details"}}`: 400 `INVALID_ARGUMENT`
 *   (bad JSON, unknown field, text over 4,096 characters; `API_KEY_INVALID` for a wrong key),
 *   401 `UNAUTHENTICATED` (wrong token), 403 `PERMISSION_DENIED` (webhook removed), 404
 *   `NOT_FOUND` (no such space), 429 `RESOURCE_EXHAUSTED`, 500 `INTERNAL`, 503 `UNAVAILABLE`.
 */
import http from 'node:http';

export const SPACE = 'AAAAbCdEfGh';
/** Every Chat webhook URL carries the same public API key; the token is the secret. */
export const KEY = 'AIzaSyDdI0hCZtE6vySjMm-WEfRq3CPzqKqqsHI';
export const TOKEN = 'gChAtToKeN_0123456789abcdefghijklmnopqrstu%3D';
export const MAX_TEXT = 4096;

const MESSAGE_FIELDS = new Set([
  'text',
  'thread',
  'cardsV2',
  'cards',
  'fallbackText',
  'accessoryWidgets',
  'privateMessageViewer',
  'annotations',
  'actionResponse',
  'clientAssignedMessageId',
]);

export interface ChatReceived {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: http.IncomingHttpHeaders;
  body: any;
}
export interface StoredMessage {
  name: string;
  text: string;
  thread: string;
  threadKey?: string;
  threadReply: boolean;
  createTime: string;
}

export class GoogleChatFake {
  private server = http.createServer((req, res) => this.handle(req, res));
  private port = 0;
  private n = 0;
  readonly received: ChatReceived[] = [];
  /** The space's messages in order of creation. */
  readonly messages: StoredMessage[] = [];
  /** Threads by key. */
  readonly threadsByKey = new Map<string, string>();
  private readonly byRequestId = new Map<string, object>();
  /** Answer the next `count` requests with 429 (and `Retry-After` when given). */
  throttle: { count: number; retryAfter?: string } | null = null;
  /** Answer the next request with this Google error. */
  failNext: { code: number; status: string; message: string } | null = null;
  /** The webhook was removed from the space. */
  revoked = false;

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

  /** The webhook URL the space shows; parts can be replaced. */
  url(o: { space?: string; key?: string; token?: string } = {}): string {
    return `${this.base}/v1/spaces/${o.space ?? SPACE}/messages?key=${o.key ?? KEY}&token=${o.token ?? TOKEN}`;
  }

  private error(
    res: http.ServerResponse,
    code: number,
    status: string,
    message: string,
    extra: Record<string, unknown> = {},
    headers: Record<string, string> = {},
  ): void {
    res
      .writeHead(code, { 'content-type': 'application/json; charset=UTF-8', ...headers })
      .end(JSON.stringify({ error: { code, message, status, ...extra } }, null, 2));
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', this.base);
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: any;
      try {
        body = JSON.parse(raw);
      } catch {
        body = undefined;
      }
      this.received.push({
        method: req.method ?? '',
        path: url.pathname,
        query: Object.fromEntries(url.searchParams),
        headers: req.headers,
        body,
      });

      const m = /^\/v1\/spaces\/([^/]+)\/messages$/.exec(url.pathname);
      if (!m || req.method !== 'POST') return this.error(res, 404, 'NOT_FOUND', 'Requested entity was not found.');
      if (url.searchParams.get('key') !== KEY) {
        return this.error(res, 400, 'INVALID_ARGUMENT', 'API key not valid. Please pass a valid API key.', {
          details: [
            {
              '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
              reason: 'API_KEY_INVALID',
              domain: 'googleapis.com',
              metadata: { service: 'chat.googleapis.com' },
            },
          ],
        });
      }
      if (url.searchParams.get('token') !== decodeURIComponent(TOKEN)) {
        return this.error(
          res,
          401,
          'UNAUTHENTICATED',
          'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other ' +
            'valid authentication credential.',
        );
      }
      if (m[1] !== SPACE) return this.error(res, 404, 'NOT_FOUND', 'Requested entity was not found.');
      if (this.revoked) return this.error(res, 403, 'PERMISSION_DENIED', 'The caller does not have permission');
      if (this.throttle && this.throttle.count > 0) {
        this.throttle.count--;
        return this.error(
          res,
          429,
          'RESOURCE_EXHAUSTED',
          'Resource has been exhausted (e.g. check quota).',
          {},
          this.throttle.retryAfter ? { 'retry-after': this.throttle.retryAfter } : {},
        );
      }
      if (this.failNext) {
        const f = this.failNext;
        this.failNext = null;
        return this.error(res, f.code, f.status, f.message);
      }
      if (!/^application\/json\b/i.test(req.headers['content-type'] ?? '') || !body || typeof body !== 'object') {
        return this.error(res, 400, 'INVALID_ARGUMENT', 'Invalid JSON payload received. Unexpected token.');
      }
      const unknown = Object.keys(body).find((k) => !MESSAGE_FIELDS.has(k));
      if (unknown)
        return this.error(
          res,
          400,
          'INVALID_ARGUMENT',
          `Invalid JSON payload received. Unknown name "${unknown}" at 'message': Cannot find field.`,
        );
      if (typeof body.text === 'string' && [...body.text].length > MAX_TEXT)
        return this.error(res, 400, 'INVALID_ARGUMENT', 'Message text is too long.');
      if (!body.text && !body.cardsV2)
        return this.error(res, 400, 'INVALID_ARGUMENT', 'Message cannot be empty. Discarding empty message.');

      const requestId = url.searchParams.get('requestId');
      if (requestId && this.byRequestId.has(requestId)) return this.ok(res, this.byRequestId.get(requestId)!);

      const option = url.searchParams.get('messageReplyOption') ?? 'MESSAGE_REPLY_OPTION_UNSPECIFIED';
      const key: string | undefined = typeof body.thread?.threadKey === 'string' ? body.thread.threadKey : undefined;
      const named: string | undefined = typeof body.thread?.name === 'string' ? body.thread.name : undefined;
      let thread: string | undefined;
      let threadReply = false;
      if (option !== 'MESSAGE_REPLY_OPTION_UNSPECIFIED') {
        const existing =
          key !== undefined
            ? this.threadsByKey.get(key)
            : named && this.messages.some((x) => x.thread === named)
              ? named
              : undefined;
        if (existing) {
          thread = existing;
          threadReply = true;
        } else if (option === 'REPLY_MESSAGE_OR_FAIL')
          return this.error(res, 404, 'NOT_FOUND', 'Requested entity was not found.');
      }
      const id = `${++this.n}Ab${this.n}`;
      if (!thread) {
        thread = `spaces/${SPACE}/threads/t${this.n}`;
        if (key !== undefined && option !== 'MESSAGE_REPLY_OPTION_UNSPECIFIED') this.threadsByKey.set(key, thread);
      }
      const createTime = new Date(Date.UTC(2026, 0, 1, 0, 0, this.n)).toISOString();
      const stored: StoredMessage = {
        name: `spaces/${SPACE}/messages/${id}.${id}`,
        text: body.text ?? '',
        thread,
        threadKey: key,
        threadReply,
        createTime,
      };
      this.messages.push(stored);
      const answer = {
        name: stored.name,
        sender: {
          name: 'users/114022495153014004089',
          displayName: 'Herald',
          avatarUrl: '',
          email: '',
          domainId: '',
          type: 'BOT',
          isAnonymous: false,
        },
        text: stored.text,
        cards: [],
        annotations: [],
        thread: {
          name: thread,
          ...(key !== undefined ? { threadKey: key } : {}),
          retentionSettings: { state: 'PERMANENT' },
        },
        space: {
          name: `spaces/${SPACE}`,
          type: 'ROOM',
          displayName: 'Home lab',
          spaceThreadingState: 'THREADED_MESSAGES',
          spaceType: 'SPACE',
        },
        fallbackText: '',
        argumentText: stored.text,
        attachment: [],
        createTime,
        threadReply,
        formattedText: stored.text,
      };
      if (requestId) this.byRequestId.set(requestId, answer);
      this.ok(res, answer);
    });
  }

  private ok(res: http.ServerResponse, answer: object): void {
    res.writeHead(200, { 'content-type': 'application/json; charset=UTF-8' }).end(JSON.stringify(answer, null, 2));
  }
}
