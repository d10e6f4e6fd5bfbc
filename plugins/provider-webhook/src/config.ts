/** Configuration schema of the generic webhook provider. */

import type { ConfigProblem, Static } from '@herald/plugin-api';
import { Secret, Type } from '@herald/plugin-api';

export const SEVERITIES = ['info', 'warning', 'critical'] as const;
export const SeveritySchema = Type.Union([Type.Literal('info'), Type.Literal('warning'), Type.Literal('critical')]);

export const MappingSchema = Type.Object({
  title: Type.String({
    minLength: 1,
    maxLength: 500,
    description: 'Path expression (e.g. `alert.title || name`) or a `{{path}} text` template for the title',
  }),
  body: Type.Optional(
    Type.String({ maxLength: 2000, description: 'Path expression or `{{path}} text` template for the body' }),
  ),
  severity: Type.Optional(Type.String({ maxLength: 500, description: 'Path expression of the raw severity value' })),
  severity_map: Type.Optional(
    Type.Record(Type.String(), SeveritySchema, { description: 'Raw severity value → info, warning or critical' }),
  ),
  event_key: Type.Optional(
    Type.String({
      maxLength: 500,
      description: 'Path expression of a stable identifier of the event (e.g. an alert fingerprint)',
    }),
  ),
});

/**
 * `auth_mode` and `acknowledge_unauthenticated` live in this config only; the providers API also
 * shows them at the top level of the provider (`configAliases`). `checkConfig` refuses `none`
 * without the acknowledgement when a config is saved; `secret` is required for `bearer` and
 * `hmac_sha256`, which create() enforces.
 */
export const ConfigSchema = Type.Object({
  auth_mode: Type.Union([Type.Literal('none'), Type.Literal('bearer'), Type.Literal('hmac_sha256')], {
    default: 'hmac_sha256',
  }),
  acknowledge_unauthenticated: Type.Boolean({ default: false }),
  secret: Type.Optional(
    Secret({
      minLength: 16,
      maxLength: 1024,
      description: 'Shared secret for bearer or HMAC-SHA256 authentication (16 characters or more)',
    }),
  ),
  mapping: MappingSchema,
});

export type WebhookConfig = Static<typeof ConfigSchema>;

/** Config fields the providers API shows and accepts at the top level of a webhook provider. */
export const CONFIG_ALIASES = ['auth_mode', 'acknowledge_unauthenticated'];

/**
 * The rules of a saved config that its schema cannot express: `auth_mode: none` accepts requests
 * from anyone who knows the URL, so it needs `acknowledge_unauthenticated: true`.
 */
export function checkConfig(cfg: WebhookConfig): ConfigProblem[] {
  // The checks create() makes at start, made when the config is saved: a config that could never run is refused then.
  if (cfg.auth_mode !== 'none' && !cfg.secret) {
    return [
      {
        path: '/secret',
        message: `is required when auth_mode is ${cfg.auth_mode}`,
        code: 'required',
        detail:
          `auth_mode "${cfg.auth_mode}" needs a shared secret of at least ${MIN_SECRET_LENGTH} characters in ` +
          'config.secret.',
      },
    ];
  }
  if (cfg.auth_mode !== 'none' && cfg.secret && cfg.secret.length < MIN_SECRET_LENGTH) {
    return [
      {
        path: '/secret',
        message: `must be at least ${MIN_SECRET_LENGTH} characters long`,
        code: 'minLength',
        params: { limit: MIN_SECRET_LENGTH },
      },
    ];
  }
  if (cfg.auth_mode === 'none' && cfg.acknowledge_unauthenticated !== true) {
    return [
      {
        path: '/acknowledge_unauthenticated',
        message: 'must be true when auth_mode is none',
        code: 'unauthenticated_not_acknowledged',
        detail:
          'auth_mode "none" accepts requests from anyone who knows the URL; set acknowledge_unauthenticated to ' +
          'true to confirm, or choose bearer or hmac_sha256.',
      },
    ];
  }
  return [];
}
export type MappingConfig = Static<typeof MappingSchema>;
export type Severity = (typeof SEVERITIES)[number];

/** Shortest secret accepted for the authenticated modes. */
export const MIN_SECRET_LENGTH = 16;
