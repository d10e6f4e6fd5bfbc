/**
 * A small Immich REST client over the core's outbound HTTP. The API key travels in the
 * `x-api-key` header, never in a URL, so it cannot end up in a logged address.
 */

import type { OutboundHttp, OutboundResponse } from '@herald/plugin-api';
import { AuthFailedError, ConfigError, errorCode, NotReadyError, OUTBOUND_REFUSED } from '@herald/plugin-api';

/** 400 or 404 from Immich: the album (or other object) does not exist or is not shared with the key's user. */
export class ImmichNotFoundError extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.name = 'ImmichNotFoundError';
    this.status = status;
  }
}

/** Immich refused the key (401) or the key lacks a permission (403). */
export class ImmichAuthError extends AuthFailedError {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

/** Albums with tens of thousands of assets produce large answers. */
const MAX_RESPONSE_BYTES = 64 * 1024 * 1024;

/** The `message` of Immich's error body `{ message, error, statusCode }` (a string or a list). */
function errorMessage(res: OutboundResponse): string {
  try {
    const body = res.json<{ message?: unknown; error?: unknown }>();
    const m = Array.isArray(body.message) ? body.message.join('; ') : (body.message ?? body.error);
    if (typeof m === 'string' && m) return m.slice(0, 200);
  } catch {
    /* not JSON */
  }
  return `HTTP ${res.status}`;
}

export class ImmichClient {
  private readonly http: OutboundHttp;
  private readonly root: string;
  private readonly apiKey: string;
  private readonly timeoutMs: number;

  constructor(http: OutboundHttp, baseUrl: string, apiKey: string, timeoutMs: number) {
    this.http = http;
    // Accept the server address with or without the /api suffix.
    this.root = baseUrl.replace(/\/+$/, '').replace(/\/api$/, '');
    this.apiKey = apiKey;
    this.timeoutMs = timeoutMs;
  }

  /** A link into Immich's web client, e.g. `/albums/<id>`. */
  webUrl(path: string): string {
    return `${this.root}${path}`;
  }

  get<T>(path: string, signal?: AbortSignal): Promise<T> {
    return this.call<T>('GET', path, undefined, signal);
  }

  post<T>(path: string, body: unknown, signal?: AbortSignal): Promise<T> {
    return this.call<T>('POST', path, body, signal);
  }

  private async call<T>(method: string, path: string, json: unknown, signal?: AbortSignal): Promise<T> {
    let res: OutboundResponse;
    try {
      res = await this.http.request(`${this.root}/api${path}`, {
        method,
        json,
        signal,
        timeoutMs: this.timeoutMs,
        maxResponseBytes: MAX_RESPONSE_BYTES,
        headers: { 'x-api-key': this.apiKey, accept: 'application/json' },
      });
    } catch (err) {
      if (signal?.aborted) throw err;
      if (errorCode(err) === OUTBOUND_REFUSED) throw new ConfigError((err as Error).message, { cause: err });
      throw new NotReadyError(`cannot reach Immich: ${(err as Error).message}`, { cause: err });
    }
    if (res.status === 401 || res.status === 403)
      throw new ImmichAuthError(res.status, `Immich refused the API key (${res.status}: ${errorMessage(res)})`);
    if (res.status === 400 || res.status === 404) throw new ImmichNotFoundError(res.status, errorMessage(res));
    if (res.status === 429 || res.status >= 500)
      throw new NotReadyError(`Immich answered ${res.status}: ${errorMessage(res)}`);
    if (res.status < 200 || res.status >= 300)
      throw new NotReadyError(`unexpected answer from Immich: ${res.status} ${errorMessage(res)}`);
    try {
      return res.json<T>();
    } catch (err) {
      throw new NotReadyError('Immich answered with something that is not JSON (is base_url the Immich server?)', {
        cause: err,
      });
    }
  }
}
