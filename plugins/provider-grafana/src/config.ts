/** Configuration of the Grafana provider: how Grafana's webhook contact point proves its requests. */

import type { ConfigProblem, Static } from '@herald/plugin-api';
import { Secret, Type } from '@herald/plugin-api';

/** Shortest secret accepted. */
export const MIN_SECRET_LENGTH = 16;

const HEADER_NAME = { minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9-]+$' };

/**
 * `auth` follows the contact point's optional settings: `hmac` (HMAC Signature: Secret, Header,
 * Timestamp header), `bearer` (Authorization Header: scheme Bearer, credentials), `basic` (HTTP
 * Basic Authentication) or `none`. Not called `auth_mode`: the web client gives that name to the
 * generic webhook's own form.
 */
export const ConfigSchema = Type.Object({
  auth: Type.Union([Type.Literal('bearer'), Type.Literal('hmac'), Type.Literal('basic'), Type.Literal('none')], {
    default: 'bearer',
  }),
  username: Type.Optional(Type.String({ minLength: 1, maxLength: 256, pattern: '^[^:]*$' })),
  secret: Type.Optional(Secret({ minLength: MIN_SECRET_LENGTH, maxLength: 1024 })),
  signature_header: Type.Optional(Type.String(HEADER_NAME)),
  timestamp_header: Type.Optional(Type.String(HEADER_NAME)),
});

export type GrafanaConfig = Static<typeof ConfigSchema>;

/** The rules the schema cannot express: every mode but `none` needs the secret, `basic` a user name. */
export function configProblems(cfg: GrafanaConfig): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  if (cfg.auth !== 'none' && !cfg.secret) {
    problems.push({
      path: '/secret',
      message: `is required when auth is ${cfg.auth}`,
      code: 'required',
      detail:
        `auth "${cfg.auth}" needs a secret of at least ${MIN_SECRET_LENGTH} characters, the same one the Grafana ` +
        'contact point uses.',
    });
  }
  if (cfg.auth === 'basic' && !cfg.username) {
    problems.push({
      path: '/username',
      message: 'is required when auth is basic',
      code: 'required',
      detail: 'auth "basic" needs the user name of the contact point\'s HTTP Basic Authentication.',
    });
  }
  return problems;
}
