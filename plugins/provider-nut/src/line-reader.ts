/** Reads `\n`-terminated lines from a socket, one awaited line at a time, with a per-line time limit. */
import type { Duplex } from 'node:stream';
import { NutConnectionError } from './protocol.ts';

/** A line longer than this is not NUT; the peer is garbling or flooding. */
const MAX_LINE = 16 * 1024;

export class LineReader {
  private buffer = '';
  private readonly lines: string[] = [];
  private waiter: { resolve(line: string): void; reject(err: Error): void } | undefined;
  private failure: Error | undefined;
  private readonly stream: Duplex;
  private readonly onData = (chunk: Buffer) => this.push(chunk.toString('utf8'));
  private readonly onEnd = () => this.fail(new NutConnectionError('upsd closed the connection'));
  private readonly onError = (err: Error) =>
    this.fail(new NutConnectionError(`connection error: ${err.message}`, { cause: err }));

  constructor(stream: Duplex) {
    this.stream = stream;
    stream.on('data', this.onData);
    stream.on('end', this.onEnd);
    stream.on('close', this.onEnd);
    stream.on('error', this.onError);
  }

  /** Stops reading (before handing the socket to TLS); buffered bytes would be a protocol error. */
  detach(): void {
    this.stream.off('data', this.onData);
    this.stream.off('end', this.onEnd);
    this.stream.off('close', this.onEnd);
    this.stream.off('error', this.onError);
    if (this.buffer || this.lines.length) throw new NutConnectionError('upsd sent data before the TLS handshake');
  }

  /** The next line (without its line ending); rejects after `timeoutMs` or when the connection ends. */
  next(timeoutMs: number): Promise<string> {
    const ready = this.lines.shift();
    if (ready !== undefined) return Promise.resolve(ready);
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiter = undefined;
        reject(new NutConnectionError(`no reply from upsd within ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiter = {
        resolve: (line) => {
          clearTimeout(timer);
          resolve(line);
        },
        reject: (err) => {
          clearTimeout(timer);
          reject(err);
        },
      };
    });
  }

  private push(text: string): void {
    this.buffer += text;
    let nl: number;
    while ((nl = this.buffer.indexOf('\n')) >= 0) {
      const line = this.buffer.slice(0, nl).replace(/\r$/, '');
      this.buffer = this.buffer.slice(nl + 1);
      this.deliver(line);
    }
    if (this.buffer.length > MAX_LINE) {
      this.fail(new NutConnectionError('upsd sent an over-long line'));
      this.stream.destroy();
    }
  }

  private deliver(line: string): void {
    const w = this.waiter;
    if (w) {
      this.waiter = undefined;
      w.resolve(line);
    } else this.lines.push(line);
  }

  private fail(err: Error): void {
    this.failure ??= err;
    const w = this.waiter;
    if (w) {
      this.waiter = undefined;
      w.reject(this.failure);
    }
  }
}
