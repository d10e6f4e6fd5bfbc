/**
 * A fake Telegram Bot API server on 127.0.0.1 speaking the real HTTP protocol:
 * `POST|GET /bot<token>/<method>` with JSON, urlencoded or multipart bodies (or a query string),
 * answered with the real envelopes `{ok:true,result}` / `{ok:false,error_code,description,parameters?}`
 * and the HTTP status equal to `error_code`. It enforces the limits the plugin must respect and
 * records what was sent.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { HtmlParseError, parseTelegramHtml } from './telegram-html.ts';

export interface FakeBot {
  id: number;
  username: string;
  firstName?: string;
}
export interface FakeChat {
  id: number;
  type: 'private' | 'group' | 'supergroup' | 'channel';
  title?: string;
  username?: string;
  /** Forum supergroup: `topics` lists the valid `message_thread_id`s. */
  isForum?: boolean;
  topics?: number[];
  /** The user blocked the bot / the bot was kicked: 403. */
  blocked?: boolean;
}
export interface SentMessage {
  token: string;
  chatId: number;
  messageId: number;
  /** The `text` parameter as received. */
  raw: string;
  /** The text after entity parsing. */
  text: string;
  params: Record<string, unknown>;
}
/** An `editMessageText` the fake applied. */
export interface EditedMessage {
  token: string;
  chatId: number;
  messageId: number;
  raw: string;
  text: string;
  params: Record<string, unknown>;
}
export interface Call {
  method: string;
  token: string;
  params: Record<string, unknown>;
  contentType: string;
}
type Envelope =
  | { ok: true; result: unknown }
  | { ok: false; error_code: number; description: string; parameters?: Record<string, unknown> };

/** A Bot API error answer. */
class ApiError extends Error {
  readonly code: number;
  readonly parameters?: Record<string, unknown>;
  constructor(code: number, description: string, parameters?: Record<string, unknown>) {
    super(description);
    this.code = code;
    this.parameters = parameters;
  }
}

const MAX_TEXT = 4096;
const TOKEN = /^[0-9]+:[A-Za-z0-9_-]+$/;

export class FakeTelegram {
  readonly bots = new Map<string, FakeBot>();
  readonly chats: FakeChat[] = [];
  readonly sent: SentMessage[] = [];
  /** Edits applied by `editMessageText`, in order (the message in `sent` shows the latest text). */
  readonly edits: EditedMessage[] = [];
  readonly calls: Call[] = [];
  readonly webhooks = new Map<string, { url: string; secret_token?: string; allowed_updates?: string[] }>();
  private readonly queues = new Map<string, Record<string, unknown>[]>();
  private readonly waiters = new Set<() => void>();
  /** getUpdates calls waiting for an update (long polls in progress). */
  get longPolls(): number {
    return this.waiters.size;
  }
  private readonly failures: {
    status: number;
    description?: string;
    retryAfter?: number;
    html?: boolean;
    after: number;
    token?: string;
  }[] = [];
  private nextUpdateId = 1000;
  private nextMessageId = 1;
  private server?: http.Server;
  /** API root to pass as `apiRoot` / `api_root`, e.g. `http://127.0.0.1:43123`. */
  url = '';

  addBot(token: string, bot: FakeBot): this {
    this.bots.set(token, bot);
    return this;
  }
  addChat(chat: FakeChat): this {
    this.chats.push(chat);
    return this;
  }

  /** A coming method call answers 429 "Too Many Requests: retry after N"; `after` calls succeed first. */
  rateLimitNext(retryAfterSeconds: number, opts: { after?: number } = {}): void {
    this.failures.push({ status: 429, retryAfter: retryAfterSeconds, after: opts.after ?? 0 });
  }
  /** A coming call fails with `status`; `html` answers a proxy-style HTML page instead of JSON. */
  /**
   * Fails the next call (after `after` others); with `token`, only a call made with that bot token, so a polling loop
   * of another bot cannot take it.
   */
  failNext(
    status: number,
    description = 'Internal Server Error',
    opts: { html?: boolean; after?: number; token?: string } = {},
  ): void {
    this.failures.push({ status, description, html: opts.html, after: opts.after ?? 0, token: opts.token });
  }

  /** Deletes a sent message, as a chat member could: editing it or replying to it then fails. */
  deleteMessage(chatId: number, messageId: number): void {
    const at = this.sent.findIndex((m) => m.chatId === chatId && m.messageId === messageId);
    if (at >= 0) this.sent.splice(at, 1);
  }

  /** Queues an update for getUpdates; returns its update_id. */
  pushUpdate(token: string, update: Record<string, unknown>): number {
    const update_id = this.nextUpdateId++;
    const q = this.queues.get(token) ?? [];
    q.push({ update_id, ...update });
    this.queues.set(token, q);
    for (const w of this.waiters) w();
    return update_id;
  }

  async start(): Promise<this> {
    this.server = http.createServer((req, res) => {
      void this.handle(req, res);
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async close(): Promise<void> {
    for (const w of this.waiters) w();
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const reply = (status: number, body: Envelope | string) => {
      const text = typeof body === 'string' ? body : JSON.stringify(body);
      res.writeHead(status, { 'content-type': typeof body === 'string' ? 'text/html' : 'application/json' });
      res.end(text);
    };
    try {
      const url = new URL(req.url ?? '/', 'http://fake');
      const m = /^\/bot([^/]+)\/([A-Za-z]+)$/.exec(url.pathname);
      if (!m || !TOKEN.test(m[1])) throw new ApiError(404, 'Not Found');
      const [, token, method] = m;
      const contentType = req.headers['content-type'] ?? '';
      const params = { ...Object.fromEntries(url.searchParams), ...(await readParams(req, contentType)) };
      this.calls.push({ method, token, params, contentType });
      const at = this.failures.findIndex((f) => f.token === undefined || f.token === token);
      const head = at >= 0 ? this.failures[at] : undefined;
      const failure = head && head.after-- <= 0 ? this.failures.splice(at, 1)[0] : undefined;
      if (failure?.html)
        return reply(failure.status, `<html><body><h1>${failure.status} ${failure.description}</h1></body></html>`);
      if (failure?.retryAfter !== undefined) {
        throw new ApiError(429, `Too Many Requests: retry after ${failure.retryAfter}`, {
          retry_after: failure.retryAfter,
        });
      }
      if (failure) throw new ApiError(failure.status, failure.description!);
      const bot = this.bots.get(token);
      if (!bot) throw new ApiError(401, 'Unauthorized');
      const result = await this.dispatch(token, bot, method, params);
      reply(200, { ok: true, result });
    } catch (err) {
      if (err instanceof ApiError) {
        reply(err.code, {
          ok: false,
          error_code: err.code,
          description: err.message,
          ...(err.parameters ? { parameters: err.parameters } : {}),
        });
      } else
        reply(500, { ok: false, error_code: 500, description: `Internal Server Error: ${(err as Error).message}` });
    }
  }

  private async dispatch(token: string, bot: FakeBot, method: string, p: Record<string, unknown>): Promise<unknown> {
    switch (method) {
      case 'getMe':
        return {
          id: bot.id,
          is_bot: true,
          first_name: bot.firstName ?? bot.username,
          username: bot.username,
          can_join_groups: true,
          can_read_all_group_messages: false,
          supports_inline_queries: false,
        };
      case 'sendMessage':
        return this.sendMessage(token, bot, p);
      case 'editMessageText':
        return this.editMessageText(token, bot, p);
      case 'setWebhook': {
        const url = String(p.url ?? '');
        if (url === '') {
          this.webhooks.delete(token);
          return true;
        }
        if (!url.startsWith('https://'))
          throw new ApiError(400, 'Bad Request: bad webhook: An HTTPS URL must be provided for webhook');
        const secret = p.secret_token === undefined ? undefined : String(p.secret_token);
        if (secret !== undefined && !/^[A-Za-z0-9_-]{1,256}$/.test(secret)) {
          throw new ApiError(400, 'Bad Request: secret token contains unallowed characters');
        }
        this.webhooks.set(token, {
          url,
          secret_token: secret,
          allowed_updates: p.allowed_updates as string[] | undefined,
        });
        return true;
      }
      case 'deleteWebhook':
        this.webhooks.delete(token);
        if (p.drop_pending_updates === true || p.drop_pending_updates === 'true') this.queues.delete(token);
        return true;
      case 'getWebhookInfo': {
        const w = this.webhooks.get(token);
        return {
          url: w?.url ?? '',
          has_custom_certificate: false,
          pending_update_count: this.queues.get(token)?.length ?? 0,
          allowed_updates: w?.allowed_updates,
        };
      }
      case 'getUpdates':
        return this.getUpdates(token, p);
      default:
        throw new ApiError(404, 'Not Found');
    }
  }

  private findChat(chatId: unknown): FakeChat | undefined {
    const s = String(chatId ?? '');
    if (s.startsWith('@'))
      return this.chats.find((c) => c.username && `@${c.username}`.toLowerCase() === s.toLowerCase());
    return /^-?[0-9]+$/.test(s) ? this.chats.find((c) => c.id === Number(s)) : undefined;
  }

  /** Parses `text` with `parse_mode` as the Bot API does, enforcing its limits. */
  private parseText(p: Record<string, unknown>): { raw: string; text: string; entities?: unknown[] } {
    const raw = typeof p.text === 'string' ? p.text : p.text === undefined ? '' : String(p.text);
    let text = raw;
    let entities: unknown[] | undefined;
    const mode = p.parse_mode === undefined ? '' : String(p.parse_mode).toLowerCase();
    if (mode === 'html') {
      try {
        ({ text, entities } = parseTelegramHtml(raw));
      } catch (err) {
        if (err instanceof HtmlParseError) throw new ApiError(400, `Bad Request: can't parse entities: ${err.message}`);
        throw err;
      }
    } else if (mode !== '') throw new ApiError(400, 'Bad Request: unsupported parse_mode');
    text = text.trim();
    if (text.length === 0) throw new ApiError(400, 'Bad Request: message text is empty');
    if (text.length > MAX_TEXT) throw new ApiError(400, 'Bad Request: message is too long');
    return { raw, text, entities };
  }

  /**
   * `editMessageText` with `chat_id` and `message_id`: only a message this bot sent to that chat
   * (400 "message to edit not found" otherwise, e.g. after it was deleted); the same text again is
   * 400 "message is not modified", as on the real server.
   */
  private editMessageText(token: string, bot: FakeBot, p: Record<string, unknown>): unknown {
    if (p.inline_message_id !== undefined)
      throw new ApiError(400, 'Bad Request: inline messages are not supported by this fake');
    const chat = this.findChat(p.chat_id);
    if (!chat) throw new ApiError(400, 'Bad Request: chat not found');
    const messageId = Number(p.message_id);
    const msg = this.sent.find((m) => m.chatId === chat.id && m.messageId === messageId);
    if (!msg) throw new ApiError(400, 'Bad Request: message to edit not found');
    if (msg.token !== token) throw new ApiError(400, "Bad Request: message can't be edited");
    const { raw, text, entities } = this.parseText(p);
    if (raw === msg.raw) {
      throw new ApiError(
        400,
        'Bad Request: message is not modified: specified new message content and reply markup are exactly the ' +
          'same as a current content and reply markup of the message',
      );
    }
    msg.raw = raw;
    msg.text = text;
    this.edits.push({ token, chatId: chat.id, messageId, raw, text, params: p });
    return {
      message_id: messageId,
      from: { id: bot.id, is_bot: true, first_name: bot.firstName ?? bot.username, username: bot.username },
      chat: { id: chat.id, type: chat.type, title: chat.title, username: chat.username },
      date: Math.floor(Date.now() / 1000),
      edit_date: Math.floor(Date.now() / 1000),
      text,
      ...(entities?.length ? { entities } : {}),
    };
  }

  private sendMessage(token: string, bot: FakeBot, p: Record<string, unknown>): unknown {
    if (p.chat_id === undefined || p.chat_id === '') throw new ApiError(400, 'Bad Request: chat_id is empty');
    const chat = this.findChat(p.chat_id);
    if (!chat) throw new ApiError(400, 'Bad Request: chat not found');
    if (chat.blocked) {
      throw new ApiError(
        403,
        chat.type === 'private'
          ? 'Forbidden: bot was blocked by the user'
          : 'Forbidden: bot was kicked from the group chat',
      );
    }
    const replyTo = p.reply_parameters as { message_id?: unknown; allow_sending_without_reply?: unknown } | undefined;
    if (
      replyTo &&
      !this.sent.some((m) => m.chatId === chat.id && m.messageId === Number(replyTo.message_id)) &&
      replyTo.allow_sending_without_reply !== true
    ) {
      throw new ApiError(400, 'Bad Request: message to be replied not found');
    }
    const raw = typeof p.text === 'string' ? p.text : p.text === undefined ? '' : String(p.text);
    let text = raw;
    let entities: unknown[] | undefined;
    const mode = p.parse_mode === undefined ? '' : String(p.parse_mode).toLowerCase();
    if (mode === 'html') {
      try {
        ({ text, entities } = parseTelegramHtml(raw));
      } catch (err) {
        if (err instanceof HtmlParseError) throw new ApiError(400, `Bad Request: can't parse entities: ${err.message}`);
        throw err;
      }
    } else if (mode !== '') throw new ApiError(400, 'Bad Request: unsupported parse_mode');
    text = text.trim();
    if (text.length === 0) throw new ApiError(400, 'Bad Request: message text is empty');
    if (text.length > MAX_TEXT) throw new ApiError(400, 'Bad Request: message is too long');
    const thread = p.message_thread_id === undefined ? undefined : Number(p.message_thread_id);
    if (thread !== undefined && !(chat.isForum && chat.topics?.includes(thread))) {
      throw new ApiError(400, 'Bad Request: message thread not found');
    }
    const messageId = this.nextMessageId++;
    this.sent.push({ token, chatId: chat.id, messageId, raw, text, params: p });
    return {
      message_id: messageId,
      from: { id: bot.id, is_bot: true, first_name: bot.firstName ?? bot.username, username: bot.username },
      chat: {
        id: chat.id,
        type: chat.type,
        title: chat.title,
        username: chat.username,
        is_forum: chat.isForum || undefined,
      },
      date: Math.floor(Date.now() / 1000),
      text,
      ...(entities?.length ? { entities } : {}),
      ...(thread !== undefined ? { message_thread_id: thread, is_topic_message: true } : {}),
    };
  }

  private async getUpdates(token: string, p: Record<string, unknown>): Promise<unknown[]> {
    if (this.webhooks.has(token)) {
      throw new ApiError(
        409,
        "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first",
      );
    }
    const offset = p.offset === undefined ? 0 : Number(p.offset);
    const limit = Math.min(Math.max(p.limit === undefined ? 100 : Number(p.limit), 1), 100);
    const timeout = p.timeout === undefined ? 0 : Number(p.timeout);
    const take = (): Record<string, unknown>[] => {
      let q = this.queues.get(token) ?? [];
      // A positive offset confirms everything below it; a negative one keeps only the last -offset updates.
      if (offset > 0) q = q.filter((u) => (u.update_id as number) >= offset);
      else if (offset < 0) q = q.slice(offset);
      this.queues.set(token, q);
      return q.slice(0, limit);
    };
    let updates = take();
    if (updates.length === 0 && timeout > 0) {
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          this.waiters.delete(done);
          resolve();
        };
        const timer = setTimeout(done, timeout * 1000);
        this.waiters.add(done);
      });
      updates = take();
    }
    return updates;
  }
}

/** Reads the method parameters from a JSON, urlencoded or multipart body. */
async function readParams(req: http.IncomingMessage, contentType: string): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const body = Buffer.concat(chunks);
  if (body.length === 0) return {};
  if (contentType.startsWith('application/json')) {
    try {
      return JSON.parse(body.toString('utf8')) as Record<string, unknown>;
    } catch {
      throw new ApiError(400, "Bad Request: can't parse JSON object");
    }
  }
  if (contentType.startsWith('application/x-www-form-urlencoded') || contentType.startsWith('multipart/form-data')) {
    const form = await new Response(body, { headers: { 'content-type': contentType } }).formData();
    const out: Record<string, unknown> = {};
    for (const [k, v] of form) {
      const s = typeof v === 'string' ? v : await v.text();
      // Array and object parameters travel JSON-serialised in forms.
      out[k] = /^[[{]/.test(s) ? JSON.parse(s) : s;
    }
    return out;
  }
  return {};
}
