import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyReply } from 'fastify';

/**
 * Comment interval that keeps proxies from closing an idle stream (15 s). Tests shorten it with
 * HERALD_SSE_KEEPALIVE_MS.
 */
export const keepAliveMs = (): number => Number(process.env.HERALD_SSE_KEEPALIVE_MS ?? 15_000);

const KEEP_ALIVE = ': keep-alive\n\n';
const frame = (event: string, data: unknown): string => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
/** The bytes of a delta frame around its JSON text. */
const DELTA_BYTES = Buffer.byteLength('event: delta\ndata: {"content":}\n\n');

/**
 * One timer for all open streams instead of one per stream: every period each open stream gets a
 * comment, so no stream is ever silent for longer than the period. It runs only while streams are open.
 */
const open = new Set<SseStream>();
let ticker: NodeJS.Timeout | undefined;
function tick(): void {
  for (const s of open) s.comment(KEEP_ALIVE);
}
function track(s: SseStream): void {
  open.add(s);
  if (!ticker) {
    ticker = setInterval(tick, keepAliveMs());
    ticker.unref();
  }
}
function untrack(s: SseStream): void {
  if (!open.delete(s) || open.size > 0 || !ticker) return;
  clearInterval(ticker);
  ticker = undefined;
}

/**
 * A server-sent event stream written straight to the socket after `reply.hijack()`, so the route
 * controls every frame and notices at once when the client goes away. Headers Fastify hooks had
 * already set (CORS, security headers) are carried over.
 */
export class SseStream {
  private reply: FastifyReply;
  private raw: ServerResponse;
  private ended = false;
  /**
   * The socket frames go to directly, each in one write with its chunked-encoding framing: a
   * frame per model chunk through `res.write` costs a cork, a tick and a writev of four pieces.
   * Unset (frames go through `res.write`) when the response does not own the socket yet.
   */
  private socket?: Socket;
  private chunked = true;
  /** The first frame goes through `res.write`, which sends the headers with it. */
  private first = true;

  constructor(reply: FastifyReply) {
    this.reply = reply;
    this.raw = reply.raw;
  }

  /** True once the client disconnected or the stream was ended. */
  get closed(): boolean {
    return this.ended || this.raw.destroyed || this.raw.writableEnded;
  }

  open(): void {
    this.reply.hijack();
    const raw = this.raw;
    const inherited = this.reply.getHeaders() as Record<string, string | string[] | number>;
    delete inherited['content-length'];
    raw.writeHead(200, {
      ...inherited,
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    // The headers go out with the first frame (one write less per stream); the route sends one at once.
    const socket = raw.socket;
    // A pipelined request still answering ahead of this one owns the socket: then Node buffers for us.
    if (socket && (socket as Socket & { _httpMessage?: unknown })._httpMessage === raw) {
      this.socket = socket;
      this.chunked = (raw as ServerResponse & { chunkedEncoding?: boolean }).chunkedEncoding !== false;
    }
    track(this);
    raw.once('close', () => untrack(this));
  }

  send(event: string, data: unknown): void {
    this.write(frame(event, data));
  }

  /**
   * A `delta` event carrying `{ content: text }`, framed without building the object. Its length in bytes is counted
   * on the JSON text alone: measuring the whole frame would first copy it into a flat string, and the write copies it
   * again inside the chunked framing.
   */
  delta(text: string): void {
    const json = JSON.stringify(text);
    this.write(`event: delta\ndata: {"content":${json}}\n\n`, DELTA_BYTES + Buffer.byteLength(json));
  }

  /** Writes a comment frame (keep-alive). */
  comment(frame: string): void {
    this.write(frame);
  }

  /** Sends a last event and ends the stream, in one write. */
  finish(event: string, data: unknown): void {
    untrack(this);
    if (this.closed) return;
    this.ended = true;
    this.raw.end(frame(event, data));
  }

  /** `bytes`: the frame's length in UTF-8, when the caller knows it. */
  private write(frame: string, bytes?: number): void {
    if (this.closed) return;
    const socket = this.socket;
    if (!socket || this.first) {
      this.first = false;
      this.raw.write(frame);
      return;
    }
    if (!this.chunked) {
      socket.write(frame);
      return;
    }
    socket.write(`${(bytes ?? Buffer.byteLength(frame)).toString(16)}\r\n${frame}\r\n`);
  }

  end(): void {
    untrack(this);
    if (this.ended) return;
    this.ended = true;
    if (!this.raw.destroyed && !this.raw.writableEnded) this.raw.end();
  }
}
