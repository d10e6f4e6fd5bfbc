/** Configuration of the Uptime Kuma provider: an optional bearer secret sent as an additional header. */

import type { ConfigProblem, Static } from '@herald/plugin-api';
import { Secret, Type } from '@herald/plugin-api';

/** Shortest secret accepted. */
export const MIN_SECRET_LENGTH = 16;

/**
 * Uptime Kuma's webhook notification has no authentication of its own, but it can add headers
 * ("Additional Headers"): `bearer` expects `{"Authorization": "Bearer <secret>"}` there; `none`
 * relies on the webhook URL's token alone. Not called `auth_mode`: the web client gives that name
 * to the generic webhook's own form.
 */
export const ConfigSchema = Type.Object({
  auth: Type.Union([Type.Literal('none'), Type.Literal('bearer')], { default: 'none' }),
  secret: Type.Optional(Secret({ minLength: MIN_SECRET_LENGTH, maxLength: 1024 })),
});

export type UptimeKumaConfig = Static<typeof ConfigSchema>;

/** `bearer` needs the secret. */
export function configProblems(cfg: UptimeKumaConfig): ConfigProblem[] {
  return cfg.auth === 'bearer' && !cfg.secret
    ? [
        {
          path: '/secret',
          message: 'is required when auth is bearer',
          code: 'required',
          detail:
            `auth "bearer" needs a secret of at least ${MIN_SECRET_LENGTH} characters, the one Uptime Kuma sends in ` +
            'its Authorization header.',
        },
      ]
    : [];
}
