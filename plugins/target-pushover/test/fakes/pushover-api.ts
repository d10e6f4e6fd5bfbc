/**
 * A loopback fake of Pushover's Message API as its documentation (pushover.net/api) gives it:
 * - `POST /1/messages.json` with the parameters form-encoded (or as JSON): `token` and `user`
 *   (30 characters of [A-Za-z0-9]), `message` (required, at most 1,024 characters), `title` (250),
 *   `url` (512), `url_title` (100), `priority` (-2 … 2; 2 needs `retry` and `expire`), `html`,
 *   `monospace`, `device`, `sound`.
 * - Accepted: 200 `{"status":1,"request":"<uuid>"}`. Invalid input: 400 with `status: 0`, an
 *   `errors` array and the invalid parameter named as a key, e.g.
 *   `{"user":"invalid","errors":["user identifier is invalid"],"status":0,"request":"…"}`.
 * - Every answer to an application carries `X-Limit-App-Limit`, `X-Limit-App-Remaining` and
 *   `X-Limit-App-Reset` (Unix time of the monthly reset); past the limit: 429.
 * The `errors` wording is this fake's own (the documentation shows the shape, not every sentence).
 */

import { randomUUID } from 'node:crypto';
import http from 'node:http';

export const APP_TOKEN = 'azGDORePK8gMaC0QOYAMyEEuzJnyUi';
export const USER_KEY = 'uQiRzpo4DXghDmr9QzzfQu27cmVRsG';

export interface Received {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  form: Record<string, string>;
}
export interface Delivered {
  request: string;
  form: Record<string, string>;
}

const KEY = /^[A-Za-z0-9]{30}$/;
const length = (s: string) => [...s].length;

export class PushoverApi {
  private server = http.createServer((req, res) => this.handle(req, res));
  private port = 0;
  readonly received: Received[] = [];
  readonly delivered: Delivered[] = [];
  apps = new Set([APP_TOKEN]);
  users = new Map([[USER_KEY, ['phone', 'tablet']]]);
  sounds = new Set(['pushover', 'bike', 'siren', 'none']);
  limit = 10_000;
  remaining = 10_000;
  /** Unix time of the monthly reset. */
  reset = Math.floor(Date.UTC(2026, 3, 1) / 1000);
  /** Answer the next request with this 5xx status. */
  failNext: number | null = null;

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

  private invalid(
    res: http.ServerResponse,
    field: string,
    value: string,
    error: string,
    headers: Record<string, string>,
  ): void {
    this.json(res, 400, { [field]: value, errors: [error], status: 0, request: randomUUID() }, headers);
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const path = new URL(req.url ?? '/', this.url).pathname;
      let form: Record<string, string> = {};
      if (/^application\/json/.test(req.headers['content-type'] ?? '')) {
        try {
          form = Object.fromEntries(Object.entries(JSON.parse(raw)).map(([k, v]) => [k, String(v)]));
        } catch {
          form = {};
        }
      } else form = Object.fromEntries(new URLSearchParams(raw));
      this.received.push({ method: req.method ?? 'GET', path, headers: req.headers, form });
      if (req.method !== 'POST' || path !== '/1/messages.json')
        return this.json(res, 404, { errors: ['not found'], status: 0, request: randomUUID() });
      if (this.failNext) {
        const s = this.failNext;
        this.failNext = null;
        return void res
          .writeHead(s, { 'content-type': 'text/html' })
          .end('<html><body><h1>Service Unavailable</h1></body></html>');
      }
      if (!KEY.test(form.token ?? '') || !this.apps.has(form.token!))
        return this.invalid(res, 'token', 'invalid', 'application token is invalid, see https://pushover.net/api', {});
      const limits = () => ({
        'x-limit-app-limit': String(this.limit),
        'x-limit-app-remaining': String(this.remaining),
        'x-limit-app-reset': String(this.reset),
      });
      if (this.remaining <= 0)
        return this.json(
          res,
          429,
          { errors: ['application has exceeded its monthly message limit'], status: 0, request: randomUUID() },
          limits(),
        );
      const devices = this.users.get(form.user ?? '');
      if (!KEY.test(form.user ?? '') || !devices)
        return this.invalid(
          res,
          'user',
          'invalid',
          'user identifier is not a valid user, group, or subscribed user key, see ' +
            'https://pushover.net/api#identifiers',
          limits(),
        );
      if (!form.message) return this.invalid(res, 'message', 'cannot be blank', 'message cannot be blank', limits());
      if (length(form.message) > 1024)
        return this.invalid(
          res,
          'message',
          'too long',
          'message is too long, see https://pushover.net/api#limits',
          limits(),
        );
      if (form.title !== undefined && length(form.title) > 250)
        return this.invalid(
          res,
          'title',
          'too long',
          'title is too long, see https://pushover.net/api#limits',
          limits(),
        );
      if (form.url !== undefined && length(form.url) > 512)
        return this.invalid(res, 'url', 'too long', 'url is too long, see https://pushover.net/api#limits', limits());
      if (form.priority !== undefined && !['-2', '-1', '0', '1', '2'].includes(form.priority))
        return this.invalid(res, 'priority', 'invalid', 'priority is invalid', limits());
      if (form.priority === '2' && (!form.retry || !form.expire))
        return this.invalid(res, 'retry', 'invalid', 'retry is required for emergency-priority messages', limits());
      if (form.html === '1' && form.monospace === '1')
        return this.invalid(res, 'html', 'invalid', 'html and monospace cannot both be set', limits());
      if (form.device && form.device.split(',').some((d) => !devices.includes(d)))
        return this.invalid(res, 'device', 'invalid for this user', 'device name is not valid for user', limits());
      if (form.sound && !this.sounds.has(form.sound))
        return this.invalid(res, 'sound', 'invalid', 'sound is invalid', limits());
      this.remaining--;
      const request = randomUUID();
      this.delivered.push({ request, form });
      this.json(res, 200, { status: 1, request }, limits());
    });
  }
}
