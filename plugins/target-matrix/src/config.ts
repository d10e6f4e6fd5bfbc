/** Configuration of a Matrix room target. */

import type { Static } from '@herald/plugin-api';
import { Secret, Type } from '@herald/plugin-api';

export const configSchema = Type.Object({
  homeserver_url: Type.String({
    pattern: '^https?://[^/?#]+(/[^?#]*)?$',
    description:
      'Client-server API base URL of the homeserver, e.g. https://matrix.example.org (not the server name after ' +
      'the colon)',
  }),
  access_token: Secret({
    minLength: 1,
    description:
      'Access token of the account that posts (a dedicated bot account is best). For an encrypted room, give each ' +
      'target a token of its own: each login is a device, and the target keeps the keys of that device',
  }),
  room_id: Type.String({
    pattern: '^![^:]+:.+$',
    description:
      'Internal room id, e.g. !AbCdEf:example.org (Room settings → Advanced); the account must have joined it',
  }),
});

export type MatrixTargetConfig = Static<typeof configSchema>;
