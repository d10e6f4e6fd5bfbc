/**
 * Configuration of an Apprise API target: the operator's own Apprise API server, and either a
 * configuration key saved there (stateful) or the Apprise URLs themselves (stateless).
 */

import type { ConfigProblem, Static } from '@herald/plugin-api';
import { Secret, Type } from '@herald/plugin-api';

export const configSchema = Type.Object({
  url: Type.String({
    pattern: '^https?://[^/?#]+',
    description: 'Address of the Apprise API server, e.g. http://apprise.lan:8000',
  }),
  key: Type.Optional(
    Type.String({
      pattern: '^[A-Za-z0-9_-]{1,128}$',
      description:
        'Key of a configuration saved on the server: notifies the services stored under it (/notify/<key>). Give ' +
        'this or Apprise URLs',
    }),
  ),
  // Apprise URLs carry each service's credentials (bot tokens, passwords).
  urls: Type.Optional(
    Secret({
      minLength: 1,
      maxLength: 8192,
      description:
        'Or Apprise URLs to notify, separated by spaces or commas, e.g. tgram://bottoken/chatid (kept secret)',
    }),
  ),
  tag: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 256,
      description: 'Notify only the services with these tags: "a, b" means a or b, "a b" means a and b',
    }),
  ),
  body_format: Type.Union([Type.Literal('text'), Type.Literal('markdown')], {
    default: 'text',
    description:
      'Text: plain text, which every service shows as written; Markdown: for services that render it (Apprise ' +
      'converts it to HTML where needed)',
  }),
  username: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 256,
      description: 'User name, when the server sits behind HTTP basic authentication',
    }),
  ),
  password: Type.Optional(
    Secret({ minLength: 1, maxLength: 1024, description: 'Password for that basic authentication (kept secret)' }),
  ),
});

export type AppriseApiConfig = Static<typeof configSchema>;

/**
 * Checks the schema cannot express, run when a config is saved: exactly one of `key` and `urls`,
 * the basic-authentication pair complete, and the server's base address (not an endpoint).
 */
export function validateAppriseApiConfig(cfg: AppriseApiConfig): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const hasKey = !!cfg.key;
  const hasUrls = !!cfg.urls?.trim();
  if (!hasKey && !hasUrls) {
    problems.push({
      path: '/key',
      message: 'is required unless Apprise URLs are given',
      code: 'required',
      detail: 'Give the key of a configuration saved on the Apprise API server, or the Apprise URLs to notify.',
    });
  }
  if (hasKey && hasUrls) {
    problems.push({
      path: '/urls',
      message: 'cannot be given together with a key',
      code: 'key_or_urls',
      detail: "Give either a configuration key (the server's saved services) or Apprise URLs, not both.",
    });
  }
  if (cfg.password && !cfg.username) {
    problems.push({
      path: '/username',
      message: 'is required when a password is set',
      code: 'required',
      detail: 'A password is set without a user name; set the user name too, or remove the password.',
    });
  }
  if (cfg.username && !cfg.password) {
    problems.push({
      path: '/password',
      message: 'is required when a user name is set',
      code: 'required',
      detail: 'A user name is set without a password; set the password too, or remove the user name.',
    });
  }
  let url: URL | undefined;
  try {
    url = new URL(cfg.url);
  } catch {
    problems.push({ path: '/url', message: 'is not a valid URL', code: 'format', params: { format: 'uri' } });
  }
  if (url && /\/(notify|add|get|json|cfg|del|status)(\/|$)/.test(url.pathname)) {
    problems.push({
      path: '/url',
      message: "must be the server's address, without an API path",
      code: 'base_address',
      detail:
        "Give the Apprise API server's address only (e.g. http://apprise.lan:8000, or its sub-path behind a " +
        'proxy); Herald adds /notify itself.',
    });
  }
  return problems;
}
