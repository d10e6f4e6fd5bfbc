/** The event type of the Immich provider. */
import { Type } from '@herald/plugin-api';
import type { EventSpec } from '@herald/plugin-api';

export const AlbumAssetsChangedPayload = Type.Object({
  album_id: Type.String(),
  album_name: Type.String(),
  /** At most 50; `added_count` is the total. `added_by` is the asset owner's name when known. */
  assets_added: Type.Array(Type.Object({ id: Type.String(), file_name: Type.String(), added_by: Type.Optional(Type.String()) })),
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
  },
};
