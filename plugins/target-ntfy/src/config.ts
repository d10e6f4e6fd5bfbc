/** Configuration of an ntfy target: one topic on one ntfy server. */

import type { ConfigProblem, Static } from '@herald/plugin-api';
import { Secret, Type } from '@herald/plugin-api';

/** ntfy's own rule for topic names (the server's `topicRegex`). */
export const TOPIC_PATTERN = '^[-_A-Za-z0-9]{1,64}$';

export const configSchema = Type.Object({
  server_url: Type.String({
    default: 'https://ntfy.sh',
    pattern: '^https?://',
    maxLength: 2048,
    description: 'Address of the ntfy server, e.g. https://ntfy.sh or https://ntfy.example.net',
  }),
  // The topic is a secret: on a server without access control (ntfy.sh) whoever knows it can read
  // every message, and a Herald ntfy provider takes its token as the topic.
  topic: Secret({
    pattern: TOPIC_PATTERN,
    description:
      'Topic to publish to: 1–64 letters, digits, - or _ (e.g. herald_alerts_7f3k); kept secret, since anyone who ' +
      'knows it can subscribe',
  }),
  token: Type.Optional(
    Secret({
      minLength: 1,
      maxLength: 512,
      description:
        'Access token (tk_…) for a protected topic; leave empty to use a user name and password, or no login',
    }),
  ),
  username: Type.Optional(
    Type.String({ minLength: 1, maxLength: 256, description: 'User name for a protected topic (with the password)' }),
  ),
  password: Type.Optional(Secret({ minLength: 1, maxLength: 512, description: 'Password of that user' })),
  markdown: Type.Boolean({
    default: false,
    description: 'Send Markdown; only the ntfy web app renders it, the phone apps show the raw text',
  }),
});

export type NtfyConfig = Static<typeof configSchema>;

/** The server's base URL without a trailing slash, or undefined when it is not an http(s) URL without credentials. */
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
 * The rules the schema cannot state: a parseable server address, a legal topic, one way to log in.
 * Problems a JSON Schema keyword describes carry that keyword as their code (`pattern` with the
 * pattern, `required`), so the web client says them in the user's language.
 */
export function validateNtfyConfig(c: NtfyConfig): ConfigProblem[] {
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
        'The server address must start with http:// or https:// (for example https://ntfy.sh); ' +
        `"${String(c.server_url).slice(0, 100)}" does not.`,
    });
  } else if (parsed.username || parsed.password) {
    problems.push({
      path: '/server_url',
      code: 'url_credentials',
      message: 'must not contain a user name or password',
      detail:
        'Put the login into the username and password fields (or use an access token) instead of the server address.',
    });
  } else if (parsed.search || parsed.hash) {
    problems.push({
      path: '/server_url',
      code: 'url_query',
      message: 'must not contain a query or fragment',
      detail: 'Give the server address only, e.g. https://ntfy.example.net; the topic has a field of its own.',
    });
  }
  if (!new RegExp(TOPIC_PATTERN).test(c.topic ?? '')) {
    problems.push({
      path: '/topic',
      code: 'pattern',
      params: { pattern: TOPIC_PATTERN },
      message: 'must be 1–64 letters, digits, - or _',
      detail: 'ntfy topic names are 1 to 64 characters of A–Z, a–z, 0–9, - and _ (no spaces, slashes or dots).',
    });
  }
  if (c.token && (c.username || c.password)) {
    problems.push({
      path: '/token',
      code: 'auth_conflict',
      message: 'cannot be combined with a user name and password',
      detail: 'Use either an access token or a user name and password, not both.',
    });
  } else if (c.username && !c.password) {
    problems.push({
      path: '/password',
      code: 'required',
      message: 'is required with a user name',
      detail: 'A user name needs its password.',
    });
  } else if (c.password && !c.username) {
    problems.push({
      path: '/username',
      code: 'required',
      message: 'is required with a password',
      detail: 'A password needs its user name.',
    });
  }
  return problems;
}
