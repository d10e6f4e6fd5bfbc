/** Values a client needs to write the message itself, in its own language (names, limits, counts). */
export type ProblemParams = Record<string, string | number | boolean | string[]>;

/**
 * One field's problem: `path` like `body/config/url`, an English `message`, and, where the
 * client can phrase it itself, a stable `code` (a JSON Schema keyword such as `minLength`, or a
 * Herald code) with its `params` (`{ limit: 16 }`).
 */
export interface FieldError {
  path: string;
  message: string;
  code?: string;
  params?: ProblemParams;
}

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
  constructor(
    status: number,
    code: string,
    detail: string,
    extra: { errors?: FieldError[]; headers?: Record<string, string>; params?: ProblemParams } = {},
  ) {
    super(detail);
    this.status = status;
    this.code = code;
    this.errors = extra.errors;
    this.headers = extra.headers;
    this.params = extra.params;
  }
}

export const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  409: 'Conflict',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Content',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
};

export const badRequest = (detail: string, errors?: FieldError[]) =>
  new HttpError(400, 'bad_request', detail, { errors });
export const unauthorized = (detail = 'Authentication is required.') => new HttpError(401, 'unauthorized', detail);
export const forbidden = (detail = 'You are not allowed to do this.') => new HttpError(403, 'forbidden', detail);
export const notFound = (what = 'Resource') => new HttpError(404, 'not_found', `${what} was not found.`);
export const conflict = (detail: string, code = 'conflict', params?: ProblemParams) =>
  new HttpError(409, code, detail, { params });
export const unprocessable = (
  detail: string,
  errors?: FieldError[],
  code = 'validation_failed',
  params?: ProblemParams,
) => new HttpError(422, code, detail, { errors, params });
export const tooMany = (detail: string, retryAfterSeconds?: number, code = 'rate_limited', params?: ProblemParams) =>
  new HttpError(429, code, detail, {
    params,
    headers:
      retryAfterSeconds !== undefined
        ? { 'retry-after': String(Math.max(1, Math.ceil(retryAfterSeconds))) }
        : undefined,
  });
export const unavailable = (detail: string, code = 'unavailable') => new HttpError(503, code, detail);

export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: string;
  params?: ProblemParams;
  errors?: FieldError[];
}

export function problem(
  status: number,
  code: string,
  detail: string,
  errors?: FieldError[],
  params?: ProblemParams,
): ProblemBody {
  return {
    type: 'about:blank',
    title: TITLES[status] ?? 'Error',
    status,
    detail,
    code,
    ...(params ? { params } : {}),
    ...(errors ? { errors } : {}),
  };
}

/** The params of a schema error a client can use (scalars and lists of strings). */
export function plainParams(params: Record<string, unknown> | undefined): ProblemParams {
  const out: ProblemParams = {};
  for (const [k, v] of Object.entries(params ?? {})) {
    if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') out[k] = v;
    else if (Array.isArray(v) && v.every((x) => typeof x === 'string')) out[k] = v;
  }
  return out;
}

const TYPE_NAMES: Record<string, string> = {
  string: 'a string',
  integer: 'a whole number',
  number: 'a number',
  boolean: 'true or false',
  object: 'an object',
  array: 'a list',
  null: 'null',
};
const FORMAT_NAMES: Record<string, string> = {
  uuid: 'a UUID',
  'date-time': 'a date and time (ISO 8601, e.g. 2030-01-31T12:00:00Z)',
  date: 'a date (YYYY-MM-DD)',
  time: 'a time of day',
  email: 'an email address',
  uri: 'an absolute URL',
  url: 'an absolute URL',
  hostname: 'a host name',
  ipv4: 'an IPv4 address',
  ipv6: 'an IPv6 address',
};
const show = (v: unknown): string => (typeof v === 'string' ? v : JSON.stringify(v));
/** "a, b or c". */
function orList(items: string[]): string {
  return items.length < 2 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} or ${items.at(-1)}`;
}
const count = (n: unknown, one: string, many: string): string => `${String(n)} ${Number(n) === 1 ? one : many}`;

/**
 * What a JSON Schema keyword says about a field, to follow its name ("must be at most 200"), from
 * the keyword's params as Ajv and TypeBox give them; undefined when the params needed are missing.
 */
export function keywordPhrase(code: string | undefined, params: Record<string, unknown> = {}): string | undefined {
  const limit = params.limit;
  const has = (v: unknown) => v !== undefined && v !== null;
  switch (code) {
    case 'required':
      return 'is required';
    // Ajv names the field itself (the path points at it); TypeBox lists the fields of the object.
    case 'additionalProperties':
      return Array.isArray(params.additionalProperties)
        ? `has fields it does not allow: ${params.additionalProperties.map(show).join(', ')}`
        : 'is not allowed';
    case 'boolean':
    case 'false schema':
    case 'not':
      return 'is not allowed';
    case 'type': {
      const types = (Array.isArray(params.type) ? params.type : String(params.type ?? '').split(','))
        .map(String)
        .filter(Boolean);
      return types.length ? `must be ${orList(types.map((t) => TYPE_NAMES[t] ?? t))}` : undefined;
    }
    case 'const':
      return 'allowedValue' in params ? `must be ${show(params.allowedValue)}` : undefined;
    case 'enum':
      return Array.isArray(params.allowedValues)
        ? `must be one of: ${params.allowedValues.map(show).join(', ')}`
        : undefined;
    case 'minLength':
      return has(limit)
        ? Number(limit) === 1
          ? 'must not be empty'
          : `must be at least ${count(limit, 'character', 'characters')} long`
        : undefined;
    case 'maxLength':
      return has(limit) ? `must be at most ${count(limit, 'character', 'characters')} long` : undefined;
    case 'minimum':
      return has(limit) ? `must be at least ${String(limit)}` : undefined;
    case 'maximum':
      return has(limit) ? `must be at most ${String(limit)}` : undefined;
    case 'exclusiveMinimum':
      return has(limit) ? `must be greater than ${String(limit)}` : undefined;
    case 'exclusiveMaximum':
      return has(limit) ? `must be less than ${String(limit)}` : undefined;
    case 'minItems':
      return has(limit)
        ? Number(limit) === 1
          ? 'must not be empty'
          : `must have at least ${count(limit, 'item', 'items')}`
        : undefined;
    case 'maxItems':
      return has(limit) ? `must have at most ${count(limit, 'item', 'items')}` : undefined;
    case 'minProperties':
      return has(limit)
        ? Number(limit) === 1
          ? 'must not be empty'
          : `must have at least ${count(limit, 'field', 'fields')}`
        : undefined;
    case 'maxProperties':
      return has(limit) ? `must have at most ${count(limit, 'field', 'fields')}` : undefined;
    case 'uniqueItems':
      return 'must not list the same item twice';
    case 'multipleOf':
      return has(params.multipleOf) ? `must be a multiple of ${String(params.multipleOf)}` : undefined;
    case 'pattern':
      return has(params.pattern) ? `must match the pattern ${String(params.pattern)}` : undefined;
    case 'format':
      return has(params.format)
        ? `must be ${FORMAT_NAMES[String(params.format)] ?? `in the ${String(params.format)} format`}`
        : undefined;
    case 'anyOf':
    case 'oneOf':
      return 'does not match any of the forms it accepts';
    default:
      return undefined;
  }
}

/** The name of the place a field error's `path` points at: "The field config.url", "The query parameter limit". */
export function fieldName(path: string): string {
  const [where = '', ...rest] = path.split('/');
  const name = rest.map((s) => s.replaceAll('~1', '/').replaceAll('~0', '~')).join('.');
  switch (where) {
    case 'body':
      return name ? `The field ${name}` : 'The request body';
    case 'querystring':
      return name ? `The query parameter ${name}` : 'The query string';
    case 'params':
      return name ? `The path parameter ${name}` : 'The path';
    case 'headers':
      return name ? `The header ${name}` : 'The headers';
    default:
      return `The field ${[where, ...rest].filter(Boolean).join('.')}`;
  }
}

/** One field error as an English sentence: "The field role must be one of: admin, user." */
export function fieldSentence(e: Pick<FieldError, 'path' | 'message'>): string {
  const message = e.message.trim().replace(/\.$/, '');
  return `${fieldName(e.path)} ${message}.`;
}

/** Field errors as sentences, the first `max` of them and how many more there are. */
export function fieldSentences(errors: Pick<FieldError, 'path' | 'message'>[], max = 5): string {
  const sentences = [...new Set(errors.map(fieldSentence))];
  const more = sentences.length - max;
  return [
    ...sentences.slice(0, max),
    ...(more > 0 ? [`There ${more === 1 ? 'is 1 more problem' : `are ${more} more problems`}.`] : []),
  ].join(' ');
}
