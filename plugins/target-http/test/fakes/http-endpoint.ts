/**
 * A loopback HTTP endpoint standing for whatever a user points the HTTP target at: it records
 * every request (method, path, query, headers, raw body) and answers 200 `{"ok":true}`, or the
 * answers queued in `answers` (status, headers such as Retry-After per RFC 9110, body) in order.
 */
import http from 'node:http';

export interface Received {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: http.IncomingHttpHeaders;
  body: string;
}
export interface Answer {
  status: number;
  headers?: Record<string, string>;
  body?: string;
}

export class HttpEndpoint {
  private server = http.createServer((req, res) => this.handle(req, res));
  private port = 0;
  readonly received: Received[] = [];
  /** Answers for the next requests, first in first out; 200 `{"ok":true}` when empty. */
  readonly answers: Answer[] = [];

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

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', this.base);
      this.received.push({
        method: req.method ?? 'GET',
        path: url.pathname,
        query: Object.fromEntries(url.searchParams),
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      });
      const a = this.answers.shift() ?? {
        status: 200,
        headers: { 'content-type': 'application/json' },
        body: '{"ok":true}',
      };
      res.writeHead(a.status, a.headers ?? {}).end(a.body ?? '');
    });
  }
}
