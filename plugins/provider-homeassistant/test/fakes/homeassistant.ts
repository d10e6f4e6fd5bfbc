/**
 * A fake Home Assistant speaking the real WebSocket API on 127.0.0.1 (ephemeral port):
 * `auth_required` → `auth` → `auth_ok` | `auth_invalid` (then close), `subscribe_events` with
 * `result` answers, increasing-id checks, `ping` → `pong`, and events pushed by the test.
 * Tests can drop every connection abruptly, refuse new ones for a while, stay silent during the
 * handshake or stop answering pings.
 */
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { WebSocket, WebSocketServer } from 'ws';

export interface FakeHaOptions {
  /** The token that authenticates; anything else gets `auth_invalid`. */
  token: string;
  haVersion?: string;
}

interface Client {
  ws: WebSocket;
  authed: boolean;
  lastId: number;
  /** subscription id → event type (undefined: every event). */
  subs: Map<number, string | undefined>;
}

export interface FakeHomeAssistant {
  /** `http://127.0.0.1:<port>`, what an operator puts in `base_url`. */
  readonly url: string;
  /** WebSocket upgrades accepted so far. */
  readonly connections: number;
  /** Every JSON message received from clients, in order. */
  readonly received: Record<string, unknown>[];
  /** Host headers of the upgrade requests, in order. */
  readonly hostHeaders: string[];
  /** Authenticated clients connected now. */
  authedClients(): number;
  /** Event types subscribed by the authenticated clients connected now. */
  subscribedTypes(): string[];
  /** Sends an event to every subscription that matches; returns how many messages went out. */
  pushEvent(eventType: string, data: Record<string, unknown>): number;
  /** A `state_changed` event with full state objects, as Home Assistant sends them. */
  pushStateChange(
    entityId: string,
    oldState: string | null,
    newState: string | null,
    attributes?: Record<string, unknown>,
  ): number;
  /** Destroys every socket without a close frame (like a crashed or rebooted server). */
  dropAll(): void;
  /** While true, upgrade requests are answered `503` and closed. */
  refuse: boolean;
  /** While false, pings get no pong. */
  answerPings: boolean;
  /** While true, new connections never receive `auth_required`. */
  silent: boolean;
  close(): Promise<void>;
}

export async function startFakeHomeAssistant(opts: FakeHaOptions): Promise<FakeHomeAssistant> {
  const haVersion = opts.haVersion ?? '2025.1.0';
  const server = http.createServer((_req, res) => {
    res.writeHead(404).end('404: Not Found');
  });
  const wss = new WebSocketServer({ noServer: true });
  const clients = new Set<Client>();
  const sockets = new Set<Socket>();
  let connections = 0;
  let contextSeq = 0;
  const received: Record<string, unknown>[] = [];
  const hostHeaders: string[] = [];

  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  server.on('upgrade', (req, socket, head) => {
    hostHeaders.push(req.headers.host ?? '');
    if (fake.refuse || new URL(req.url ?? '/', 'http://x').pathname !== '/api/websocket') {
      socket.end(
        `HTTP/1.1 ${fake.refuse ? '503 Service Unavailable' : '404 Not Found'}\r\nConnection: ` +
          `close\r\nContent-Length: 0\r\n\r\n`,
      );
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => onConnection(ws));
  });

  const send = (c: Client, msg: unknown) => {
    if (c.ws.readyState === WebSocket.OPEN) c.ws.send(JSON.stringify(msg));
  };

  function onConnection(ws: WebSocket): void {
    connections++;
    const c: Client = { ws, authed: false, lastId: 0, subs: new Map() };
    clients.add(c);
    ws.on('close', () => clients.delete(c));
    ws.on('error', () => {});
    if (!fake.silent) send(c, { type: 'auth_required', ha_version: haVersion });
    ws.on('message', (raw) => {
      let msg: Record<string, unknown>;
      try {
        msg = JSON.parse(raw.toString());
      } catch {
        ws.close(1003);
        return;
      }
      received.push(msg);
      if (!c.authed) {
        if (msg.type === 'auth' && msg.access_token === opts.token) {
          c.authed = true;
          send(c, { type: 'auth_ok', ha_version: haVersion });
        } else {
          send(c, {
            type: 'auth_invalid',
            message: msg.type === 'auth' ? 'Invalid access token or password' : 'Auth message incorrectly formatted',
          });
          ws.close();
        }
        return;
      }
      const id = Number(msg.id);
      if (!Number.isInteger(id) || id <= c.lastId) {
        send(c, {
          id: msg.id,
          type: 'result',
          success: false,
          error: { code: 'id_reuse', message: 'Identifier values have to increase.' },
        });
        return;
      }
      c.lastId = id;
      switch (msg.type) {
        case 'ping':
          if (fake.answerPings) send(c, { id, type: 'pong' });
          return;
        case 'subscribe_events':
          c.subs.set(id, typeof msg.event_type === 'string' ? msg.event_type : undefined);
          send(c, { id, type: 'result', success: true, result: null });
          return;
        default:
          send(c, {
            id,
            type: 'result',
            success: false,
            error: { code: 'unknown_command', message: 'Unknown command.' },
          });
      }
    });
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  const fake: FakeHomeAssistant = {
    url: `http://127.0.0.1:${port}`,
    get connections() {
      return connections;
    },
    received,
    hostHeaders,
    refuse: false,
    answerPings: true,
    silent: false,
    authedClients: () => [...clients].filter((c) => c.authed).length,
    subscribedTypes: () =>
      [...clients].filter((c) => c.authed).flatMap((c) => [...c.subs.values()].map((t) => t ?? '*')),
    pushEvent(eventType, data) {
      const now = new Date().toISOString();
      let sent = 0;
      for (const c of clients) {
        if (!c.authed) continue;
        for (const [id, type] of c.subs) {
          if (type !== undefined && type !== eventType) continue;
          send(c, {
            id,
            type: 'event',
            event: {
              event_type: eventType,
              data,
              origin: 'LOCAL',
              time_fired: now,
              context: { id: `ctx${++contextSeq}`, parent_id: null, user_id: null },
            },
          });
          sent++;
        }
      }
      return sent;
    },
    pushStateChange(entityId, oldState, newState, attributes = {}) {
      const now = new Date().toISOString();
      const state = (s: string | null) =>
        s === null
          ? null
          : {
              entity_id: entityId,
              state: s,
              attributes,
              last_changed: now,
              last_reported: now,
              last_updated: now,
              context: { id: `ctx${++contextSeq}`, parent_id: null, user_id: null },
            };
      return fake.pushEvent('state_changed', {
        entity_id: entityId,
        old_state: state(oldState),
        new_state: state(newState),
      });
    },
    dropAll() {
      for (const c of clients) c.ws.terminate();
      for (const s of sockets) s.destroy();
    },
    async close() {
      fake.dropAll();
      wss.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return fake;
}
