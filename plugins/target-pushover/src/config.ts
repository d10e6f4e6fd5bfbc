/** Configuration of a Pushover target: one user (or group) key, sent to through one application. */

import type { ConfigProblem, Static } from '@herald/plugin-api';
import { Secret, Type } from '@herald/plugin-api';

/** Pushover user, group and application keys: 30 characters of A–Z, a–z, 0–9 (case-sensitive). */
export const KEY_PATTERN = '^[A-Za-z0-9]{30}$';
export const DEVICE_PATTERN = '^[A-Za-z0-9_-]{1,25}(,[A-Za-z0-9_-]{1,25})*$';
export const SOUND_PATTERN = '^[A-Za-z0-9_-]{1,20}$';

export const configSchema = Type.Object({
  user_key: Secret({
    pattern: KEY_PATTERN,
    description: 'Your user key (or a group key): 30 letters and digits, shown on the Pushover dashboard',
  }),
  app_token: Secret({
    pattern: KEY_PATTERN,
    description:
      'API token of your Pushover application (pushover.net → Create an Application/API Token): 30 letters and digits',
  }),
  device: Type.Optional(
    Type.String({
      pattern: DEVICE_PATTERN,
      maxLength: 260,
      description: 'Only these devices, by their Pushover names, comma-separated (e.g. phone,tablet); empty for all',
    }),
  ),
  sound: Type.Optional(
    Type.String({
      pattern: SOUND_PATTERN,
      description:
        "A Pushover sound (e.g. pushover, siren, none, or a custom sound's name); empty for the user's default",
    }),
  ),
  api_root: Type.String({
    default: 'https://api.pushover.net',
    pattern: '^https?://',
    maxLength: 2048,
    description: 'Address of the Pushover API; change only for a proxy in between',
  }),
});

export type PushoverConfig = Static<typeof configSchema>;

/**
 * The API root without a trailing slash, or undefined when it is not an http(s) URL without credentials, query or
 * fragment.
 */
export function apiBase(url: string): string | undefined {
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
 * The rules of the schema repeated with clear words, and the API root's form.
 * Problems a JSON Schema keyword describes carry that keyword as their code (`pattern` with the
 * pattern, `required`), so the web client says them in the user's language.
 */
export function validatePushoverConfig(c: PushoverConfig): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const key = new RegExp(KEY_PATTERN);
  if (!key.test(c.user_key ?? '')) {
    problems.push({
      path: '/user_key',
      code: 'pattern',
      params: { pattern: KEY_PATTERN },
      message: 'must be 30 letters and digits',
      detail:
        'Copy the user key from the top of your Pushover dashboard (or a group key): exactly 30 letters and digits.',
    });
  }
  if (!key.test(c.app_token ?? '')) {
    problems.push({
      path: '/app_token',
      code: 'pattern',
      params: { pattern: KEY_PATTERN },
      message: 'must be 30 letters and digits',
      detail: "Copy the API token from your application's page on pushover.net: exactly 30 letters and digits.",
    });
  }
  if (c.device !== undefined && !new RegExp(DEVICE_PATTERN).test(c.device)) {
    problems.push({
      path: '/device',
      code: 'pattern',
      params: { pattern: DEVICE_PATTERN },
      message: 'must be device names of up to 25 letters, digits, - or _, separated by commas',
      detail: 'Give device names as Pushover lists them, e.g. phone or phone,tablet.',
    });
  }
  if (c.sound !== undefined && !new RegExp(SOUND_PATTERN).test(c.sound)) {
    problems.push({
      path: '/sound',
      code: 'pattern',
      params: { pattern: SOUND_PATTERN },
      message: 'must be a sound name of up to 20 letters, digits, - or _',
      detail: 'Give a sound name such as pushover, siren or none.',
    });
  }
  let parsed: URL | undefined;
  try {
    parsed = new URL(c.api_root);
  } catch {
    /* reported below */
  }
  if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) {
    problems.push({
      path: '/api_root',
      code: 'pattern',
      params: { pattern: '^https?://' },
      message: 'must be an http:// or https:// address',
      detail:
        'The API address must start with http:// or https:// (https://api.pushover.net unless a proxy is in between).',
    });
  } else if (parsed.username || parsed.password || parsed.search || parsed.hash) {
    problems.push({
      path: '/api_root',
      code: 'url_form',
      message: 'must be an address without login, query or fragment',
      detail: 'Give the API address only, e.g. https://api.pushover.net.',
    });
  }
  return problems;
}
