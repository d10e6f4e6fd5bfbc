/** Configuration of an email target: the SMTP server to submit through and the envelope. */

import type { Static } from '@herald/plugin-api';
import { Secret, Type } from '@herald/plugin-api';

/** A bare address (`ops@example.org`); display names belong in `from` only. */
const ADDRESS = '^[^\\s@<>,;"]+@[^\\s@<>,;"]+$';

export const configSchema = Type.Object({
  host: Type.String({
    minLength: 1,
    maxLength: 253,
    pattern: '^[A-Za-z0-9.:\\[\\]-]+$',
    description: 'SMTP server host name',
  }),
  port: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: 65535,
      description: 'SMTP port; default 587, or 465 with security "tls"',
    }),
  ),
  security: Type.Optional(
    Type.Union([Type.Literal('starttls'), Type.Literal('tls'), Type.Literal('none')], {
      default: 'starttls',
      description:
        'starttls: upgrade a plain connection and refuse to go on without TLS; tls: implicit TLS (usually port ' +
        '465); none: no encryption',
    }),
  ),
  username: Type.Optional(
    Type.String({ minLength: 1, description: 'SMTP login; leave empty for a relay without authentication' }),
  ),
  password: Type.Optional(Secret({ minLength: 1, description: 'SMTP password or app password' })),
  from: Type.String({
    minLength: 3,
    maxLength: 320,
    pattern: '@',
    description: 'Sender, e.g. "Herald <herald@example.org>"',
  }),
  to: Type.Array(Type.String({ pattern: ADDRESS, maxLength: 320 }), {
    minItems: 1,
    maxItems: 50,
    description: 'Recipients',
  }),
  subject_prefix: Type.Optional(
    Type.String({ maxLength: 100, description: 'Put before every subject, e.g. [Herald]' }),
  ),
  allow_self_signed: Type.Optional(
    Type.Boolean({
      default: false,
      description: 'Accept a certificate that does not verify (self-signed or wrong name)',
    }),
  ),
});

export type EmailTargetConfig = Static<typeof configSchema>;

/** The port used when the configuration leaves it out. */
export const effectivePort = (cfg: Pick<EmailTargetConfig, 'port' | 'security'>): number =>
  cfg.port ?? (cfg.security === 'tls' ? 465 : 587);
