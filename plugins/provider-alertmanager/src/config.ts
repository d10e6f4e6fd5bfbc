/** Configuration of the Alertmanager provider: how Alertmanager proves its requests. */

import type { ConfigProblem, Static } from '@herald/plugin-api';
import { Secret, Type } from '@herald/plugin-api';

/** Shortest secret accepted for `bearer` and `basic`. */
export const MIN_SECRET_LENGTH = 16;

/**
 * `auth` is how Alertmanager's `http_config` authenticates: `bearer` (`authorization:
 * {credentials}`, sent as `Authorization: Bearer <secret>`), `basic` (`basic_auth: {username,
 * password}`) or `none` (the webhook URL's token is the only secret). The field is not called
 * `auth_mode`: the web client gives that name to the generic webhook's own form.
 */
export const ConfigSchema = Type.Object({
  auth: Type.Union([Type.Literal('bearer'), Type.Literal('basic'), Type.Literal('none')], { default: 'bearer' }),
  username: Type.Optional(Type.String({ minLength: 1, maxLength: 256, pattern: '^[^:]*$' })),
  secret: Type.Optional(Secret({ minLength: MIN_SECRET_LENGTH, maxLength: 1024 })),
});

export type AlertmanagerConfig = Static<typeof ConfigSchema>;

/** The rules the schema cannot express: `bearer` needs a secret, `basic` a user name and a password. */
export function configProblems(cfg: AlertmanagerConfig): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  if (cfg.auth !== 'none' && !cfg.secret) {
    problems.push({
      path: '/secret',
      message: `is required when auth is ${cfg.auth}`,
      code: 'required',
      detail:
        `auth "${cfg.auth}" needs a secret of at least ${MIN_SECRET_LENGTH} characters, the same one Alertmanager ` +
        'sends.',
    });
  }
  if (cfg.auth === 'basic' && !cfg.username) {
    problems.push({
      path: '/username',
      message: 'is required when auth is basic',
      code: 'required',
      detail: 'auth "basic" needs the user name Alertmanager sends in basic_auth.',
    });
  }
  return problems;
}
