/**
 * One poll: each album followed by an enabled tracker is read once and compared with its
 * baseline. The first sight of an album only records the baseline. A missing album is logged and
 * skipped so the others still notify, then the poll reports failure naming it.
 */
import type { EmittedEvent, InstanceStore, PluginLogger, PollContext } from '@herald/plugin-api';
import { fetchAlbum } from './album.ts';
import type { ImmichClient } from './client.ts';
import { ImmichNotFoundError } from './client.ts';
import type { Baseline } from './diff.ts';
import { baselineOf, diffAlbum } from './diff.ts';

export interface PollDeps {
  client: ImmichClient;
  store: InstanceStore;
  log: PluginLogger;
  emit(event: EmittedEvent): Promise<unknown>;
  /**
   * The instance's memory of its album index between polls: only this instance writes it, so after the first poll it
   * is read from here instead of the store.
   */
  memo?: { albums?: string[] };
}

/** Store key listing the albums that have a baseline, so untracked ones can be forgotten. */
const INDEX_KEY = 'albums';
const baselineKey = (albumId: string) => `album:${albumId}`;

/** Album id → ids of the enabled trackers following it. */
export function albumsOf(trackers: PollContext['trackers']): Map<string, string[]> {
  const byAlbum = new Map<string, string[]>();
  for (const t of trackers) {
    if (!t.enabled || !Array.isArray(t.config.album_ids)) continue;
    for (const id of new Set(t.config.album_ids as unknown[])) {
      if (typeof id !== 'string' || !id) continue;
      byAlbum.set(id, [...(byAlbum.get(id) ?? []), t.id]);
    }
  }
  return byAlbum;
}

/**
 * Drops baselines of albums no enabled tracker follows any more: following one again starts from
 * a fresh silent baseline instead of reporting everything that happened in between. The index is
 * rewritten only when the followed albums changed.
 */
async function forgetUntracked(
  store: InstanceStore,
  tracked: Set<string>,
  memo: { albums?: string[] } = {},
): Promise<void> {
  const known = memo.albums ?? (await store.get<string[]>(INDEX_KEY)) ?? [];
  for (const id of known) if (!tracked.has(id)) await store.delete(baselineKey(id));
  // Written only when the set of albums changed: most polls follow the same albums as the last one.
  if (known.length !== tracked.size || known.some((id) => !tracked.has(id))) await store.set(INDEX_KEY, [...tracked]);
  memo.albums = [...tracked];
}

export async function pollAlbums(deps: PollDeps, ctx: PollContext): Promise<void> {
  const { client, store, log } = deps;
  const byAlbum = albumsOf(ctx.trackers);
  await forgetUntracked(store, new Set(byAlbum.keys()), deps.memo);
  const missing: string[] = [];
  for (const [albumId, trackerIds] of byAlbum) {
    if (ctx.signal.aborted) return;
    let album;
    try {
      album = await fetchAlbum(client, albumId, ctx.signal);
    } catch (err) {
      if (!(err instanceof ImmichNotFoundError)) throw err;
      log.warn(
        { album_id: albumId, status: err.status, reason: err.message },
        'Immich album not found or not shared with the API key owner',
      );
      missing.push(albumId);
      continue;
    }
    const baseline = await store.get<Baseline>(baselineKey(albumId));
    if (!baseline) {
      log.info({ album_id: albumId, assets: album.assets.size }, 'album baseline recorded');
      await store.set(baselineKey(albumId), baselineOf(album));
      continue;
    }
    const change = diffAlbum(album, baseline, client.webUrl(`/albums/${encodeURIComponent(album.id)}`));
    if (!change) continue;
    // Emit first: if it fails the baseline stays and the next poll reports the change again.
    await deps.emit({ type: 'album_assets_changed', payload: { ...change }, trackerIds });
    await store.set(baselineKey(albumId), baselineOf(album));
  }
  if (missing.length)
    throw new Error(`Immich album${missing.length > 1 ? 's' : ''} not found or not accessible: ${missing.join(', ')}`);
}
