import type OpenAI from 'openai';
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import type { Config } from '../config/config.ts';
import { HttpError } from '../http/problem.ts';
import { createModelTransport, type ModelTransport, type PostAnswer } from './model-fetch.ts';
import { ModelStream } from './model-stream.ts';

/**
 * The SDK, imported when the client is first needed or warmed (it weighs tens of MB and a deployment may never chat).
 */
let sdk: typeof import('openai') | undefined;

/** The SDK's request timeout (until the response headers); the transport waits at least as long. */
const TIMEOUT_MS = 10 * 60_000;
/** A stream silent this long is dead. */
const BODY_TIMEOUT_MS = 5 * 60_000;

interface Ready {
  client: OpenAI;
  transport: ModelTransport;
  /** Where a chat completion is posted and the headers the SDK sends with it (authorization among them). */
  completions: { url: URL; headers: Record<string, string> };
}

/** A failure before any response, as the SDK reports it: its abort, timeout or connection error. */
function connectionError(err: unknown, signal: AbortSignal): Error {
  const s = sdk!;
  if (signal.aborted) return new s.APIUserAbortError();
  const e = err instanceof Error ? err : new Error(String(err));
  const timedOut =
    e.name === 'AbortError' || /timed? ?out/i.test(String(e) + ('cause' in e ? String((e as Error).cause) : ''));
  if (timedOut) return Object.assign(new s.APIConnectionTimeoutError(), { cause: e });
  return new s.APIConnectionError({ cause: e });
}

/**
 * The model endpoint: any OpenAI-compatible server (`AI_BASE_URL`, `AI_API_KEY`, `AI_MODEL`),
 * streamed chat completions with the usage chunk requested. No client-side retries: a failed
 * call is reported to the user at once rather than after several silent attempts.
 *
 * A chat completion goes out with the URL and headers the openai client builds for it (taken once from the SDK's
 * request builder, authentication included) and comes back as the SDK's errors (status errors built by the SDK
 * from the status, body and headers; connection failures, timeouts and aborts as its classes), without the SDK's
 * per-request machinery (its option merging, abort controllers, timers and logging; ~0.1 ms of CPU an opening). The
 * streamed body is read by ModelStream straight from the transport. The model list still goes through the SDK.
 */
export class ModelClient {
  private ai: Config['ai'];
  private ready?: Promise<Ready>;

  constructor(ai: Config['ai']) {
    this.ai = ai;
  }

  /** False without `AI_API_KEY`; the message route then answers 503. */
  get configured(): boolean {
    return Boolean(this.ai.apiKey);
  }
  get model(): string {
    return this.ai.model;
  }

  /**
   * Imports the SDK and undici and builds the client; called in the background once the service
   * is listening, so the first message does not pay for it. Idempotent; a failure is retried on the next call.
   */
  warm(): Promise<Ready> {
    this.ready ??= (async () => {
      const [mod, transport] = await Promise.all([
        import('openai'),
        createModelTransport({ headersTimeoutMs: TIMEOUT_MS, bodyTimeoutMs: BODY_TIMEOUT_MS }),
      ]);
      sdk = mod;
      const client = new mod.OpenAI({
        apiKey: this.ai.apiKey,
        baseURL: this.ai.baseUrl,
        maxRetries: 0,
        timeout: TIMEOUT_MS,
        fetch: transport.fetch,
      });
      const built = await client.buildRequest(
        { method: 'post', path: '/chat/completions', body: {} },
        { retryCount: 0 },
      );
      const headers: Record<string, string> = {};
      new Headers(built.req.headers as HeadersInit).forEach((value, name) => {
        headers[name] = value;
      });
      return { client, transport, completions: { url: new URL(built.url), headers } };
    })();
    this.ready.catch(() => {
      this.ready = undefined;
    });
    return this.ready;
  }

  /** Starts a streamed completion; resolves once the endpoint accepted the request (status 2xx), before any chunk. */
  async open(
    messages: ChatCompletionMessageParam[],
    tools: ChatCompletionTool[],
    signal: AbortSignal,
    model?: string,
  ): Promise<ModelStream> {
    return this.stream(
      {
        model: model ?? this.ai.model,
        messages,
        stream: true,
        stream_options: { include_usage: true },
        ...(tools.length ? { tools } : {}),
      },
      signal,
    );
  }

  /**
   * Posts a streamed chat completion (the body as the SDK would serialize it) and resolves with its stream once the
   * endpoint accepted it; rejects with the SDK's error for any other outcome.
   */
  private async stream(params: Record<string, unknown>, signal: AbortSignal): Promise<ModelStream> {
    const { transport, completions } = await this.warm();
    let res: PostAnswer;
    try {
      res = await transport.post(completions.url, completions.headers, JSON.stringify(params), signal);
    } catch (err) {
      throw connectionError(err, signal);
    }
    if (!res.body) {
      // As the SDK builds a status error: the body's JSON (wrapped in `error` unless it has one), else its text.
      let json: unknown;
      try {
        json = JSON.parse(res.text);
      } catch {
        json = undefined;
      }
      const error =
        json && typeof json === 'object' && (json as { error?: unknown }).error == null ? { error: json } : json;
      throw sdk!.APIError.generate(res.status, error as object | undefined, json ? undefined : res.text, res.headers());
    }
    return new ModelStream(res.body, signal);
  }

  /**
   * The model ids the endpoint lists (`GET /models`, with the client's credentials), or undefined
   * when it does not answer within `ms` (many OpenAI-compatible servers lack the route).
   */
  async listModels(ms = 5000): Promise<string[] | undefined> {
    if (!this.configured) return undefined;
    try {
      const { client } = await this.warm();
      const ids: string[] = [];
      for await (const m of client.models.list({ signal: AbortSignal.timeout(ms) })) {
        if (typeof m.id === 'string') ids.push(m.id);
        if (ids.length >= 1000) break;
      }
      return ids;
    } catch {
      return undefined;
    }
  }

  /**
   * One short completion without tools (chat titles), read whole: the answer's text and the
   * tokens it cost (as reported, else estimated at ~4 characters per token). It is streamed like
   * a reply, since the transport serves streamed calls only.
   */
  async complete(
    messages: ChatCompletionMessageParam[],
    o: { maxTokens: number; signal: AbortSignal; model?: string },
  ): Promise<{
    text: string;
    tokens: number;
    usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number; estimated: boolean };
  }> {
    const stream = await this.stream(
      {
        model: o.model ?? this.ai.model,
        messages,
        max_tokens: o.maxTokens,
        stream: true,
        stream_options: { include_usage: true },
      },
      o.signal,
    );
    let text = '';
    let reported: { prompt_tokens?: number; completion_tokens?: number; total_tokens?: number } | undefined;
    await stream.each((chunk) => {
      if (chunk.usage) reported = chunk.usage;
      const d = chunk.choices?.[0]?.delta?.content;
      if (d) text += d;
    });
    const prompt = Math.ceil(JSON.stringify(messages).length / 4);
    const completion = Math.ceil(text.length / 4);
    const usage =
      reported?.total_tokens !== undefined
        ? {
            prompt_tokens: reported.prompt_tokens ?? 0,
            completion_tokens: reported.completion_tokens ?? 0,
            total_tokens: reported.total_tokens,
            estimated: false,
          }
        : { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion, estimated: true };
    return { text, tokens: usage.total_tokens, usage };
  }

  /** Closes the transport's connections (at shutdown, after the streams were stopped and saved). */
  async close(): Promise<void> {
    const ready = this.ready;
    this.ready = undefined;
    if (ready) await (await ready.catch(() => undefined))?.transport.close();
  }

  /** Masks the API key wherever an upstream message might echo it. */
  mask(text: string): string {
    return this.ai.apiKey ? text.split(this.ai.apiKey).join('***') : text;
  }

  /** True when `err` is our own abort (the client went away), not a model failure. */
  static isAbort(err: unknown, signal: AbortSignal): boolean {
    return (
      signal.aborted ||
      (sdk !== undefined && err instanceof sdk.APIUserAbortError) ||
      (err instanceof Error && err.name === 'AbortError')
    );
  }

  /** A model failure as problem details: 503 when the provider throttles us, 502 otherwise. */
  failure(err: unknown): HttpError {
    if (sdk && err instanceof sdk.APIConnectionError)
      return new HttpError(502, 'model_unreachable', 'The AI model endpoint could not be reached; try again later.');
    if (sdk && err instanceof sdk.APIError && err.status !== undefined) {
      if (err.status === 429) {
        const after = err.headers?.get?.('retry-after');
        return new HttpError(
          503,
          'model_rate_limited',
          'The AI model provider is rate limiting requests; try again shortly.',
          after && /^\d+$/.test(after) ? { headers: { 'retry-after': after } } : {},
        );
      }
      if (err.status === 401 || err.status === 403)
        return new HttpError(
          502,
          'model_auth_failed',
          'The AI model provider refused the configured credentials (check AI_API_KEY).',
        );
      if (err.status >= 500)
        return new HttpError(
          502,
          'model_unavailable',
          `The AI model endpoint failed (HTTP ${err.status}); try again later.`,
        );
      return new HttpError(
        502,
        'model_rejected',
        `The AI model endpoint rejected the request (HTTP ${err.status}): ` +
          `${this.mask(String(err.message)).slice(0, 300)}`,
      );
    }
    // Errors inside the stream (an error the model sent, a malformed payload, a dropped connection) land here.
    return new HttpError(
      502,
      'model_failed',
      `The AI model stream failed: ${this.mask(err instanceof Error ? err.message : String(err)).slice(0, 300)}`,
    );
  }
}
