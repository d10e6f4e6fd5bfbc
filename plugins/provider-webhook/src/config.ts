/** Configuration schema of the generic webhook provider. */
import { Type, Secret } from '@herald/plugin-api';
import type { Static } from '@herald/plugin-api';

export const SEVERITIES = ['info', 'warning', 'critical'] as const;
export const SeveritySchema = Type.Union([Type.Literal('info'), Type.Literal('warning'), Type.Literal('critical')]);

export const MappingSchema = Type.Object({
  title: Type.String({ minLength: 1, maxLength: 500, description: 'Path expression (e.g. `alert.title || name`) or a `{{path}} text` template for the title' }),
  body: Type.Optional(Type.String({ maxLength: 2000, description: 'Path expression or `{{path}} text` template for the body' })),
  severity: Type.Optional(Type.String({ maxLength: 500, description: 'Path expression of the raw severity value' })),
  severity_map: Type.Optional(Type.Record(Type.String(), SeveritySchema, { description: 'Raw severity value → info, warning or critical' })),
  event_key: Type.Optional(Type.String({ maxLength: 500, description: 'Path expression of a stable identifier of the event (e.g. an alert fingerprint)' })),
});

/**
 * The core passes the provider's `auth_mode` and `acknowledge_unauthenticated` inside this config.
 * `secret` is required for `bearer` and `hmac_sha256`; create() enforces it.
 */
export const ConfigSchema = Type.Object({
  auth_mode: Type.Union([Type.Literal('none'), Type.Literal('bearer'), Type.Literal('hmac_sha256')], { default: 'hmac_sha256' }),
  acknowledge_unauthenticated: Type.Boolean({ default: false }),
  secret: Type.Optional(Secret({ description: 'Shared secret for bearer or HMAC-SHA256 authentication (16 characters or more)' })),
  mapping: MappingSchema,
});

export type WebhookConfig = Static<typeof ConfigSchema>;
export type MappingConfig = Static<typeof MappingSchema>;
export type Severity = (typeof SEVERITIES)[number];

/** Shortest secret accepted for the authenticated modes. */
export const MIN_SECRET_LENGTH = 16;
