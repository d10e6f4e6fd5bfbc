/**
 * grammY's Bot API client wired to the core's SSRF-safe fetch, and the mapping of its failures
 * to the plugin contract's errors. Bot tokens are part of every Bot API URL, so every message
 * that leaves this module goes through `maskToken` first. grammY (with node-fetch and the URL
 * polyfills it pulls in) is loaded on the first Bot API call, not at boot: an idle service that
 * never talks to Telegram does not carry it in memory.
 */

import type { OutboundHttp } from '@herald/plugin-api';
import {
  AuthFailedError,
  OUTBOUND_REDIRECTS,
  OUTBOUND_REFUSED,
  PermanentSendError,
  PluginError,
  RateLimitedError,
  RetryableSendError,
} from '@herald/plugin-api';
import type { Api } from 'grammy';

export const DEFAULT_API_ROOT = 'https://api.telegram.org';

type Grammy = typeof import('grammy');
/** Set once grammY is loaded; any grammY error seen later was made by this module instance. */
let grammy: Grammy | undefined;
const loadGrammy = async (): Promise<Grammy> => (grammy ??= await import('grammy'));

/** Anything shaped like a bot token (`<digits>:<secret>`), wherever it appears. */
const TOKEN_LIKE = /\b[0-9]{3,}:[A-Za-z0-9_-]{20,}\b/g;

/** Replaces the bot token (and anything that looks like one) in a text meant for logs or errors. */
export function maskToken(text: string, token?: string): string {
  const plain = token ? text.split(token).join('<token>') : text;
  return plain.replace(TOKEN_LIKE, '<token>');
}

export interface ApiOptions {
  apiRoot?: string;
  /** Total time limit of one HTTP request; long polling needs more than the outbound default. */
  timeoutMs?: number;
}

/**
 * Adapts `ctx.http.fetch` to what grammY hands a custom fetch. grammY adds node-fetch options
 * (`agent`, `compress`), a `connection` header and a signal from its AbortController polyfill,
 * which a WHATWG fetch refuses; only method, headers, body and a native signal are passed on.
 * A non-JSON error page (a proxy's 502) becomes a Bot API error envelope so it keeps its status.
 *
 * Redirects are refused (`redirect: 'error'`): the bot token is part of every Bot API path, and a
 * proxy redirecting elsewhere usually keeps the path, so following one would hand the token to
 * another server (the core's client also refuses a cross-origin redirect whose URL carries the
 * token, but nothing here needs redirects at all: the Bot API never sends one).
 */
export function grammyFetch(http: OutboundHttp, timeoutMs?: number): typeof fetch {
  return (async (input: string | URL | Request, init?: RequestInit) => {
    const headers = new Headers(init?.headers);
    headers.delete('connection');
    const native = new AbortController();
    const theirs = init?.signal as
      | (AbortSignal & { addEventListener: AbortSignal['addEventListener'] })
      | null
      | undefined;
    if (theirs?.aborted) native.abort();
    else theirs?.addEventListener('abort', () => native.abort(), { once: true });
    const res = await http.fetch(input, {
      method: init?.method,
      headers,
      body: init?.body,
      signal: native.signal,
      redirect: 'error',
      ...(timeoutMs ? { timeoutMs } : {}),
    } as RequestInit);
    if (res.ok || (res.headers.get('content-type') ?? '').includes('json')) return res;
    await res.body?.cancel();
    const envelope = { ok: false, error_code: res.status, description: res.statusText || `HTTP ${res.status}` };
    return new Response(JSON.stringify(envelope), {
      status: res.status,
      headers: { 'content-type': 'application/json' },
    });
  }) as typeof fetch;
}

/** A grammY `Api` for one token whose requests all go through the outbound client (loads grammY on first use). */
export async function createApi(token: string, http: OutboundHttp, opts: ApiOptions = {}): Promise<Api> {
  const { Api } = await loadGrammy();
  return new Api(token, {
    apiRoot: (opts.apiRoot ?? DEFAULT_API_ROOT).replace(/\/+$/, ''),
    fetch: grammyFetch(http, opts.timeoutMs),
    // grammY's own timer, above the outbound one so the outbound error (with its reason) wins.
    timeoutSeconds: Math.ceil((opts.timeoutMs ?? 15_000) / 1000) + 5,
  });
}

/**
 * Translates a grammY failure into the contract's error: 429 → RateLimitedError (retry_after),
 * 401 → AuthFailedError, other 4xx → PermanentSendError, 5xx and network failures → RetryableSendError.
 */
export function toPluginError(err: unknown, token: string): Error {
  if (err instanceof PluginError) return err;
  // Without grammY loaded no grammY error can exist, so the checks below only run once it is.
  if (grammy && err instanceof grammy.GrammyError) {
    const code = err.error_code;
    const what = maskToken(`telegram ${err.method}: ${code} ${err.description}`, token);
    if (code === 429) {
      const seconds = Number(err.parameters.retry_after);
      return new RateLimitedError(what, (Number.isFinite(seconds) && seconds > 0 ? seconds : 1) * 1000);
    }
    // The status travels with the error so the failure metric records the HTTP answer, not 0.
    if (code === 401) return new AuthFailedError(`${what} (the bot token was rejected)`, { statusCode: code });
    if (code >= 500 || code === 0) return new RetryableSendError(what, code);
    const migrated = err.parameters.migrate_to_chat_id;
    return new PermanentSendError(
      migrated ? `${what} (the group is now chat ${migrated}; update chat_id)` : what,
      code,
    );
  }
  if (grammy && err instanceof grammy.HttpError) {
    const inner = err.error as { code?: string; message?: string } | undefined;
    const what = maskToken(`telegram: ${err.message}${inner?.message ? ` ${inner.message}` : ''}`, token);
    // The outbound policy refuses the address of api_root: retrying cannot help.
    if (inner?.code === OUTBOUND_REFUSED) return new PermanentSendError(what, 0);
    // api_root answered a redirect, which is refused so the token in the path stays there: fix api_root.
    if (inner?.code === OUTBOUND_REDIRECTS)
      return new PermanentSendError(
        `${what} (api_root redirects elsewhere; the Bot API never does, so set api_root to the server itself)`,
        0,
      );
    return new RetryableSendError(what, 0);
  }
  return new RetryableSendError(maskToken(`telegram: ${(err as Error)?.message ?? String(err)}`, token), 0);
}

/** Runs a Bot API call and rethrows its failure as a contract error with the token masked. */
export async function call<T>(token: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw toPluginError(err, token);
  }
}

/** grammY types its signal parameter with its AbortController polyfill; a native signal works the same at runtime. */
export const grammySignal = (s: AbortSignal) => s as unknown as NonNullable<Parameters<Api['getMe']>[0]>;
