/**
 * Addresses with a login in them (`http://user:pass@host`, `mqtt://token@broker`) in the plain,
 * non-secret fields of a provider's or target's config. Such a field is stored in clear, shown in
 * every API answer and copied into backups without secrets, so the password would be too: a save
 * is refused (422 `url_credentials` on the field) with a sentence naming the kind's secret fields,
 * the place for credentials; a messaging bot's `api_root` likewise (its token is its credential). A
 * value stored before this rule is shown with the login masked, and log lines mask it anywhere
 * (logging/redact.ts).
 */

import { unprocessable } from '../../http/problem.ts';
import type { ConfigProblem } from '../../plugin-api/index.ts';

/** `scheme://` then user info up to `@`, before any path, query or fragment. */
const WITH_LOGIN = /^\s*[a-z][a-z0-9+.-]{0,31}:\/\/[^/?#\s@]*@/i;
/** What a masked login looks like in an answer. */
export const MASKED_LOGIN = '********';

/** The user name or password `value` carries as an address, or undefined. */
function login(value: string): { username: string; password: string } | undefined {
  if (!WITH_LOGIN.test(value)) return undefined;
  try {
    const u = new URL(value.trim());
    return u.username || u.password ? { username: u.username, password: u.password } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Visits each plain string of `config` with its dot path (`a.b`, `list[]`, as `secretPaths` names them) and JSON
 * pointer.
 */
function strings(
  value: unknown,
  secret: ReadonlySet<string>,
  fn: (s: string, pointer: string, set: (v: string) => void) => void,
  dot = '',
  pointer = '',
  depth = 0,
): void {
  if (depth > 8 || (dot && secret.has(dot))) return;
  if (Array.isArray(value)) {
    value.forEach((v, i) => {
      if (typeof v === 'string')
        fn(v, `${pointer}/${i}`, (x) => {
          value[i] = x;
        });
      else strings(v, secret, fn, `${dot}[]`, `${pointer}/${i}`, depth + 1);
    });
    return;
  }
  if (!value || typeof value !== 'object') return;
  const o = value as Record<string, unknown>;
  for (const [k, v] of Object.entries(o)) {
    const path = dot ? `${dot}.${k}` : k;
    if (secret.has(path)) continue;
    const at = `${pointer}/${k.replaceAll('~', '~0').replaceAll('/', '~1')}`;
    if (typeof v === 'string')
      fn(v, at, (x) => {
        o[k] = x;
      });
    else strings(v, secret, fn, path, at, depth + 1);
  }
}

/** The config's plain fields holding an address with a user name or password, as problems on those fields. */
export function urlCredentialProblems(
  config: Record<string, unknown>,
  secretPaths: readonly string[],
): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const secretFields = secretPaths.map((p) => p.replaceAll('[]', ''));
  const where = secretFields.length
    ? `put it in ${secretFields.length === 1 ? 'the secret field' : 'the secret fields'} ` +
      `${secretFields.join(', ')}, which are stored sealed and shown masked`
    : 'this kind has no secret field for a login, so it cannot sign in through the address either';
  strings(config, new Set(secretPaths), (s, pointer) => {
    const found = login(s);
    if (!found) return;
    const field = pointer.slice(1).replaceAll('/', '.');
    problems.push({
      path: pointer,
      code: 'url_credentials',
      message: 'must not contain a user name or password',
      detail:
        `The address in ${field} contains a ${found.password ? 'password' : 'user name'}, which would be ` +
        `stored and shown in clear. Remove it from the address (keep scheme://host:port/path) and ${where}.`,
    });
  });
  return problems;
}

/** A copy of `config` with the login of every such address replaced by the mask (configs stored before the rule). */
export function maskUrlCredentials(
  config: Record<string, unknown>,
  secretPaths: readonly string[],
): Record<string, unknown> {
  let copy: Record<string, unknown> | undefined;
  strings(config, new Set(secretPaths), (s) => {
    if (login(s)) copy ??= structuredClone(config);
  });
  if (!copy) return config;
  strings(copy, new Set(secretPaths), (s, _pointer, set) => {
    if (login(s)) set(maskUrlLogin(s)!);
  });
  return copy;
}

/** `value` with the login of its address masked (a bot's `api_root` stored before the rule). */
export function maskUrlLogin(value: string | null): string | null {
  return value && login(value)
    ? value.replace(/^(\s*[a-z][a-z0-9+.-]{0,31}:\/\/)[^/?#\s@]*@/i, `$1${MASKED_LOGIN}@`)
    : value;
}

/** 422 `url_credentials` when a request field (`api_root`) holds an address with a login. */
export function refuseUrlLogin(value: string | null | undefined, field: string): void {
  const found = value ? login(value) : undefined;
  if (!found) return;
  throw unprocessable(
    `The address in ${field} contains a ${found.password ? 'password' : 'user name'}, which would be ` +
      `stored and shown in clear. Remove it from the address (keep scheme://host:port/path); the bot's token ` +
      'is its only credential.',
    [{ path: `body/${field}`, message: 'must not contain a user name or password' }],
    'url_credentials',
  );
}

/**
 * A plugin's own problems with the config, then the addresses with a login it did not already report (gotify and ntfy
 * check their own).
 */
export function withUrlCredentialProblems(
  own: ConfigProblem[],
  config: Record<string, unknown>,
  secretPaths: readonly string[],
): ConfigProblem[] {
  return [...own, ...urlCredentialProblems(config, secretPaths).filter((p) => !own.some((o) => o.path === p.path))];
}
