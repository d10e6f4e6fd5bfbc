/** Values a client needs to write the message itself, in its own language (names, limits, counts). */
export type ProblemParams = Record<string, string | number | boolean | string[]>;

/**
 * One field's problem: `path` like `body/config/url`, an English `message`, and, where the
 * client can phrase it itself, a stable `code` (a JSON Schema keyword such as `minLength`, or a
 * Herald code) with its `params` (`{ limit: 16 }`).
 */
export interface FieldError { path: string; message: string; code?: string; params?: ProblemParams }

/**
 * An error that becomes an RFC 9457 problem-details response. `code` is stable and documented;
 * `params` carry the values of the message so that a client can render the code from its own
 * locale files (the web client does) and fall back to `detail`, which is English.
 */
export class HttpError extends Error {
  readonly status: number;
  readonly code: string;
  readonly errors?: FieldError[];
  readonly headers?: Record<string, string>;
  readonly params?: ProblemParams;
  constructor(status: number, code: string, detail: string, extra: { errors?: FieldError[]; headers?: Record<string, string>; params?: ProblemParams } = {}) {
    super(detail);
    this.status = status;
    this.code = code;
    this.errors = extra.errors;
    this.headers = extra.headers;
    this.params = extra.params;
  }
}

export const TITLES: Record<number, string> = {
  400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found', 405: 'Method Not Allowed',
  409: 'Conflict', 413: 'Content Too Large', 415: 'Unsupported Media Type', 422: 'Unprocessable Content',
  429: 'Too Many Requests', 500: 'Internal Server Error', 502: 'Bad Gateway', 503: 'Service Unavailable',
};

export const badRequest = (detail: string, errors?: FieldError[]) => new HttpError(400, 'bad_request', detail, { errors });
export const unauthorized = (detail = 'Authentication is required.') => new HttpError(401, 'unauthorized', detail);
export const forbidden = (detail = 'You are not allowed to do this.') => new HttpError(403, 'forbidden', detail);
export const notFound = (what = 'Resource') => new HttpError(404, 'not_found', `${what} was not found.`);
export const conflict = (detail: string, code = 'conflict', params?: ProblemParams) => new HttpError(409, code, detail, { params });
export const unprocessable = (detail: string, errors?: FieldError[], code = 'validation_failed', params?: ProblemParams) => new HttpError(422, code, detail, { errors, params });
export const tooMany = (detail: string, retryAfterSeconds?: number, code = 'rate_limited', params?: ProblemParams) =>
  new HttpError(429, code, detail, { params, headers: retryAfterSeconds !== undefined ? { 'retry-after': String(Math.max(1, Math.ceil(retryAfterSeconds))) } : undefined });
export const unavailable = (detail: string, code = 'unavailable') => new HttpError(503, code, detail);

export interface ProblemBody {
  type: string; title: string; status: number; detail: string; code: string;
  params?: ProblemParams;
  errors?: FieldError[];
}

export function problem(status: number, code: string, detail: string, errors?: FieldError[], params?: ProblemParams): ProblemBody {
  return { type: 'about:blank', title: TITLES[status] ?? 'Error', status, detail, code, ...(params ? { params } : {}), ...(errors ? { errors } : {}) };
}
