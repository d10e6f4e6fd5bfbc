/**
 * Compares an album with the baseline kept in the instance store and builds the
 * `album_assets_changed` payload. The baseline maps asset id → file name so that removed assets
 * can still be named.
 */
import type { AlbumSnapshot } from './album.ts';

export interface Baseline {
  assets: Record<string, string>;
}

/** Assets listed in one event; the counts carry the totals. */
export const MAX_LISTED = 50;

export interface AddedAsset {
  id: string;
  file_name: string;
  added_by?: string;
}
export interface RemovedAsset {
  id: string;
  file_name?: string;
}

export interface AlbumChange {
  album_id: string;
  album_name: string;
  assets_added: AddedAsset[];
  assets_removed: RemovedAsset[];
  added_count: number;
  removed_count: number;
  album_url: string;
}

export function baselineOf(album: AlbumSnapshot): Baseline {
  const assets: Record<string, string> = {};
  for (const [id, a] of album.assets) assets[id] = a.fileName;
  return { assets };
}

/** The change since `baseline`, or undefined when the asset set is the same. */
export function diffAlbum(album: AlbumSnapshot, baseline: Baseline, albumUrl: string): AlbumChange | undefined {
  const added: AddedAsset[] = [];
  for (const [id, a] of album.assets) {
    if (Object.hasOwn(baseline.assets, id)) continue;
    // Immich does not record who added an asset to an album; the asset's owner is the closest fact.
    const by = a.ownerName ?? (a.ownerId ? album.users.get(a.ownerId) : undefined);
    added.push(by ? { id, file_name: a.fileName, added_by: by } : { id, file_name: a.fileName });
  }
  const removed: RemovedAsset[] = [];
  for (const [id, fileName] of Object.entries(baseline.assets)) {
    if (!album.assets.has(id)) removed.push(fileName ? { id, file_name: fileName } : { id });
  }
  if (!added.length && !removed.length) return undefined;
  return {
    album_id: album.id,
    album_name: album.name,
    assets_added: added.slice(0, MAX_LISTED),
    assets_removed: removed.slice(0, MAX_LISTED),
    added_count: added.length,
    removed_count: removed.length,
    album_url: albumUrl,
  };
}
