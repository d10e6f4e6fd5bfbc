/** Configuration schema of the Planka provider. */

import type { Static } from '@herald/plugin-api';
import { Secret, Type } from '@herald/plugin-api';

export const ConfigSchema = Type.Object({
  access_token: Secret({
    minLength: 16,
    description: 'The access token set on the Planka webhook; Planka sends it as `Authorization: Bearer <token>`',
  }),
  base_url: Type.Optional(
    Type.String({
      pattern: '^https?://',
      description: 'Public address of Planka, for card links (e.g. https://planka.example.net)',
    }),
  ),
});

export type PlankaConfig = Static<typeof ConfigSchema>;
