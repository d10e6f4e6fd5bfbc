/**
 * Reads an album and the ids of its assets. Immich up to 2.x embeds the assets in
 * `GET /api/albums/{id}` (unless `withoutAssets=true`); Immich 3 removed that list, so the assets
 * then come from `POST /api/search/metadata` filtered by `albumIds`, page by page.
 */
import { NotReadyError } from '@herald/plugin-api';
import type { ImmichClient } from './client.ts';

/** One asset as the provider needs it. */
export interface AlbumAsset {
  id: string;
  fileName: string;
  ownerId?: string;
  ownerName?: string;
}

export interface AlbumSnapshot {
  id: string;
  name: string;
  /** Asset id → asset, in the order Immich listed them. */
  assets: Map<string, AlbumAsset>;
  /** User id → display name of the album's owner and members. */
  users: Map<string, string>;
}

type Json = Record<string, unknown>;
const isObj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

const PAGE_SIZE = 1000;
const MAX_PAGES = 200;

function userName(u: unknown): [string, string] | undefined {
  if (!isObj(u) || !str(u.id)) return undefined;
  return [u.id as string, str(u.name) ?? str(u.email) ?? (u.id as string)];
}

/** Maps an AssetResponseDto; unexpected entries make the whole snapshot unreliable. */
function asset(a: unknown): AlbumAsset {
  if (!isObj(a) || !str(a.id))
    throw new NotReadyError('Immich listed an asset without an id; not comparing this album');
  const owner = userName(a.owner);
  return {
    id: a.id as string,
    fileName: str(a.originalFileName) ?? '',
    ownerId: str(a.ownerId),
    ownerName: owner?.[1],
  };
}

async function searchAssets(
  client: ImmichClient,
  albumId: string,
  visibility: string | undefined,
  signal: AbortSignal,
): Promise<unknown[]> {
  const items: unknown[] = [];
  let page: number | null = 1;
  for (let n = 0; page !== null; n++) {
    if (n >= MAX_PAGES)
      throw new NotReadyError(`album ${albumId} has more than ${MAX_PAGES * PAGE_SIZE} assets; not comparing it`);
    const body: Json = { albumIds: [albumId], page, size: PAGE_SIZE };
    if (visibility) body.visibility = visibility;
    const res = await client.post<Json>('/search/metadata', body, signal);
    const assets = isObj(res) && isObj(res.assets) ? res.assets : undefined;
    if (!assets || !Array.isArray(assets.items))
      throw new NotReadyError('unexpected answer from Immich search: no assets.items');
    items.push(...assets.items);
    const next = assets.nextPage;
    page = next === null || next === undefined || next === '' ? null : Number(next);
    if (page !== null && !Number.isInteger(page))
      throw new NotReadyError('unexpected answer from Immich search: bad nextPage');
  }
  return items;
}

/**
 * The album with all its assets. Immich 3's search returns timeline assets unless asked for a
 * visibility, so when the count falls short of `assetCount` the archived ones are fetched too.
 */
export async function fetchAlbum(client: ImmichClient, albumId: string, signal: AbortSignal): Promise<AlbumSnapshot> {
  const album = await client.get<Json>(`/albums/${encodeURIComponent(albumId)}?withoutAssets=false`, signal);
  if (!isObj(album) || !str(album.id)) throw new NotReadyError(`unexpected answer from Immich for album ${albumId}`);
  const users = new Map<string, string>();
  for (const u of [
    album.owner,
    ...(Array.isArray(album.albumUsers) ? album.albumUsers.map((m) => (isObj(m) ? m.user : undefined)) : []),
  ]) {
    const entry = userName(u);
    if (entry) users.set(...entry);
  }
  let listed: unknown[];
  if (Array.isArray(album.assets)) listed = album.assets;
  else {
    listed = await searchAssets(client, albumId, undefined, signal);
    const expected = typeof album.assetCount === 'number' ? album.assetCount : 0;
    if (listed.length < expected) listed = listed.concat(await searchAssets(client, albumId, 'archive', signal));
  }
  const assets = new Map<string, AlbumAsset>();
  for (const a of listed) {
    const mapped = asset(a);
    if (!assets.has(mapped.id)) assets.set(mapped.id, mapped);
  }
  return { id: album.id as string, name: str(album.albumName) ?? '', assets, users };
}
