/** Configuration and tracker schemas of the Immich provider. */

import type { Static } from '@herald/plugin-api';
import { Secret, Type } from '@herald/plugin-api';

export const ConfigSchema = Type.Object({
  base_url: Type.String({
    pattern: '^https?://',
    description: 'Address of the Immich server, e.g. https://photos.example.net',
  }),
  api_key: Secret({
    minLength: 1,
    description:
      'An Immich API key with album.read and asset.read (user.read optional, used to check the key at start)',
  }),
  poll_interval_seconds: Type.Optional(
    Type.Integer({ minimum: 30, maximum: 86_400, description: 'Seconds between polls; default 60' }),
  ),
  timeout_seconds: Type.Integer({
    minimum: 1,
    maximum: 120,
    default: 15,
    description: 'Time limit of one request to Immich',
  }),
});

export const TrackerSchema = Type.Object({
  album_ids: Type.Array(Type.String({ minLength: 1, maxLength: 100 }), {
    minItems: 1,
    maxItems: 100,
    description: 'Ids of the albums to follow (the last part of the album URL)',
  }),
});

export type ImmichConfig = Static<typeof ConfigSchema>;
export type ImmichTracker = Static<typeof TrackerSchema>;
