/** The event type of the Immich provider. */

import type { EventSpec } from '@herald/plugin-api';
import { Type } from '@herald/plugin-api';

export const AlbumAssetsChangedPayload = Type.Object({
  album_id: Type.String(),
  album_name: Type.String(),
  /** At most 50; `added_count` is the total. `added_by` is the asset owner's name when known. */
  assets_added: Type.Array(
    Type.Object({ id: Type.String(), file_name: Type.String(), added_by: Type.Optional(Type.String()) }),
  ),
  /** At most 50; `removed_count` is the total. */
  assets_removed: Type.Array(Type.Object({ id: Type.String(), file_name: Type.Optional(Type.String()) })),
  added_count: Type.Integer({ minimum: 0 }),
  removed_count: Type.Integer({ minimum: 0 }),
  album_url: Type.String(),
});

export const events: Record<string, EventSpec> = {
  album_assets_changed: {
    payload: AlbumAssetsChangedPayload,
    quietHours: 'defer',
    severity: 'info',
    description: 'Photos or videos were added to or removed from a followed album',
    example: {
      album_id: 'b3c1d2e4-0000-4000-8000-000000000001',
      album_name: 'Summer trip',
      assets_added: [
        { id: 'a1', file_name: 'IMG_2041.jpg', added_by: 'Alice' },
        { id: 'a2', file_name: 'IMG_2042.jpg', added_by: 'Alice' },
      ],
      assets_removed: [],
      added_count: 2,
      removed_count: 0,
      album_url: 'https://photos.example.net/albums/b3c1d2e4-0000-4000-8000-000000000001',
    },
  },
};
