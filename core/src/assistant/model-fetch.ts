import type { Agent, Dispatcher } from 'undici';
import type { ChunkSink, ChunkSource } from './model-stream.ts';

/**
 * The `fetch` the openai client sends its requests with: undici's dispatcher on a dedicated
 * keep-alive Agent. The SDK still builds, authenticates and sends each request and turns error
 * statuses into its errors; a successful response's body, however, is not a web stream: its
 * chunks are handed on as they arrive (`bodyOf`), with no stream machinery in between, so a
 * streamed reply costs no web streams, no Readable and no SDK decoding layers per chunk.
 *
 * Only the SDK's streamed calls may use it: a successful Response it returns has an empty body.
 */
export interface ModelTransport {
  fetch: (input: string | URL | Request, init?: RequestInit) => Promise<Response>;
  /** The body of a successful response returned by `fetch`, once. */
  bodyOf(res: Response): ChunkSource | undefined;
  /**
   * A POST of a JSON string with headers given as they go out (no conversion), sent as `fetch` sends the SDK's, and
   * answered without a web Response: the status, the headers on demand, and the streamed body of a success or the
   * whole text of an error.
   */
  post(url: URL, headers: Record<string, string>, body: string, signal: AbortSignal): Promise<PostAnswer>;
  /**
   * Closes every connection, aborting requests still running (shutdown has already stopped the streams it waits for).
   */
  close(): Promise<void>;
}

/** Chunks that arrive before the reader starts are queued; past this many bytes the connection is paused. */
const QUEUE_BYTES = 64 * 1024;

/** A response body fed by the dispatcher's callbacks; paused while nobody reads and its queue is full. */
class UpstreamBody implements ChunkSource {
  private controller: Dispatcher.DispatchController;
  private sink?: ChunkSink;
  private queue: Buffer[] = [];
  private queued = 0;
  /** How the response ended before the reader started: true for a complete body, or the error. */
  private outcome?: true | Error;
  private closed = false;
  private discarding = false;

  constructor(controller: Dispatcher.DispatchController) {
    this.controller = controller;
  }

  data(chunk: Buffer): void {
    if (this.closed || this.discarding) return;
    if (this.sink) {
      this.sink.data(chunk);
      return;
    }
    this.queue.push(chunk);
    this.queued += chunk.length;
    if (this.queued > QUEUE_BYTES) this.controller.pause();
  }

  end(): void {
    if (this.closed) return;
    if (!this.sink) {
      this.outcome = true;
      return;
    }
    this.closed = true;
    this.sink.end();
  }

  fail(err: Error): void {
    if (this.closed) return;
    if (!this.sink) {
      this.outcome = err;
      return;
    }
    this.closed = true;
    this.sink.error(err);
  }

  start(sink: ChunkSink): void {
    if (this.sink || this.closed) throw new Error('A response body can be read once.');
    this.sink = sink;
    const queue = this.queue;
    this.queue = [];
    for (const chunk of queue) {
      if (this.closed) return;
      sink.data(chunk);
    }
    if (this.closed) return;
    if (this.outcome === true) {
      this.end();
      return;
    }
    if (this.outcome) {
      this.fail(this.outcome);
      return;
    }
    if (this.queued > QUEUE_BYTES) this.controller.resume();
    this.queued = 0;
  }

  destroy(): void {
    if (this.closed) return;
    this.closed = true;
    this.queue = [];
    if (this.outcome === undefined)
      this.controller.abort(new DOMException('The model stream was stopped.', 'AbortError'));
  }

  discard(): void {
    this.closed = true;
    this.discarding = true;
    this.queue = [];
    if (this.controller.paused) this.controller.resume();
  }
}

function plainHeaders(h: HeadersInit | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (!h) return out;
  (h instanceof Headers ? h : new Headers(h)).forEach((value, name) => {
    out[name] = value;
  });
  return out;
}

function webHeaders(h: Record<string, string | string[] | undefined>): Headers {
  const out = new Headers();
  for (const name in h) {
    const v = h[name];
    if (v === undefined) continue;
    if (Array.isArray(v)) for (const x of v) out.append(name, x);
    else out.append(name, v);
  }
  return out;
}

const aborted = (signal: AbortSignal | undefined): unknown =>
  signal?.reason ?? new DOMException('This operation was aborted', 'AbortError');

/** Raw response headers, as the dispatcher gives them. */
type RawHeaders = Record<string, string | string[] | undefined>;

/** What a request answered, built when it is known: at the headers for a success, at the body's end otherwise. */
type Answer<T> = (status: number, headers: RawHeaders, body: UpstreamBody | undefined, text: string) => T;

/** A POST's answer (`ModelTransport.post`): no web Response is built for it. */
export interface PostAnswer {
  status: number;
  /** The response headers as web Headers (built when asked: an error needs them, a stream does not). */
  headers(): Headers;
  /** A success's body, read once. */
  body?: ChunkSource;
  /** An error's whole body; empty for a success. */
  text: string;
}

/**
 * One request's dispatch handler. It settles the request's promise at the response headers (or, for
 * an error status, at the end of its small body) and then lets go of everything but the body:
 * a streamed reply keeps its request for minutes, and what the handler holds is held as long.
 */
class FetchHandler<T> implements Dispatcher.DispatchHandler {
  private answer: Answer<T>;
  private resolve?: (res: T) => void;
  private reject?: (err: unknown) => void;
  /** The request's signal, until the answer starts; the reader of the body stops it with its own. */
  private signal?: AbortSignal;
  private controller?: Dispatcher.DispatchController;
  private body?: UpstreamBody;
  private errorBody?: Buffer[];
  private errorHead?: { status: number; headers: RawHeaders };

  constructor(
    answer: Answer<T>,
    signal: AbortSignal | undefined,
    resolve: (res: T) => void,
    reject: (err: unknown) => void,
  ) {
    this.answer = answer;
    this.resolve = resolve;
    this.reject = reject;
    this.signal = signal;
    signal?.addEventListener('abort', this.onAbort, { once: true });
  }

  /** Before the request started there is no controller yet: onRequestStart aborts it then. */
  private onAbort = (): void => {
    if (this.controller) this.controller.abort(aborted(this.signal) as Error);
    else this.settle(undefined, aborted(this.signal));
  };

  private settle(res: T | undefined, err?: unknown): void {
    const { resolve, reject } = this;
    this.resolve = undefined;
    this.reject = undefined;
    this.signal?.removeEventListener('abort', this.onAbort);
    this.signal = undefined;
    if (res !== undefined) resolve?.(res);
    else reject?.(err);
  }

  onRequestStart(c: Dispatcher.DispatchController): void {
    this.controller = c;
    if (this.signal?.aborted) c.abort(aborted(this.signal) as Error);
  }

  onResponseStart(c: Dispatcher.DispatchController, status: number, headers: RawHeaders): void {
    if (status < 200) return;
    if (status >= 300) {
      this.errorBody = [];
      this.errorHead = { status, headers };
      return;
    }
    this.body = new UpstreamBody(c);
    this.settle(this.answer(status, headers, this.body, ''));
  }

  onResponseData(_c: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.body) this.body.data(chunk);
    else this.errorBody?.push(chunk);
  }

  onResponseEnd(): void {
    if (this.body) {
      this.body.end();
      return;
    }
    // Error bodies are small; they are read whole to build the error.
    const text = Buffer.concat(this.errorBody ?? []).toString('utf8');
    this.settle(this.answer(this.errorHead?.status ?? 0, this.errorHead?.headers ?? {}, undefined, text));
  }

  onResponseError(_c: Dispatcher.DispatchController, err: Error): void {
    if (this.body) this.body.fail(err);
    else this.settle(undefined, err);
  }
}

/**
 * Creates the transport. undici is imported here (with the SDK, when the assistant is warmed or
 * first used), not at boot. `headersTimeoutMs` should be at least the SDK's own timeout.
 */
export async function createModelTransport(opts: {
  headersTimeoutMs: number;
  bodyTimeoutMs: number;
}): Promise<ModelTransport> {
  const undici = await import('undici');
  const agent: Agent = new undici.Agent({
    headersTimeout: opts.headersTimeoutMs,
    bodyTimeout: opts.bodyTimeoutMs,
    keepAliveTimeout: 10_000,
  });
  const bodies = new WeakMap<Response, ChunkSource>();

  const fetch = (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
    const payload = init.body;
    // The SDK sends chat completions as a JSON string; anything else (the model list's GET among them) goes the
    // standard way.
    if (
      input instanceof Request ||
      payload == null ||
      (typeof payload !== 'string' && !(payload instanceof Uint8Array))
    )
      return globalThis.fetch(input, init);
    return send(
      response,
      new URL(input),
      (init.method ?? 'GET') as Dispatcher.HttpMethod,
      plainHeaders(init.headers),
      payload,
      init.signal ?? undefined,
    );
  };

  /** A fetch Response: a success's body is kept for `bodyOf`, an error's text is its body. */
  const response: Answer<Response> = (status, headers, body, text) => {
    const head = { status, headers: webHeaders(headers) };
    if (!body) return new Response(status === 204 || status === 304 ? null : text, head);
    const res = new Response(null, head);
    bodies.set(res, body);
    return res;
  };
  const postAnswer: Answer<PostAnswer> = (status, headers, body, text) => ({
    status,
    headers: () => webHeaders(headers),
    ...(body ? { body } : {}),
    text,
  });

  function send<T>(
    answer: Answer<T>,
    url: URL,
    method: Dispatcher.HttpMethod,
    headers: Record<string, string>,
    body: string | Uint8Array,
    signal: AbortSignal | undefined,
  ): Promise<T> {
    if (signal?.aborted) return Promise.reject(aborted(signal));
    const options: Dispatcher.DispatchOptions = {
      origin: url.origin,
      path: url.pathname + url.search,
      method,
      headers,
      body,
    };
    return new Promise<T>((resolve, reject) => {
      agent.dispatch(options, new FetchHandler(answer, signal, resolve, reject));
    });
  }

  return {
    fetch,
    post: (url, headers, body, signal) => send(postAnswer, url, 'POST', headers, body, signal),
    bodyOf(res) {
      const b = bodies.get(res);
      bodies.delete(res);
      return b;
    },
    close: () => agent.destroy(),
  };
}
