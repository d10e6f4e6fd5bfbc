/** Small pieces every relay route file shares: paging, owned-row lookup, validation answers. */
import type { Core } from '../../core.ts';
import {
  fieldSentences,
  type HttpError,
  keywordPhrase,
  notFound,
  type ProblemParams,
  unavailable,
  unprocessable,
} from '../../http/problem.ts';
import { type RelayService, relayOf } from '../service.ts';

export interface Page {
  limit?: number;
  before?: string;
}

/** `AND id < ? ORDER BY id DESC LIMIT ?` for UUIDv7 cursors (newest first). */
export function pageSql(alias: string, page: Page, params: unknown[]): string {
  const col = alias ? `${alias}.id` : 'id';
  let sql = '';
  if (page.before) {
    sql += ` AND ${col} < ?`;
    params.push(page.before);
  }
  sql += ` ORDER BY ${col} DESC LIMIT ?`;
  params.push(Math.min(200, Math.max(1, page.limit ?? 50)));
  return sql;
}

/** One row of `table` owned by the caller, or 404 naming `what` (another user's row is "not found" too). */
export async function owned<T = Record<string, unknown>>(
  core: Core,
  table: string,
  id: string,
  userId: string,
  what: string,
): Promise<T> {
  const row = await core.db.get<T>(`SELECT * FROM ${table} WHERE id = ? AND user_id = ?`, [id, userId]);
  if (!row) throw notFound(what);
  return row;
}

/**
 * Turns a plugin validator's errors into a 422 whose paths point into the request body. Fields the
 * schema does not declare (`undeclared`, JSON pointers) are named in the detail, code
 * `unknown_config_fields`.
 */
export function invalidConfig(
  field: string,
  what: string,
  errors: { path: string; message: string; code?: string; params?: ProblemParams }[],
  undeclared: string[] = [],
): HttpError {
  // code/params (the JSON Schema keyword and its values) let a client phrase each problem in its own words.
  const list = errors.map((e) => ({
    path: `body/${field}${e.path === '/' ? '' : e.path}`,
    message: e.message,
    ...(e.code ? { code: e.code, params: e.params ?? {} } : {}),
  }));
  if (undeclared.length) {
    const names = undeclared.map((p) =>
      p
        .slice(1)
        .split('/')
        .map((s) => s.replaceAll('~1', '/').replaceAll('~0', '~'))
        .join('.'),
    );
    return unprocessable(
      `The ${what} has fields it does not know: ${names.join(', ')}. Remove them; GET /api/plugins lists ` +
        'the fields of each kind.',
      list,
      'unknown_config_fields',
      { fields: names },
    );
  }
  return unprocessable(`The ${what} is invalid. ${fieldSentences(sayable(list))}`, list);
}

/**
 * The field errors as the detail says them: each in the words of its keyword where it has one
 * (the validator's own message otherwise), and an object's "unknown fields" error left out where
 * each of those fields has an error of its own ("The field config.evil is not allowed.").
 */
function sayable(
  list: { path: string; message: string; code?: string; params?: ProblemParams }[],
): { path: string; message: string }[] {
  const paths = new Set(list.map((e) => e.path));
  return list
    .filter(
      (e) =>
        !(
          e.code === 'additionalProperties' &&
          Array.isArray(e.params?.additionalProperties) &&
          e.params.additionalProperties.every((f) => paths.has(`${e.path}/${f}`))
        ),
    )
    .map((e) => ({ path: e.path, message: keywordPhrase(e.code, e.params) ?? e.message }));
}

/** True when `zone` is an IANA time zone this runtime knows. */
export function validTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat(undefined, { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** The relay pipeline, or 503 while it is not running (it registers itself at boot). */
export function relay(core: Core): RelayService {
  try {
    return relayOf(core);
  } catch {
    throw unavailable('The relay pipeline is not running; try again shortly.', 'relay_unavailable');
  }
}

/** The relay pipeline when it is there; notifications that can wait use this and skip otherwise. */
export function relayIfRunning(core: Core): RelayService | undefined {
  try {
    return relayOf(core);
  } catch {
    return undefined;
  }
}

export const nowIso = (core: Core): string => core.clock.now().toISOString();
