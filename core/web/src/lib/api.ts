/**
 * The only way the client talks to the service: same-origin fetch with the session cookie (and
 * the bearer token from this page's login, when there is one). Errors are RFC 9457 problem
 * details turned into `ApiError`; a 401 from a protected route calls the unauthorized handler,
 * which sends the user to the login page and back afterwards.
 */

export type ProblemParams = Record<string, string | number | boolean | string[]>;
/** One field's problem: the service's English `message`, and a `code` with `params` the client can phrase itself. */
export interface FieldProblem {
  path: string;
  message: string;
  code?: string;
  params?: ProblemParams;
}

/** A failed request: the problem details the service sent, or a network failure (status 0). */
export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly errors: FieldProblem[];
  readonly retryAfter: number | null;
  readonly params: ProblemParams;
  constructor(
    status: number,
    code: string,
    detail: string,
    errors: FieldProblem[] = [],
    retryAfter: number | null = null,
    params: ProblemParams = {},
  ) {
    super(detail);
    this.status = status;
    this.code = code;
    this.errors = errors;
    this.retryAfter = retryAfter;
    this.params = params;
  }
}

let token: string | null = null;
let onUnauthorized: (() => void) | null = null;

/** Keeps the access token of a login made in this page (memory only; the cookie outlives it). */
export function setToken(t: string | null): void {
  token = t;
}
export function setUnauthorizedHandler(fn: () => void): void {
  onUnauthorized = fn;
}

/** Routes whose 401 means "wrong credentials", not "session gone". */
const PUBLIC = ['/api/auth/login', '/api/setup', '/api/v1/auth/register'];

export function headers(extra: Record<string, string> = {}): Record<string, string> {
  return token ? { ...extra, authorization: `Bearer ${token}` } : extra;
}

/** Reads a non-2xx response into an ApiError (and reports a lost session). */
export async function toError(res: Response, path: string): Promise<ApiError> {
  let body: { detail?: string; code?: string; errors?: FieldProblem[]; title?: string; params?: ProblemParams } = {};
  try {
    body = await res.json();
  } catch {
    /* not JSON */
  }
  const retry = res.headers.get('retry-after');
  const err = new ApiError(
    res.status,
    body.code ?? String(res.status),
    body.detail ?? body.title ?? res.statusText,
    body.errors ?? [],
    retry ? Number(retry) : null,
    body.params ?? {},
  );
  if (res.status === 401 && !PUBLIC.includes(path)) onUnauthorized?.();
  return err;
}

export interface RequestInit2 {
  body?: unknown;
  query?: Record<string, string | number | boolean | undefined | null>;
  signal?: AbortSignal;
  form?: FormData;
}

export function url(path: string, query?: RequestInit2['query']): string {
  if (!query) return path;
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `${path}?${s}` : path;
}

/** Sends one request; resolves to the parsed JSON body (undefined for 204). */
export async function api<T = unknown>(method: string, path: string, o: RequestInit2 = {}): Promise<T> {
  let res: Response;
  try {
    res = await fetch(url(path, o.query), {
      method,
      credentials: 'same-origin',
      // Same-origin Referer even under a no-referrer page policy: apply-restart checks it.
      referrerPolicy: 'same-origin',
      headers: headers(o.body !== undefined ? { 'content-type': 'application/json' } : {}),
      body: o.form ?? (o.body !== undefined ? JSON.stringify(o.body) : undefined),
      signal: o.signal,
    });
  } catch (err) {
    if ((err as Error).name === 'AbortError') throw err;
    throw new ApiError(0, 'network', '');
  }
  if (!res.ok) throw await toError(res, path);
  if (res.status === 204) return undefined as T;
  const type = res.headers.get('content-type') ?? '';
  return (type.includes('json') ? await res.json() : await res.text()) as T;
}

export const get = <T>(path: string, query?: RequestInit2['query']) => api<T>('GET', path, { query });
export const post = <T>(path: string, body?: unknown, query?: RequestInit2['query']) =>
  api<T>('POST', path, { body, query });
export const patch = <T>(path: string, body: unknown) => api<T>('PATCH', path, { body });
export const put = <T>(path: string, body?: unknown) => api<T>('PUT', path, { body });
export const del = (path: string) => api<void>('DELETE', path);

/**
 * Downloads an authenticated file: fetched with the session, saved through a temporary object
 * URL (works for routes that want the bearer header as well as the cookie).
 */
export async function download(path: string, fallbackName: string): Promise<void> {
  const res = await fetch(path, { credentials: 'same-origin', headers: headers() });
  if (!res.ok) throw await toError(res, path);
  const disposition = res.headers.get('content-disposition') ?? '';
  const star = /filename\*=UTF-8''([^;]+)/i.exec(disposition);
  const plain = /filename="([^"]+)"/i.exec(disposition);
  const name = star ? decodeURIComponent(star[1]) : plain ? plain[1] : fallbackName;
  const blob = await res.blob();
  const href = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = href;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(href), 10_000);
}
