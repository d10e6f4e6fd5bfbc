/**
 * A loopback fake Matrix homeserver speaking the client-server API (v3), built from the Matrix
 * specification, with Synapse's error bodies. It serves what the target and a matrix-js-sdk client
 * with Rust crypto call:
 * - `GET /_matrix/client/versions` and `GET|POST /login` (password) without a token; everything
 *   else needs `Authorization: Bearer` (401 `M_MISSING_TOKEN` / `M_UNKNOWN_TOKEN` with `soft_logout`).
 * - `GET /account/whoami` → `{user_id, device_id, is_guest}` (each token belongs to one device).
 * - `PUT /rooms/{roomId}/send/{eventType}/{txnId}` → `{event_id}`; a repeated txnId from the same
 *   access token returns the first event id and stores nothing new. An edit (`m.relates_to` with
 *   `rel_type: m.replace`) must name an event of the same room, sender and type that is not an edit
 *   itself, and (in the clear) carry `m.new_content` (400 `M_BAD_JSON` otherwise); an encrypted edit
 *   keeps only `m.relates_to` in the clear, as the spec's end-to-end rules say.
 * - Room state: `GET /rooms/{id}/state`, `GET /rooms/{id}/state/{type}/{stateKey}` (404 `M_NOT_FOUND`
 *   when unset), `GET /rooms/{id}/members`, `GET /rooms/{id}/joined_members`; 403 `M_FORBIDDEN` for a
 *   room the user has not joined.
 * - `GET /sync` (filter by id or inline: `room.rooms`, `room.timeline.limit`, `types`, `not_types`;
 *   `since`; long poll up to `timeout` ms): joined rooms with
 *   `state` and `timeline` (own events carry `unsigned.transaction_id` for the device that sent
 *   them), `to_device` (deleted once a later `since` acknowledges them), `device_lists.changed`
 *   (users sharing a room whose keys changed), `device_one_time_keys_count` and
 *   `device_unused_fallback_key_types`.
 * - `POST /user/{userId}/filter`, `GET /user/{userId}/filter/{id}`, `GET /pushrules/`,
 *   `GET /capabilities`, `GET /room_keys/version` (404: no backup), account data (404).
 * - Keys: `POST /keys/upload` (device keys for the token's own device; a one-time key id already
 *   taken with another key is 400 as Synapse answers; fallback keys replace each other),
 *   `POST /keys/query`, `POST /keys/claim` (the newest one-time key, else the fallback key),
 *   `PUT /sendToDevice/{type}/{txnId}` (per-device queues, `*` for all of a user's devices).
 * Errors: 403 `M_FORBIDDEN` (not in room), 429 `M_LIMIT_EXCEEDED` with `retry_after_ms` (and
 * `Retry-After`), 413 `M_TOO_LARGE`, 400 `M_NOT_JSON`, 404 `M_UNRECOGNIZED` for anything else
 * (recorded in `unknown`, so a test sees what a client called that the fake lacks).
 */

import { randomBytes } from 'node:crypto';
import http from 'node:http';

export interface StoredEvent {
  event_id: string;
  room_id: string;
  sender: string;
  type: string;
  txnId: string;
  content: any;
}

/** An event in a room's history as sync hands it out. */
interface RoomEvent {
  event_id: string;
  room_id: string;
  sender: string;
  type: string;
  content: any;
  state_key?: string;
  origin_server_ts: number;
  txn?: { token: string; id: string };
}

interface Session {
  userId: string;
  deviceId: string;
}
interface OneTimeKey {
  id: string;
  key: unknown;
}

const MEGOLM = 'm.megolm.v1.aes-sha2';

export class FakeHomeserver {
  private server = http.createServer((req, res) => this.handle(req, res));
  private port = 0;
  /** access token → user id */
  readonly tokens = new Map<string, string>();
  /** access token → device id (default `HERALDDEV` for tokens given to addUser). */
  readonly deviceOf = new Map<string, string>();
  /** room id → joined user ids */
  readonly rooms = new Map<string, Set<string>>();
  /** Message events posted through `/send`, in order. */
  readonly events: StoredEvent[] = [];
  /** Every request seen, for asserting what was (not) sent. */
  readonly requests: { method: string; path: string; authorization?: string }[] = [];
  /** Requests for endpoints the fake does not implement (answered 404 M_UNRECOGNIZED). */
  readonly unknown: string[] = [];
  /** user id → device id → the device keys it uploaded. */
  readonly deviceKeys = new Map<string, Map<string, any>>();
  /** `/keys/upload` answers that refused something (e.g. a one-time key id taken by another key). */
  readonly refusedUploads: string[] = [];
  /** Every accepted `/keys/upload`: the device and the one-time key ids it published. */
  readonly uploads: { userId: string; deviceId: string; oneTimeKeyIds: string[] }[] = [];
  private txns = new Map<string, string>();
  private passwords = new Map<string, string>();
  /** The stream position: every event, to-device message and device-list change takes the next one. */
  private pos = 0;
  private history: { pos: number; event: RoomEvent }[] = [];
  private state = new Map<string, Map<string, RoomEvent>>();
  private toDevice = new Map<string, { pos: number; type: string; sender: string; content: unknown }[]>();
  private toDeviceTxns = new Set<string>();
  private deviceChanges: { pos: number; userId: string }[] = [];
  private oneTimeKeys = new Map<string, OneTimeKey[]>();
  private fallbackKeys = new Map<string, OneTimeKey & { used: boolean }>();
  private filters = new Map<string, unknown>();
  private waiters = new Set<() => void>();
  /** Rate-limit the next `count` sends, asking to wait `ms`. */
  rateLimit: { count: number; ms: number } | null = null;
  /** The next send is stored, but the connection is cut before the answer (a lost response). */
  loseNextResponse = false;
  /** Answer the next request with a reverse proxy's 502 page. */
  badGatewayNext = false;

  async start(): Promise<this> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.port = (this.server.address() as { port: number }).port;
    return this;
  }

  async close(): Promise<void> {
    this.wake();
    this.server.closeAllConnections();
    await new Promise<void>((r) => this.server.close(() => r()));
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /**
   * Registers a user with a token (one device, `deviceId`), joined to the given rooms. A `password`
   * lets the user log in, each login making a new device and token.
   */
  addUser(
    userId: string,
    token: string,
    joined: string[] = [],
    o: { deviceId?: string; password?: string } = {},
  ): void {
    this.tokens.set(token, userId);
    this.deviceOf.set(token, o.deviceId ?? 'HERALDDEV');
    if (o.password !== undefined) this.passwords.set(userId, o.password);
    for (const room of joined) this.join(room, userId);
  }

  /** `userId` joins `roomId` (creating the room, with shared history, when it is new). */
  join(roomId: string, userId: string): void {
    if (!this.rooms.has(roomId)) {
      this.rooms.set(roomId, new Set());
      this.putState(roomId, userId, 'm.room.create', '', { creator: userId, room_version: '10' });
      this.putState(roomId, userId, 'm.room.history_visibility', '', { history_visibility: 'shared' });
    }
    this.rooms.get(roomId)!.add(userId);
    this.putState(roomId, userId, 'm.room.member', userId, { membership: 'join' });
  }

  /** Turns encryption on in a room (`m.room.encryption` with Megolm), as a member's client would. */
  enableEncryption(roomId: string, by: string): void {
    this.putState(roomId, by, 'm.room.encryption', '', { algorithm: MEGOLM });
  }

  /** The events of a room's history (state and messages), as sync hands them out. */
  roomHistory(roomId: string): RoomEvent[] {
    return this.history.filter((h) => h.event.room_id === roomId).map((h) => h.event);
  }

  private putState(roomId: string, sender: string, type: string, stateKey: string, content: unknown): RoomEvent {
    const event: RoomEvent = {
      event_id: this.eventId(),
      room_id: roomId,
      sender,
      type,
      state_key: stateKey,
      content,
      origin_server_ts: Date.now(),
    };
    if (!this.state.has(roomId)) this.state.set(roomId, new Map());
    this.state.get(roomId)!.set(`${type}\u0000${stateKey}`, event);
    this.append(event);
    return event;
  }

  private eventId(): string {
    return `$${randomBytes(16).toString('base64url')}`;
  }

  private append(event: RoomEvent): void {
    this.history.push({ pos: ++this.pos, event });
    this.wake();
  }

  private wake(): void {
    const all = [...this.waiters];
    this.waiters.clear();
    for (const w of all) w();
  }

  private json(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
    if (res.destroyed || res.headersSent) return;
    res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', this.url);
      this.requests.push({ method: req.method!, path: url.pathname, authorization: req.headers.authorization });
      if (this.badGatewayNext) {
        this.badGatewayNext = false;
        return void res
          .writeHead(502, { 'content-type': 'text/html' })
          .end('<html><body><h1>502 Bad Gateway</h1></body></html>');
      }
      const raw = Buffer.concat(chunks);
      if (req.method === 'GET' && url.pathname === '/_matrix/client/versions') {
        return this.json(res, 200, {
          versions: ['v1.1', 'v1.2', 'v1.3', 'v1.4', 'v1.5', 'v1.6', 'v1.7', 'v1.8', 'v1.9', 'v1.10', 'v1.11', 'v1.12'],
          unstable_features: {},
        });
      }
      if (url.pathname === '/_matrix/client/v3/login') return this.login(req.method!, raw, res);
      const auth = /^Bearer (.+)$/.exec(req.headers.authorization ?? '');
      if (!auth) return this.json(res, 401, { errcode: 'M_MISSING_TOKEN', error: 'Missing access token.' });
      const user = this.tokens.get(auth[1]!);
      if (!user)
        return this.json(res, 401, {
          errcode: 'M_UNKNOWN_TOKEN',
          error: 'Invalid access token passed.',
          soft_logout: false,
        });
      const session: Session = { userId: user, deviceId: this.deviceOf.get(auth[1]!) ?? 'HERALDDEV' };
      try {
        this.route(req.method!, url, raw, auth[1]!, session, res);
      } catch (err) {
        this.json(res, 500, { errcode: 'M_UNKNOWN', error: `fake homeserver: ${(err as Error).message}` });
      }
    });
  }

  private body(raw: Buffer, res: http.ServerResponse): any {
    try {
      const v = JSON.parse(raw.toString('utf8'));
      if (v && typeof v === 'object' && !Array.isArray(v)) return v;
      this.json(res, 400, { errcode: 'M_BAD_JSON', error: 'Content must be a JSON object.' });
    } catch {
      this.json(res, 400, { errcode: 'M_NOT_JSON', error: 'Content not JSON.' });
    }
    return undefined;
  }

  private login(method: string, raw: Buffer, res: http.ServerResponse): void {
    if (method === 'GET') return this.json(res, 200, { flows: [{ type: 'm.login.password' }] });
    const b = this.body(raw, res);
    if (!b) return;
    const name = String(b.identifier?.user ?? b.user ?? '');
    const userId = [...this.passwords.keys()].find((u) => u === name || u.slice(1, u.indexOf(':')) === name);
    if (b.type !== 'm.login.password' || !userId || this.passwords.get(userId) !== b.password) {
      return this.json(res, 403, { errcode: 'M_FORBIDDEN', error: 'Invalid username or password' });
    }
    const token = `syt_${randomBytes(12).toString('base64url')}`;
    const deviceId = typeof b.device_id === 'string' ? b.device_id : randomBytes(5).toString('hex').toUpperCase();
    this.tokens.set(token, userId);
    this.deviceOf.set(token, deviceId);
    this.json(res, 200, {
      user_id: userId,
      access_token: token,
      device_id: deviceId,
      home_server: userId.slice(userId.indexOf(':') + 1),
    });
  }

  private route(method: string, url: URL, raw: Buffer, token: string, s: Session, res: http.ServerResponse): void {
    const p = url.pathname.replace(/^\/_matrix\/client\/v3/, '');
    const seg = (re: RegExp) => {
      const m = re.exec(p);
      return m ? m.slice(1).map((x) => (x === undefined ? x : decodeURIComponent(x))) : undefined;
    };
    let m: (string | undefined)[] | undefined;

    if (method === 'GET' && p === '/account/whoami')
      return this.json(res, 200, { user_id: s.userId, device_id: s.deviceId, is_guest: false });
    if (method === 'PUT' && (m = seg(/^\/rooms\/([^/]+)\/send\/([^/]+)\/([^/]+)$/)))
      return this.send(res, token, s.userId, m[0]!, m[1]!, m[2]!, raw);
    if (method === 'GET' && p === '/sync') return void this.sync(url, s, token, res);
    if (method === 'GET' && p === '/capabilities')
      return this.json(res, 200, { capabilities: { 'm.change_password': { enabled: false } } });
    if (method === 'GET' && (p === '/pushrules/' || p === '/pushrules')) {
      return this.json(res, 200, { global: { override: [], content: [], room: [], sender: [], underride: [] } });
    }
    if (method === 'GET' && p === '/room_keys/version')
      return this.json(res, 404, { errcode: 'M_NOT_FOUND', error: 'No current backup version' });
    if ((m = seg(/^\/user\/([^/]+)\/filter$/)) && method === 'POST') {
      const b = this.body(raw, res);
      if (!b) return;
      const id = String(this.filters.size + 1);
      this.filters.set(id, b);
      return this.json(res, 200, { filter_id: id });
    }
    if ((m = seg(/^\/user\/([^/]+)\/filter\/([^/]+)$/)) && method === 'GET') {
      const f = this.filters.get(m[1]!);
      return f ? this.json(res, 200, f) : this.json(res, 404, { errcode: 'M_NOT_FOUND', error: 'No such filter' });
    }
    if (seg(/^\/user\/([^/]+)\/(rooms\/[^/]+\/)?account_data\/([^/]+)$/) && method === 'GET') {
      return this.json(res, 404, { errcode: 'M_NOT_FOUND', error: 'Account data not found' });
    }
    if ((m = seg(/^\/rooms\/([^/]+)\/(state|members|joined_members)(?:\/([^/]+)(?:\/(.*))?)?$/)) && method === 'GET') {
      const [roomId, what, type, stateKey] = m as [string, string, string | undefined, string | undefined];
      if (!this.rooms.get(roomId)?.has(s.userId))
        return this.json(res, 403, { errcode: 'M_FORBIDDEN', error: `User ${s.userId} not in room ${roomId}` });
      const state = [...(this.state.get(roomId)?.values() ?? [])];
      if (what === 'members')
        return this.json(res, 200, {
          chunk: state.filter((e) => e.type === 'm.room.member').map((e) => this.client(e)),
        });
      if (what === 'joined_members')
        return this.json(res, 200, { joined: Object.fromEntries([...this.rooms.get(roomId)!].map((u) => [u, {}])) });
      if (type === undefined)
        return this.json(
          res,
          200,
          state.map((e) => this.client(e)),
        );
      const ev = this.state.get(roomId)?.get(`${type}\u0000${stateKey ?? ''}`);
      return ev
        ? this.json(res, 200, ev.content)
        : this.json(res, 404, { errcode: 'M_NOT_FOUND', error: 'Event not found.' });
    }
    if (method === 'POST' && p === '/keys/upload') return this.keysUpload(raw, s, res);
    if (method === 'POST' && p === '/keys/query') return this.keysQuery(raw, res);
    if (method === 'POST' && p === '/keys/claim') return this.keysClaim(raw, res);
    if (method === 'PUT' && (m = seg(/^\/sendToDevice\/([^/]+)\/([^/]+)$/)))
      return this.sendToDevice(raw, token, s, m[0]!, m[1]!, res);
    this.unknown.push(`${method} ${url.pathname}`);
    this.json(res, 404, { errcode: 'M_UNRECOGNIZED', error: 'Unrecognized request' });
  }

  private send(
    res: http.ServerResponse,
    token: string,
    user: string,
    roomId: string,
    type: string,
    txnId: string,
    raw: Buffer,
  ): void {
    // Transactions are scoped to the access token (device); a repeat is answered, not re-posted.
    const key = `${token}\u0000${txnId}`;
    const seen = this.txns.get(key);
    if (seen) return this.json(res, 200, { event_id: seen });
    if (this.rateLimit && this.rateLimit.count > 0) {
      this.rateLimit.count--;
      const ms = this.rateLimit.ms;
      return this.json(
        res,
        429,
        { errcode: 'M_LIMIT_EXCEEDED', error: 'Too Many Requests', retry_after_ms: ms },
        { 'retry-after': String(Math.ceil(ms / 1000)) },
      );
    }
    const content = this.body(raw, res);
    if (!content) return;
    if (!this.rooms.get(roomId)?.has(user))
      return this.json(res, 403, { errcode: 'M_FORBIDDEN', error: `User ${user} not in room ${roomId}` });
    // An edit (m.replace) must relate to an existing event of the same room, sender and type that is not itself an
    // edit.
    const rel = (content as { 'm.relates_to'?: { rel_type?: string; event_id?: string } })['m.relates_to'];
    if (rel?.rel_type === 'm.replace') {
      const original = this.events.find((e) => e.event_id === rel.event_id);
      if (!original || original.room_id !== roomId)
        return this.json(res, 400, { errcode: 'M_BAD_JSON', error: 'Event to replace not found in this room' });
      if (
        original.sender !== user ||
        original.type !== type ||
        original.content?.['m.relates_to']?.rel_type === 'm.replace'
      ) {
        return this.json(res, 400, { errcode: 'M_BAD_JSON', error: 'Cannot replace this event' });
      }
      // Encrypted, the new content travels inside the ciphertext; only the relation is in the clear.
      if (type !== 'm.room.encrypted' && !(content as { 'm.new_content'?: unknown })['m.new_content'])
        return this.json(res, 400, { errcode: 'M_BAD_JSON', error: 'An edit needs m.new_content' });
    }
    const event_id = this.eventId();
    const event = { event_id, room_id: roomId, sender: user, type, txnId, content };
    // The whole event, envelope included, must stay within 65,536 bytes.
    if (
      Buffer.byteLength(
        JSON.stringify({
          ...event,
          origin_server_ts: Date.now(),
          signatures: { x: { 'ed25519:a': 'x'.repeat(86) } },
          hashes: { sha256: 'x'.repeat(43) },
        }),
      ) > 65_536
    ) {
      return this.json(res, 413, { errcode: 'M_TOO_LARGE', error: 'event too large' });
    }
    this.events.push(event);
    this.txns.set(key, event_id);
    this.append({
      event_id,
      room_id: roomId,
      sender: user,
      type,
      content,
      origin_server_ts: Date.now(),
      txn: { token, id: txnId },
    });
    if (this.loseNextResponse) {
      this.loseNextResponse = false;
      return void res.socket?.destroy();
    }
    this.json(res, 200, { event_id });
  }

  /** The client-format event (`unsigned.transaction_id` only for the token that sent it). */
  private client(e: RoomEvent, token?: string): Record<string, unknown> {
    const { txn, ...rest } = e;
    return {
      ...rest,
      unsigned: {
        age: Math.max(0, Date.now() - e.origin_server_ts),
        ...(txn && txn.token === token ? { transaction_id: txn.id } : {}),
      },
    };
  }

  private async sync(url: URL, s: Session, token: string, res: http.ServerResponse): Promise<void> {
    const since = url.searchParams.get('since');
    const from = since ? Number(since.replace(/^s/, '')) || 0 : -1;
    const timeout = Math.min(Number(url.searchParams.get('timeout') ?? 0) || 0, 30_000);
    const raw = url.searchParams.get('filter');
    let filter: any = {};
    if (raw) filter = raw.startsWith('{') ? JSON.parse(raw) : (this.filters.get(raw) ?? {});
    const deadline = Date.now() + timeout;
    // Acknowledged to-device messages are gone for good.
    const queue = this.toDevice.get(`${s.userId}|${s.deviceId}`);
    if (queue && from >= 0)
      this.toDevice.set(
        `${s.userId}|${s.deviceId}`,
        queue.filter((q) => q.pos > from),
      );
    for (;;) {
      const body = this.syncBody(s, token, from, filter);
      const empty =
        from >= 0 &&
        Object.keys(body.rooms.join).length === 0 &&
        body.to_device.events.length === 0 &&
        body.device_lists.changed.length === 0;
      const wait = deadline - Date.now();
      if (!empty || wait <= 0 || !this.server.listening) return this.json(res, 200, body);
      await new Promise<void>((r) => {
        const timer = setTimeout(() => {
          this.waiters.delete(wake);
          r();
        }, wait);
        const wake = () => {
          clearTimeout(timer);
          r();
        };
        this.waiters.add(wake);
        res.on('close', wake);
      });
      if (res.destroyed) return;
    }
  }

  private syncBody(s: Session, token: string, from: number, filter: any) {
    const limit = Number(filter?.room?.timeline?.limit ?? 10) || 10;
    const onlyRooms: string[] | undefined = filter?.room?.rooms;
    // Event filter `types` / `not_types`: exact names or a trailing `*` wildcard.
    const matches = (list: unknown, type: string) =>
      Array.isArray(list) && list.some((p: string) => (p.endsWith('*') ? type.startsWith(p.slice(0, -1)) : p === type));
    const wanted = (type: string) =>
      (filter?.room?.timeline?.types === undefined || matches(filter.room.timeline.types, type)) &&
      !matches(filter?.room?.timeline?.not_types, type);
    const join: Record<string, unknown> = {};
    for (const [roomId, members] of this.rooms) {
      if (!members.has(s.userId) || (onlyRooms && !onlyRooms.includes(roomId))) continue;
      const all = this.history.filter((h) => h.event.room_id === roomId);
      const joinedAt =
        all.find(
          (h) =>
            h.event.type === 'm.room.member' && h.event.state_key === s.userId && h.event.content.membership === 'join',
        )?.pos ?? 0;
      const fresh = from < 0 || joinedAt > from;
      const newer = (fresh ? all : all.filter((h) => h.pos > from)).filter((h) => wanted(h.event.type));
      if (!fresh && newer.length === 0) continue;
      const timeline = newer.slice(-limit);
      const inTimeline = new Set(timeline.map((h) => h.event.event_id));
      const state = fresh
        ? [...(this.state.get(roomId)?.values() ?? [])].filter((e) => !inTimeline.has(e.event_id))
        : [];
      join[roomId] = {
        state: { events: state.map((e) => this.client(e, token)) },
        timeline: {
          events: timeline.map((h) => this.client(h.event, token)),
          limited: newer.length > timeline.length,
          prev_batch: `p${timeline[0]?.pos ?? this.pos}`,
        },
        ephemeral: { events: [] },
        account_data: { events: [] },
        unread_notifications: { highlight_count: 0, notification_count: 0 },
        summary: { 'm.joined_member_count': members.size, 'm.invited_member_count': 0 },
      };
    }
    const device = `${s.userId}|${s.deviceId}`;
    const sharing = new Set([s.userId]);
    for (const members of this.rooms.values()) if (members.has(s.userId)) for (const u of members) sharing.add(u);
    const changed =
      from < 0
        ? []
        : [...new Set(this.deviceChanges.filter((c) => c.pos > from && sharing.has(c.userId)).map((c) => c.userId))];
    const fallback = this.fallbackKeys.get(device);
    return {
      next_batch: `s${this.pos}`,
      rooms: { join, invite: {}, leave: {} },
      to_device: {
        events: (this.toDevice.get(device) ?? [])
          .filter((q) => q.pos > from)
          .map(({ type, sender, content }) => ({ type, sender, content })),
      },
      device_lists: { changed, left: [] },
      device_one_time_keys_count: { signed_curve25519: this.oneTimeKeys.get(device)?.length ?? 0 },
      device_unused_fallback_key_types: fallback && !fallback.used ? ['signed_curve25519'] : [],
      'org.matrix.msc2732.device_unused_fallback_key_types': fallback && !fallback.used ? ['signed_curve25519'] : [],
      presence: { events: [] },
      account_data: { events: [] },
    };
  }

  private keysUpload(raw: Buffer, s: Session, res: http.ServerResponse): void {
    const b = this.body(raw, res);
    if (!b) return;
    const device = `${s.userId}|${s.deviceId}`;
    if (b.device_keys) {
      if (b.device_keys.user_id !== s.userId || b.device_keys.device_id !== s.deviceId) {
        this.refusedUploads.push('device keys of another device');
        return this.json(res, 400, {
          errcode: 'M_INVALID_PARAM',
          error: 'User ID and device ID must match the access token',
        });
      }
      if (!this.deviceKeys.has(s.userId)) this.deviceKeys.set(s.userId, new Map());
      const before = this.deviceKeys.get(s.userId)!.get(s.deviceId);
      if (JSON.stringify(before) !== JSON.stringify(b.device_keys)) {
        this.deviceKeys.get(s.userId)!.set(s.deviceId, b.device_keys);
        this.deviceChanges.push({ pos: ++this.pos, userId: s.userId });
        this.wake();
      }
    }
    const otks = this.oneTimeKeys.get(device) ?? [];
    for (const [id, key] of Object.entries(b.one_time_keys ?? {})) {
      const old = otks.find((k) => k.id === id);
      if (old && JSON.stringify(old.key) !== JSON.stringify(key)) {
        // Synapse keeps a published one-time key id for good: reusing it with another key is refused.
        this.refusedUploads.push(`one-time key ${id} already exists`);
        return this.json(res, 400, {
          errcode: 'M_UNKNOWN',
          error:
            `One time key ${id} already exists. Old key: ${JSON.stringify(old.key)}; new key: ` +
            `${JSON.stringify(key)}`,
        });
      }
      if (!old) otks.push({ id, key });
    }
    this.oneTimeKeys.set(device, otks);
    this.uploads.push({ userId: s.userId, deviceId: s.deviceId, oneTimeKeyIds: Object.keys(b.one_time_keys ?? {}) });
    for (const [id, key] of Object.entries(b.fallback_keys ?? b['org.matrix.msc2732.fallback_keys'] ?? {}))
      this.fallbackKeys.set(device, { id, key, used: false });
    this.json(res, 200, { one_time_key_counts: { signed_curve25519: otks.length } });
  }

  private keysQuery(raw: Buffer, res: http.ServerResponse): void {
    const b = this.body(raw, res);
    if (!b) return;
    const out: Record<string, Record<string, unknown>> = {};
    for (const [userId, wanted] of Object.entries(b.device_keys ?? {})) {
      const devices = this.deviceKeys.get(userId) ?? new Map();
      const ids = Array.isArray(wanted) && wanted.length ? (wanted as string[]) : [...devices.keys()];
      out[userId] = Object.fromEntries(ids.filter((d) => devices.has(d)).map((d) => [d, devices.get(d)]));
    }
    this.json(res, 200, {
      device_keys: out,
      failures: {},
      master_keys: {},
      self_signing_keys: {},
      user_signing_keys: {},
    });
  }

  private keysClaim(raw: Buffer, res: http.ServerResponse): void {
    const b = this.body(raw, res);
    if (!b) return;
    const out: Record<string, Record<string, Record<string, unknown>>> = {};
    for (const [userId, devices] of Object.entries(b.one_time_keys ?? {})) {
      for (const [deviceId, algorithm] of Object.entries(devices as Record<string, string>)) {
        const device = `${userId}|${deviceId}`;
        const otks = this.oneTimeKeys.get(device) ?? [];
        // The spec leaves the order open; this fake hands out the newest key first.
        const i = otks.findLastIndex((k) => k.id.startsWith(`${algorithm}:`));
        let claimed: OneTimeKey | undefined;
        if (i >= 0) claimed = otks.splice(i, 1)[0];
        else {
          const fb = this.fallbackKeys.get(device);
          if (fb && fb.id.startsWith(`${algorithm}:`)) {
            fb.used = true;
            claimed = fb;
          }
        }
        if (!claimed) continue;
        ((out[userId] ??= {})[deviceId] ??= {})[claimed.id] = claimed.key;
      }
    }
    this.json(res, 200, { one_time_keys: out, failures: {} });
  }

  private sendToDevice(
    raw: Buffer,
    token: string,
    s: Session,
    type: string,
    txnId: string,
    res: http.ServerResponse,
  ): void {
    const b = this.body(raw, res);
    if (!b) return;
    const key = `${token}\u0000${txnId}`;
    if (!this.toDeviceTxns.has(key)) {
      this.toDeviceTxns.add(key);
      for (const [userId, devices] of Object.entries(b.messages ?? {})) {
        for (const [deviceId, content] of Object.entries(devices as Record<string, unknown>)) {
          const targets = deviceId === '*' ? [...(this.deviceKeys.get(userId)?.keys() ?? [])] : [deviceId];
          for (const d of targets) {
            const q = this.toDevice.get(`${userId}|${d}`) ?? [];
            q.push({ pos: ++this.pos, type, sender: s.userId, content });
            this.toDevice.set(`${userId}|${d}`, q);
          }
        }
      }
      this.wake();
    }
    this.json(res, 200, {});
  }
}
