import type OpenAI from 'openai';
import type { ChatCompletionChunk, ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import type { Config } from '../config/config.ts';
import { HttpError } from '../http/problem.ts';

/**
 * The model endpoint: any OpenAI-compatible server (`AI_BASE_URL`, `AI_API_KEY`, `AI_MODEL`),
 * streamed chat completions with the usage chunk requested. No client-side retries: a failed
 * call is reported to the user at once rather than after several silent attempts.
 */
/** The SDK, imported on the first model call (it weighs tens of MB and a deployment may never chat). */
let sdk: typeof import('openai') | undefined;

export class ModelClient {
  private ai: Config['ai'];
  private client?: OpenAI;

  constructor(ai: Config['ai']) { this.ai = ai; }

  /** False without `AI_API_KEY`; the message route then answers 503. */
  get configured(): boolean { return Boolean(this.ai.apiKey); }
  get model(): string { return this.ai.model; }

  /** Starts a streamed completion; resolves once the endpoint accepted the request (status 2xx), before any chunk. */
  async open(messages: ChatCompletionMessageParam[], tools: ChatCompletionTool[], signal: AbortSignal): Promise<AsyncIterable<ChatCompletionChunk>> {
    sdk ??= await import('openai');
    this.client ??= new sdk.OpenAI({ apiKey: this.ai.apiKey, baseURL: this.ai.baseUrl, maxRetries: 0, timeout: 10 * 60_000 });
    return this.client.chat.completions.create({
      model: this.ai.model, messages, stream: true, stream_options: { include_usage: true },
      ...(tools.length ? { tools } : {}),
    }, { signal });
  }

  /** Masks the API key wherever an upstream message might echo it. */
  mask(text: string): string {
    return this.ai.apiKey ? text.split(this.ai.apiKey).join('***') : text;
  }

  /** True when `err` is our own abort (the client went away), not a model failure. */
  static isAbort(err: unknown, signal: AbortSignal): boolean {
    return signal.aborted || (sdk !== undefined && err instanceof sdk.APIUserAbortError) || (err instanceof Error && err.name === 'AbortError');
  }

  /** A model failure as problem details: 503 when the provider throttles us, 502 otherwise. */
  failure(err: unknown): HttpError {
    if (sdk && err instanceof sdk.APIConnectionError) return new HttpError(502, 'model_unreachable', 'The AI model endpoint could not be reached; try again later.');
    if (sdk && err instanceof sdk.APIError && err.status !== undefined) {
      if (err.status === 429) {
        const after = err.headers?.get?.('retry-after');
        return new HttpError(503, 'model_rate_limited', 'The AI model provider is rate limiting requests; try again shortly.', after && /^\d+$/.test(after) ? { headers: { 'retry-after': after } } : {});
      }
      if (err.status === 401 || err.status === 403) return new HttpError(502, 'model_auth_failed', 'The AI model provider refused the configured credentials (check AI_API_KEY).');
      if (err.status >= 500) return new HttpError(502, 'model_unavailable', `The AI model endpoint failed (HTTP ${err.status}); try again later.`);
      return new HttpError(502, 'model_rejected', `The AI model endpoint rejected the request (HTTP ${err.status}): ${this.mask(String(err.message)).slice(0, 300)}`);
    }
    return new HttpError(502, 'model_failed', `The AI model stream failed: ${this.mask(err instanceof Error ? err.message : String(err)).slice(0, 300)}`);
  }
}
