/**
 * Carries live hints between replicas on PostgreSQL: every replica LISTENs on one channel over a connection of its
 * own, and the hints published on a replica go out with NOTIFY, several to a notification, sent once per turn of the
 * event loop and never awaited by the work that raised them. A replica skips its own notifications (it delivered
 * them already). While the connection is down hints are dropped; the next stream that reconnects gets a reset
 * anyway if it missed any that the ring here did not record.
 */
import pg from 'pg';
import type { Logger } from '../logging/logger.ts';
import type { LiveBus } from './bus.ts';
import type { LiveHint } from './hints.ts';

export const CHANNEL = 'herald_live';
/** NOTIFY payloads must stay under 8000 bytes. */
const MAX_PAYLOAD = 7000;
/** Notifications queued on the connection beyond which hints are dropped rather than piled up. */
const MAX_QUEUED = 200;
const RECONNECT_MS = 2000;
/** How long opening the connection may take before the attempt fails (and is retried). */
const CONNECT_TIMEOUT_MS = 10_000;

interface Wire {
  /** The sending replica. */
  r: string;
  /** [user id, hint] pairs. */
  h: [string, LiveHint][];
}

export class PgLiveRelay {
  private client?: pg.Client;
  private pending: [string, LiveHint][] = [];
  private scheduled = false;
  private queued = 0;
  private stopped = false;
  private warned = false;
  private timer?: NodeJS.Timeout;
  /** The latest connection attempt (at start or on a reconnect): stop() waits for it. */
  private connecting?: Promise<void>;
  private url: string;
  private bus: LiveBus;
  private log: Logger;
  private replica: string;

  constructor(url: string, bus: LiveBus, replica: string, log: Logger) {
    this.url = url;
    this.bus = bus;
    this.replica = replica;
    this.log = log;
  }

  async start(): Promise<void> {
    this.bus.outbound = (userId, hint) => this.queue(userId, hint);
    await this.connect();
  }

  /** Runs one connection attempt and keeps it for stop() (connectOnce catches its own errors). */
  private connect(): Promise<void> {
    this.connecting = this.connectOnce();
    return this.connecting;
  }

  private async connectOnce(): Promise<void> {
    if (this.stopped) return;
    const c = new pg.Client({
      connectionString: this.url,
      application_name: 'herald-live',
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    });
    c.on('error', (err) => {
      this.log.warn({ err }, 'live hints connection lost; reconnecting');
      this.lost(c);
    });
    c.on('notification', (n) => {
      if (n.channel !== CHANNEL || !n.payload) return;
      try {
        const w = JSON.parse(n.payload) as Wire;
        if (w.r === this.replica) return;
        for (const [userId, hint] of w.h) this.bus.deliver(userId, hint);
      } catch (err) {
        this.log.warn({ err }, 'an unreadable live hint notification was ignored');
      }
    });
    try {
      await c.connect();
      await c.query(`LISTEN ${CHANNEL}`);
      if (this.stopped) {
        // stop() came while this connection opened: it is not kept.
        await c.end().catch(() => {});
        return;
      }
      this.client = c;
      this.warned = false;
    } catch (err) {
      if (!this.warned) this.log.warn({ err }, 'live hints connection failed; retrying');
      this.warned = true;
      this.lost(c);
    }
  }

  private lost(c: pg.Client): void {
    if (this.client === c) this.client = undefined;
    void c.end().catch(() => {});
    if (this.stopped || this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.connect();
    }, RECONNECT_MS);
    this.timer.unref();
  }

  private queue(userId: string, hint: LiveHint): void {
    if (!this.client || this.queued >= MAX_QUEUED) return;
    this.pending.push([userId, hint]);
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.flush());
  }

  private flush(): void {
    this.scheduled = false;
    const c = this.client;
    const all = this.pending.splice(0);
    if (!c) return;
    let batch: [string, LiveHint][] = [];
    let size = 0;
    const send = () => {
      if (!batch.length) return;
      const payload = JSON.stringify({ r: this.replica, h: batch } satisfies Wire);
      batch = [];
      size = 0;
      this.queued++;
      c.query('SELECT pg_notify($1, $2)', [CHANNEL, payload])
        .catch((err) => this.log.debug({ err }, 'sending live hints failed'))
        .finally(() => {
          this.queued--;
        });
    };
    for (const pair of all) {
      const n = JSON.stringify(pair).length + 1;
      if (size + n > MAX_PAYLOAD) send();
      batch.push(pair);
      size += n;
    }
    send();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.bus.outbound = undefined;
    if (this.timer) clearTimeout(this.timer);
    // An attempt under way may be opening a connection: it ends that connection itself once it sees stopped.
    await this.connecting?.catch(() => {});
    const c = this.client;
    this.client = undefined;
    await c?.end().catch(() => {});
  }
}
