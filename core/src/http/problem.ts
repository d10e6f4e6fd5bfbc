/** An error that becomes an RFC 9457 problem-details response. */
export class HttpError extends Error {
  readonly status: number;
  readonly code: string;
  readonly errors?: { path: string; message: string }[];
  readonly headers?: Record<string, string>;
  constructor(status: number, code: string, detail: string, extra: { errors?: { path: string; message: string }[]; headers?: Record<string, string> } = {}) {
    super(detail);
    this.status = status;
    this.code = code;
    this.errors = extra.errors;
    this.headers = extra.headers;
  }
}

export const TITLES: Record<number, string> = {
  400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found', 405: 'Method Not Allowed',
  409: 'Conflict', 413: 'Content Too Large', 415: 'Unsupported Media Type', 422: 'Unprocessable Content',
  429: 'Too Many Requests', 500: 'Internal Server Error', 502: 'Bad Gateway', 503: 'Service Unavailable',
};

export const badRequest = (detail: string, errors?: { path: string; message: string }[]) => new HttpError(400, 'bad_request', detail, { errors });
export const unauthorized = (detail = 'Authentication is required.') => new HttpError(401, 'unauthorized', detail);
export const forbidden = (detail = 'You are not allowed to do this.') => new HttpError(403, 'forbidden', detail);
export const notFound = (what = 'Resource') => new HttpError(404, 'not_found', `${what} was not found.`);
export const conflict = (detail: string, code = 'conflict') => new HttpError(409, code, detail);
export const unprocessable = (detail: string, errors?: { path: string; message: string }[], code = 'validation_failed') => new HttpError(422, code, detail, { errors });
export const tooMany = (detail: string, retryAfterSeconds?: number, code = 'rate_limited') =>
  new HttpError(429, code, detail, { headers: retryAfterSeconds !== undefined ? { 'retry-after': String(Math.max(1, Math.ceil(retryAfterSeconds))) } : undefined });
export const unavailable = (detail: string, code = 'unavailable') => new HttpError(503, code, detail);

export interface ProblemBody {
  type: string; title: string; status: number; detail: string; code: string;
  errors?: { path: string; message: string }[];
}

export function problem(status: number, code: string, detail: string, errors?: { path: string; message: string }[]): ProblemBody {
  return { type: 'about:blank', title: TITLES[status] ?? 'Error', status, detail, code, ...(errors ? { errors } : {}) };
}
