/** Configuration of a Gotify target: one application of one Gotify server. */

import type { ConfigProblem, Static } from '@herald/plugin-api';
import { Secret, Type } from '@herald/plugin-api';

export const configSchema = Type.Object({
  server_url: Type.String({
    pattern: '^https?://',
    maxLength: 2048,
    description:
      'Address of the Gotify server, e.g. https://gotify.example.net (a path such as /gotify behind a proxy is kept)',
  }),
  app_token: Secret({
    minLength: 1,
    maxLength: 512,
    description: 'Token of a Gotify application (Apps → Create application); a client token cannot send',
  }),
});

export type GotifyConfig = Static<typeof configSchema>;

/**
 * The server's base URL without a trailing slash, or undefined when it is not an http(s) URL without credentials, query
 * or fragment.
 */
export function serverBase(url: string): string | undefined {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return undefined;
  }
  if ((u.protocol !== 'http:' && u.protocol !== 'https:') || u.username || u.password || u.search || u.hash)
    return undefined;
  return u.href.replace(/\/+$/, '');
}

/**
 * The rules the schema cannot state: a parseable http(s) address and a token without spaces.
 * Problems a JSON Schema keyword describes carry that keyword as their code (`pattern` with the
 * pattern, `required`), so the web client says them in the user's language.
 */
export function validateGotifyConfig(c: GotifyConfig): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  let parsed: URL | undefined;
  try {
    parsed = new URL(c.server_url);
  } catch {
    /* reported below */
  }
  if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) {
    problems.push({
      path: '/server_url',
      code: 'pattern',
      params: { pattern: '^https?://' },
      message: 'must be an http:// or https:// address',
      detail:
        'The server address must start with http:// or https:// (for example https://gotify.example.net); ' +
        `"${String(c.server_url).slice(0, 100)}" does not.`,
    });
  } else if (parsed.username || parsed.password) {
    problems.push({
      path: '/server_url',
      code: 'url_credentials',
      message: 'must not contain a user name or password',
      detail: 'Gotify authenticates with the application token; remove the login from the server address.',
    });
  } else if (parsed.search || parsed.hash) {
    problems.push({
      path: '/server_url',
      code: 'url_query',
      message: 'must not contain a query or fragment',
      detail: 'Give the server address only; the token has a field of its own (do not paste …/message?token=… here).',
    });
  } else if (/\/message\/?$/.test(parsed.pathname)) {
    problems.push({
      path: '/server_url',
      code: 'url_endpoint',
      message: 'must be the server address, not the /message endpoint',
      detail: 'Herald adds /message itself; remove it from the server address.',
    });
  }
  if (/\s/.test(c.app_token ?? '')) {
    problems.push({
      path: '/app_token',
      code: 'pattern',
      message: 'must not contain spaces',
      detail: 'Paste the application token exactly as Gotify shows it, without spaces or line breaks.',
    });
  }
  return problems;
}
