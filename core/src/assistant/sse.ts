import type { FastifyReply } from 'fastify';

/** Comment interval that keeps proxies from closing an idle stream (15 s). Tests shorten it with HERALD_SSE_KEEPALIVE_MS. */
export const keepAliveMs = (): number => Number(process.env.HERALD_SSE_KEEPALIVE_MS ?? 15_000);

/**
 * A server-sent event stream written straight to the socket after `reply.hijack()`, so the route
 * controls every frame and notices at once when the client goes away. Headers Fastify hooks had
 * already set (CORS, security headers) are carried over.
 */
export class SseStream {
  private reply: FastifyReply;
  private timer?: NodeJS.Timeout;
  private ended = false;

  constructor(reply: FastifyReply) { this.reply = reply; }

  /** True once the client disconnected or the stream was ended. */
  get closed(): boolean { return this.ended || this.reply.raw.destroyed || this.reply.raw.writableEnded; }

  open(): void {
    this.reply.hijack();
    const raw = this.reply.raw;
    const inherited = this.reply.getHeaders() as Record<string, string | string[] | number>;
    delete inherited['content-length'];
    raw.writeHead(200, {
      ...inherited,
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    raw.flushHeaders();
    this.timer = setInterval(() => { if (!this.closed) raw.write(': keep-alive\n\n'); }, keepAliveMs());
    this.timer.unref();
    raw.on('close', () => this.stopTimer());
  }

  send(event: string, data: unknown): void {
    if (this.closed) return;
    this.reply.raw.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  }

  end(): void {
    this.stopTimer();
    if (this.ended) return;
    this.ended = true;
    if (!this.reply.raw.destroyed && !this.reply.raw.writableEnded) this.reply.raw.end();
  }

  private stopTimer(): void { if (this.timer) { clearInterval(this.timer); this.timer = undefined; } }
}
