/** Configuration schema of the code host provider. */

import type { Static } from '@herald/plugin-api';
import { Secret, Type } from '@herald/plugin-api';

export const HOSTS = ['github', 'gitea', 'forgejo'] as const;
export type Host = (typeof HOSTS)[number];

export const ConfigSchema = Type.Object({
  host: Type.Union([Type.Literal('github'), Type.Literal('gitea'), Type.Literal('forgejo')], {
    description: 'Which service sends the webhooks',
  }),
  webhook_secret: Secret({
    minLength: 16,
    description: 'The secret entered in the webhook settings of the repository or organization',
  }),
  branches: Type.Optional(
    Type.Array(Type.String({ minLength: 1, maxLength: 200 }), {
      maxItems: 50,
      description:
        'Only pushes to these branches notify; `*` matches any run of characters (e.g. `release/*`). Empty or ' +
        'absent: every branch.',
    }),
  ),
});

export type CodehostConfig = Static<typeof ConfigSchema>;
