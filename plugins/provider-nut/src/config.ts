/** Instance configuration of the NUT provider. */

import type { Static } from '@herald/plugin-api';
import { Secret, Type } from '@herald/plugin-api';

export const ConfigSchema = Type.Object({
  host: Type.String({
    minLength: 1,
    maxLength: 253,
    pattern: '^[^\\s/?#@]+$',
    description: 'Host name or address of the machine running upsd.',
  }),
  port: Type.Integer({ minimum: 1, maximum: 65_535, default: 3493 }),
  ups_name: Type.String({
    minLength: 1,
    maxLength: 128,
    pattern: '^[^\\s"\\\\@]+$',
    description: 'The UPS section name in ups.conf (`upsc -l` lists them).',
  }),
  username: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 128,
      description:
        'A upsd.users user with `upsmon secondary` (or primary); leave empty for anonymous read-only access.',
    }),
  ),
  password: Type.Optional(Secret({ minLength: 1, maxLength: 256 })),
  starttls: Type.Union([Type.Literal('off'), Type.Literal('try'), Type.Literal('require')], {
    default: 'off',
    description:
      '`try` upgrades when upsd offers TLS and continues in clear text otherwise; `require` refuses clear text.',
  }),
  tls_ca: Type.Optional(
    Type.String({
      maxLength: 65_536,
      description: 'PEM certificate(s) to trust for STARTTLS, e.g. the self-signed upsd certificate.',
    }),
  ),
  low_battery_percent: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
  poll_interval_seconds: Type.Optional(
    Type.Integer({ minimum: 5, maximum: 3600, description: 'Seconds between polls; default 15.' }),
  ),
});

export type NutConfig = Static<typeof ConfigSchema>;

/** Time limits of one poll; tests shorten them through `createNutProvider`. */
export interface NutTimings {
  connectTimeoutMs: number;
  replyTimeoutMs: number;
}

export const DEFAULT_TIMINGS: NutTimings = { connectTimeoutMs: 5_000, replyTimeoutMs: 5_000 };
