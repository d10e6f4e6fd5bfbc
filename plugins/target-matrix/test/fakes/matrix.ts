/**
 * A loopback fake Matrix homeserver speaking the client-server API (v3) for the two endpoints
 * the target uses, with Synapse's error bodies:
 * - `GET /_matrix/client/v3/account/whoami` → `{user_id, device_id, is_guest}`
 * - `PUT /_matrix/client/v3/rooms/{roomId}/send/{eventType}/{txnId}` → `{event_id}`; a repeated
 *   txnId from the same access token returns the first event id and stores nothing new. An edit
 *   (`m.relates_to` with `rel_type: m.replace`) must name an event of the same room, sender and
 *   type that is not an edit itself, and carry `m.new_content` (400 `M_BAD_JSON` otherwise).
 * Errors: 401 `M_MISSING_TOKEN` / `M_UNKNOWN_TOKEN` (`soft_logout`), 403 `M_FORBIDDEN` (not in room),
 * 429 `M_LIMIT_EXCEEDED` with `retry_after_ms` (and `Retry-After`), 413 `M_TOO_LARGE`, 400 `M_NOT_JSON`,
 * 404 `M_UNRECOGNIZED` for anything else.
 */
import http from 'node:http';
import { randomBytes } from 'node:crypto';

export interface StoredEvent { event_id: string; room_id: string; sender: string; type: string; txnId: string; content: any }

export class FakeHomeserver {
  private server = http.createServer((req, res) => this.handle(req, res));
  private port = 0;
  /** access token → user id */
  readonly tokens = new Map<string, string>();
  /** room id → joined user ids */
  readonly rooms = new Map<string, Set<string>>();
  readonly events: StoredEvent[] = [];
  /** Every request seen, for asserting what was (not) sent. */
  readonly requests: { method: string; path: string; authorization?: string }[] = [];
  private txns = new Map<string, string>();
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
    this.server.closeAllConnections();
    await new Promise<void>((r) => this.server.close(() => r()));
  }

  get url(): string { return `http://127.0.0.1:${this.port}`; }

  /** Registers a user with a token, joined to the given rooms. */
  addUser(userId: string, token: string, joined: string[] = []): void {
    this.tokens.set(token, userId);
    for (const room of joined) {
      if (!this.rooms.has(room)) this.rooms.set(room, new Set());
      this.rooms.get(room)!.add(userId);
    }
  }

  private json(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
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
        return void res.writeHead(502, { 'content-type': 'text/html' }).end('<html><body><h1>502 Bad Gateway</h1></body></html>');
      }
      const auth = /^Bearer (.+)$/.exec(req.headers.authorization ?? '');
      if (!auth) return this.json(res, 401, { errcode: 'M_MISSING_TOKEN', error: 'Missing access token.' });
      const user = this.tokens.get(auth[1]!);
      if (!user) return this.json(res, 401, { errcode: 'M_UNKNOWN_TOKEN', error: 'Invalid access token passed.', soft_logout: false });

      if (req.method === 'GET' && url.pathname === '/_matrix/client/v3/account/whoami') {
        return this.json(res, 200, { user_id: user, device_id: 'HERALDDEV', is_guest: false });
      }
      const send = /^\/_matrix\/client\/v3\/rooms\/([^/]+)\/send\/([^/]+)\/([^/]+)$/.exec(url.pathname);
      if (req.method === 'PUT' && send) {
        const [roomId, type, txnId] = send.slice(1).map(decodeURIComponent) as [string, string, string];
        return this.send(res, auth[1]!, user, roomId, type, txnId, Buffer.concat(chunks));
      }
      this.json(res, 404, { errcode: 'M_UNRECOGNIZED', error: 'Unrecognized request' });
    });
  }

  private send(res: http.ServerResponse, token: string, user: string, roomId: string, type: string, txnId: string, raw: Buffer): void {
    // Transactions are scoped to the access token (device); a repeat is answered, not re-posted.
    const key = `${token}\u0000${txnId}`;
    const seen = this.txns.get(key);
    if (seen) return this.json(res, 200, { event_id: seen });
    if (this.rateLimit && this.rateLimit.count > 0) {
      this.rateLimit.count--;
      const ms = this.rateLimit.ms;
      return this.json(res, 429, { errcode: 'M_LIMIT_EXCEEDED', error: 'Too Many Requests', retry_after_ms: ms }, { 'retry-after': String(Math.ceil(ms / 1000)) });
    }
    let content: unknown;
    try { content = JSON.parse(raw.toString('utf8')); } catch { return this.json(res, 400, { errcode: 'M_NOT_JSON', error: 'Content not JSON.' }); }
    if (!content || typeof content !== 'object' || Array.isArray(content)) return this.json(res, 400, { errcode: 'M_BAD_JSON', error: 'Content must be a JSON object.' });
    if (!this.rooms.get(roomId)?.has(user)) return this.json(res, 403, { errcode: 'M_FORBIDDEN', error: `User ${user} not in room ${roomId}` });
    // An edit (m.replace) must relate to an existing event of the same room, sender and type that is not itself an edit.
    const rel = (content as { 'm.relates_to'?: { rel_type?: string; event_id?: string } })['m.relates_to'];
    if (rel?.rel_type === 'm.replace') {
      const original = this.events.find((e) => e.event_id === rel.event_id);
      if (!original || original.room_id !== roomId) return this.json(res, 400, { errcode: 'M_BAD_JSON', error: 'Event to replace not found in this room' });
      if (original.sender !== user || original.type !== type || original.content?.['m.relates_to']?.rel_type === 'm.replace') {
        return this.json(res, 400, { errcode: 'M_BAD_JSON', error: 'Cannot replace this event' });
      }
      if (!(content as { 'm.new_content'?: unknown })['m.new_content']) return this.json(res, 400, { errcode: 'M_BAD_JSON', error: 'An edit needs m.new_content' });
    }
    const event_id = `$${randomBytes(16).toString('base64url')}`;
    const event = { event_id, room_id: roomId, sender: user, type, txnId, content };
    // The whole event, envelope included, must stay within 65,536 bytes.
    if (Buffer.byteLength(JSON.stringify({ ...event, origin_server_ts: Date.now(), signatures: { x: { 'ed25519:a': 'x'.repeat(86) } }, hashes: { sha256: 'x'.repeat(43) } })) > 65_536) {
      return this.json(res, 413, { errcode: 'M_TOO_LARGE', error: 'event too large' });
    }
    this.events.push(event);
    this.txns.set(key, event_id);
    if (this.loseNextResponse) { this.loseNextResponse = false; return void res.socket?.destroy(); }
    this.json(res, 200, { event_id });
  }
}
