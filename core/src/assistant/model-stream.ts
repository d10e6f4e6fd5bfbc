import type { Readable } from 'node:stream';
import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import { SseDecoder } from './sse-decoder.ts';

/** Where a response body delivers: each chunk, then exactly one of end or error. */
export interface ChunkSink {
  data(chunk: Buffer): void;
  end(): void;
  error(err: unknown): void;
}

/** A response body delivered by callbacks, read once. */
export interface ChunkSource {
  /** Starts delivery (chunks that already arrived come at once). */
  start(sink: ChunkSink): void;
  /** Stops the transfer at once (the upstream request is aborted); nothing is delivered after. */
  destroy(): void;
  /** Nothing more is wanted, but the rest may arrive (and is dropped) so the connection can be reused. */
  discard(): void;
}

const noop = (): void => {};

/** A Node Readable as a ChunkSource (the transport does not need it; tests and other bodies do). */
export function readableSource(body: Readable): ChunkSource {
  return {
    start(sink) {
      body.on('data', (c: Buffer) => sink.data(c));
      body.once('end', () => sink.end());
      body.once('error', (err) => sink.error(err));
      body.once('close', () => {
        if (!body.readableEnded) sink.error(new Error('The response body closed before it ended.'));
      });
    },
    destroy() {
      body.removeAllListeners('data');
      body.on('error', noop);
      body.destroy();
    },
    discard() {
      body.removeAllListeners('data');
      body.on('error', noop);
      body.resume();
    },
  };
}

/**
 * An error the model sent inside its stream (an `error` event, or a chunk carrying `error`).
 * Its message is built as the openai SDK builds an APIError's, so users read the same text.
 */
export class ModelStreamError extends Error {
  /** The `error` object the model sent. */
  readonly error: unknown;
  constructor(error: unknown) {
    const m = (error as { message?: unknown } | null | undefined)?.message;
    super(
      m ? (typeof m === 'string' ? m : JSON.stringify(m)) : error ? JSON.stringify(error) : '(no status code or body)',
    );
    this.name = 'ModelStreamError';
    this.error = error;
  }
}

const aborted = (): DOMException => new DOMException('The client went away.', 'AbortError');

/**
 * One streamed chat completion, read straight from the response body's chunks: the SSE is decoded
 * on bytes and every completion chunk is handed to a callback, with no async iteration, web
 * streams or promises per chunk. An abort of `signal` stops the upstream request at once.
 */
export class ModelStream {
  private body: ChunkSource;
  private signal: AbortSignal;
  private used = false;

  constructor(body: ChunkSource, signal: AbortSignal) {
    this.body = body;
    this.signal = signal;
  }

  /**
   * Calls `onChunk` for every chunk until `[DONE]` or the end of the body, then resolves. Rejects
   * with an AbortError when `signal` aborts, a SyntaxError for a malformed payload, a
   * ModelStreamError for an error the model sent, and the transport's error when the connection
   * fails; in each case the upstream request is stopped. A throwing `onChunk` fails it the same way.
   */
  each(onChunk: (chunk: ChatCompletionChunk) => void): Promise<void> {
    if (this.used) return Promise.reject(new Error('A model stream can be read once.'));
    this.used = true;
    const { body, signal } = this;
    return new Promise<void>((resolve, reject) => {
      let settled = false;
      const finish = (err?: unknown, ended = false): void => {
        if (settled) return;
        settled = true;
        signal.removeEventListener('abort', onAbort);
        if (err !== undefined) {
          body.destroy();
          reject(err);
          return;
        }
        // After [DONE] the end of the response is still let in, so the connection can be reused.
        if (!ended) body.discard();
        resolve();
      };
      const decoder = new SseDecoder((data, event) => {
        if (settled) return;
        if (data === '[DONE]') {
          finish();
          return;
        }
        let chunk: any;
        try {
          chunk = JSON.parse(data);
        } catch {
          throw new SyntaxError('Error reading response: malformed server-sent event JSON.');
        }
        if (event === 'error') throw new ModelStreamError(chunk?.error ?? chunk);
        if (chunk && chunk.error) throw new ModelStreamError(chunk.error);
        onChunk(chunk as ChatCompletionChunk);
      });
      const onAbort = (): void => finish(aborted());
      if (signal.aborted) {
        finish(aborted());
        return;
      }
      signal.addEventListener('abort', onAbort, { once: true });
      body.start({
        data(chunk) {
          if (settled) return;
          try {
            decoder.push(chunk);
          } catch (err) {
            finish(err);
          }
        },
        end() {
          if (settled) return;
          try {
            decoder.end();
          } catch (err) {
            finish(err);
            return;
          }
          finish(undefined, true);
        },
        error(err) {
          finish(signal.aborted ? aborted() : err);
        },
      });
    });
  }
}
