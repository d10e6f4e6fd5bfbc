/** Configuration schema of the email provider. */

import type { Static } from '@herald/plugin-api';
import { Type } from '@herald/plugin-api';

/** A sender address (`nas@example.org`, `root@synology`) or a domain (`example.org`, `@example.org`). */
const SENDER =
  '^([^\\s@]+@[^\\s@]+|@?[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*)$';

/** Subject words that raise the severity, as shipped: edit the lists (or empty them) per provider. */
export const DEFAULT_CRITICAL_KEYWORDS = ['critical', 'emergency', 'fatal', 'failed', 'failure'];
export const DEFAULT_WARNING_KEYWORDS = ['warning', 'error', 'degraded'];

const Keywords = (defaults: string[], description: string) =>
  Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { default: defaults, maxItems: 50, description });

export const ConfigSchema = Type.Object({
  require_auth: Type.Boolean({
    default: false,
    description: "Accept mail only from senders that log in (SMTP AUTH) with this provider's token as the password",
  }),
  allowed_senders: Type.Array(Type.String({ minLength: 1, maxLength: 254, pattern: SENDER }), {
    default: [],
    maxItems: 100,
    description:
      'Envelope senders accepted (an address such as nas@example.org, or a domain such as example.org for it and ' +
      'its subdomains); empty accepts any sender',
  }),
  critical_keywords: Keywords(
    DEFAULT_CRITICAL_KEYWORDS,
    'Words in the subject that make the notification critical (whole words, any case)',
  ),
  warning_keywords: Keywords(
    DEFAULT_WARNING_KEYWORDS,
    'Words in the subject that make the notification a warning (whole words, any case)',
  ),
});

export type EmailInConfig = Static<typeof ConfigSchema>;
