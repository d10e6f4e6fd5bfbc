/**
 * A fake Immich server for tests, speaking the parts of Immich's REST API the photo-library
 * provider uses, with the shapes of Immich's OpenAPI (AlbumResponseDto, AssetResponseDto,
 * UserResponseDto, SearchResponseDto) and its error body `{ message, error, statusCode }`.
 *
 * - `GET /api/server/ping` (no key), `GET /api/users/me`
 * - `GET /api/albums/:id?withoutAssets=` — `version: 2` embeds `assets`, `version: 3` omits them
 * - `POST /api/search/metadata` with `albumIds`, `page`, `size`, `visibility` (without a visibility
 *   only timeline assets are returned, as Immich 3 does)
 *
 * Listens on 127.0.0.1 with an ephemeral port. Albums can be changed from the test, and the server
 * can be made to answer an error status or to hang.
 */

import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeUser {
  id: string;
  name: string;
  email: string;
}
export interface FakeAsset {
  id: string;
  fileName: string;
  ownerId: string;
  type?: 'IMAGE' | 'VIDEO';
  visibility?: 'timeline' | 'archive';
  createdAt?: string;
}
interface FakeAlbum {
  id: string;
  name: string;
  ownerId: string;
  memberIds: string[];
  assets: FakeAsset[];
}

export interface FakeImmichOptions {
  apiKey?: string;
  version?: 2 | 3;
}

export class FakeImmich {
  readonly apiKey: string;
  /** 2: album answers embed assets; 3: they do not (use search). */
  version: 2 | 3;
  /** When set, every request (ping included) answers this status with Immich's error body. */
  failStatus: number | null = null;
  /** When true, requests are accepted and never answered. */
  hanging = false;
  /** Every request seen: method, path with query, and whether the right key came with it. */
  readonly requests: { method: string; url: string; authorized: boolean }[] = [];
  private readonly users = new Map<string, FakeUser>();
  private readonly albums = new Map<string, FakeAlbum>();
  private readonly server = createServer((req, res) => {
    void this.handle(req, res);
  });
  private me: string | undefined;

  constructor(o: FakeImmichOptions = {}) {
    this.apiKey = o.apiKey ?? 'immich-test-api-key';
    this.version = o.version ?? 2;
  }

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return this.url;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** Adds a user; the first one added is the owner of the API key. */
  addUser(user: FakeUser): FakeUser {
    this.users.set(user.id, user);
    this.me ??= user.id;
    return user;
  }

  createAlbum(a: { id?: string; name: string; ownerId: string; memberIds?: string[]; assets?: FakeAsset[] }): string {
    const id = a.id ?? randomUUID();
    this.albums.set(id, {
      id,
      name: a.name,
      ownerId: a.ownerId,
      memberIds: a.memberIds ?? [],
      assets: [...(a.assets ?? [])],
    });
    return id;
  }

  addAssets(albumId: string, assets: FakeAsset[]): void {
    this.album(albumId).assets.push(...assets);
  }

  removeAssets(albumId: string, ids: string[]): void {
    const album = this.album(albumId);
    album.assets = album.assets.filter((a) => !ids.includes(a.id));
  }

  deleteAlbum(albumId: string): void {
    this.albums.delete(albumId);
  }

  private album(id: string): FakeAlbum {
    const a = this.albums.get(id);
    if (!a) throw new Error(`fake immich has no album ${id}`);
    return a;
  }

  private userDto(id: string) {
    const u = this.users.get(id) ?? { id, name: 'Unknown', email: `${id}@example.net` };
    return {
      id: u.id,
      name: u.name,
      email: u.email,
      profileImagePath: '',
      avatarColor: 'primary',
      profileChangedAt: '2025-01-01T00:00:00.000Z',
    };
  }

  private assetDto(a: FakeAsset) {
    const created = a.createdAt ?? '2026-01-04T12:00:00.000Z';
    return {
      id: a.id,
      deviceAssetId: `${a.fileName}-${a.id.slice(0, 6)}`,
      ownerId: a.ownerId,
      deviceId: 'WEB',
      libraryId: null,
      type: a.type ?? 'IMAGE',
      originalPath: `/usr/src/app/upload/library/${a.ownerId}/2026/${a.fileName}`,
      originalFileName: a.fileName,
      originalMimeType: 'image/jpeg',
      thumbhash: '1QcSHQRnh493V4dIh4eXh1h4kJUI',
      fileCreatedAt: created,
      fileModifiedAt: created,
      localDateTime: created,
      updatedAt: created,
      isFavorite: false,
      isArchived: a.visibility === 'archive',
      isTrashed: false,
      isOffline: false,
      visibility: a.visibility ?? 'timeline',
      duration: '0:00:00.00000',
      livePhotoVideoId: null,
      people: [],
      checksum: 'c2hhMS1vZi10aGUtZmlsZQ==',
      hasMetadata: true,
      duplicateId: null,
      resized: true,
    };
  }

  private albumDto(a: FakeAlbum, withAssets: boolean) {
    const dto: Record<string, unknown> = {
      id: a.id,
      ownerId: a.ownerId,
      albumName: a.name,
      description: '',
      createdAt: '2025-12-01T10:00:00.000Z',
      updatedAt: '2026-01-05T10:00:00.000Z',
      albumThumbnailAssetId: a.assets[0]?.id ?? null,
      shared: a.memberIds.length > 0,
      hasSharedLink: false,
      albumUsers: a.memberIds.map((id) => ({ user: this.userDto(id), role: 'editor' })),
      owner: this.userDto(a.ownerId),
      assetCount: a.assets.length,
      isActivityEnabled: true,
      order: 'desc',
    };
    if (this.version === 2) dto.assets = withAssets ? a.assets.map((x) => this.assetDto(x)) : [];
    return dto;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://fake');
    const authorized = req.headers['x-api-key'] === this.apiKey;
    this.requests.push({ method: req.method ?? 'GET', url: `${url.pathname}${url.search}`, authorized });
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    if (this.hanging) return; // never answered; close() drops the connection
    if (this.failStatus !== null)
      return send(res, this.failStatus, errorBody(this.failStatus, 'Internal server error'));
    const path = url.pathname;
    if (req.method === 'GET' && path === '/api/server/ping') return send(res, 200, { res: 'pong' });
    if (!req.headers['x-api-key']) return send(res, 401, errorBody(401, 'Authentication required'));
    if (!authorized) return send(res, 401, errorBody(401, 'Invalid API key'));
    if (req.method === 'GET' && path === '/api/users/me') {
      return send(res, 200, {
        ...this.userDto(this.me ?? 'me'),
        storageLabel: 'admin',
        shouldChangePassword: false,
        isAdmin: true,
        status: 'active',
        oauthId: '',
        quotaSizeInBytes: null,
        quotaUsageInBytes: 0,
        license: null,
      });
    }
    const albumMatch = /^\/api\/albums\/([^/]+)$/.exec(path);
    if (req.method === 'GET' && albumMatch) {
      const album = this.albums.get(decodeURIComponent(albumMatch[1]!));
      if (!album) return send(res, 400, errorBody(400, 'Not found or no album.read access'));
      return send(res, 200, this.albumDto(album, url.searchParams.get('withoutAssets') !== 'true'));
    }
    if (req.method === 'POST' && path === '/api/search/metadata')
      return this.search(res, Buffer.concat(chunks).toString('utf8'));
    return send(res, 404, errorBody(404, `Cannot ${req.method} ${path}`));
  }

  private search(res: ServerResponse, raw: string): void {
    let q: { albumIds?: string[]; page?: number; size?: number; visibility?: string };
    try {
      q = JSON.parse(raw);
    } catch {
      return send(res, 400, errorBody(400, 'Unexpected token in JSON'));
    }
    const size = Math.min(q.size ?? 250, 1000);
    const page = q.page ?? 1;
    const visibility = q.visibility ?? 'timeline';
    const matching = (q.albumIds ?? [])
      .flatMap((id) => this.albums.get(id)?.assets ?? [])
      .filter((a) => (a.visibility ?? 'timeline') === visibility);
    const items = matching.slice((page - 1) * size, page * size);
    const nextPage = page * size < matching.length ? String(page + 1) : null;
    send(res, 200, {
      albums: { total: 0, count: 0, items: [], facets: [] },
      assets: {
        total: items.length,
        count: items.length,
        items: items.map((a) => this.assetDto(a)),
        facets: [],
        nextPage,
      },
    });
  }
}

function errorBody(statusCode: number, message: string) {
  const error =
    {
      400: 'Bad Request',
      401: 'Unauthorized',
      403: 'Forbidden',
      404: 'Not Found',
      500: 'Internal Server Error',
      502: 'Bad Gateway',
      503: 'Service Unavailable',
    }[statusCode] ?? 'Error';
  return { message, error, statusCode, correlationId: randomUUID().slice(0, 8) };
}

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}
