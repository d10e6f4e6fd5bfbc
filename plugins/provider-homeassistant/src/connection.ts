/**
 * One WebSocket session with Home Assistant, following its WebSocket API: `auth_required` →
 * `{type:'auth'}` → `auth_ok` | `auth_invalid`, then `subscribe_events` commands with integer ids,
 * `{type:'event'}` pushes and `ping`/`pong` heartbeats. Reconnecting is the supervisor's job.
 * The `ws` client is loaded with the first connection, so a service without a Home Assistant
 * provider configured never carries it in memory.
 */

import type { LookupFunction } from 'node:net';
import type { PluginLogger } from '@herald/plugin-api';
import type WebSocket from 'ws';
import type { Timings } from './config.ts';
import type { HaEvent } from './mapping.ts';

/** Home Assistant answered `auth_invalid`: retrying with the same token is pointless. */
export class AuthRejectedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AuthRejectedError';
  }
}

export interface SessionOptions {
  url: URL;
  token: string;
  /** The address `resolveAllowed` checked; the socket goes there while Host and SNI keep the name. */
  address: string;
  family: 4 | 6;
  eventTypes: string[];
  timings: Timings;
  log: PluginLogger;
  /** Aborting during the handshake ends it at once. */
  signal: AbortSignal;
  onEvent(event: HaEvent): void;
}

export interface HaSession {
  haVersion?: string;
  /** Resolves with a human-readable reason once the connection has ended, however it ended. */
  readonly closed: Promise<string>;
  /** Closes cleanly, cutting the socket if the close handshake takes too long. */
  close(): Promise<void>;
}

/** Largest message accepted; state_changed of entities with big attributes stays far below. */
const MAX_PAYLOAD = 16 * 1024 * 1024;

/** A `lookup` that answers every name with the pinned address (Node asks with and without `all`). */
function pinnedLookup(address: string, family: 4 | 6): LookupFunction {
  return ((_host: string, options: unknown, cb?: unknown) => {
    const callback = (typeof options === 'function' ? options : cb) as (...args: unknown[]) => void;
    const all = typeof options === 'object' && options !== null && (options as { all?: boolean }).all;
    if (all) callback(null, [{ address, family }]);
    else callback(null, address, family);
  }) as LookupFunction;
}

/**
 * Connects, authenticates and subscribes. Resolves once `auth_ok` arrived and the subscriptions
 * are sent; rejects with AuthRejectedError on `auth_invalid`, or a plain Error on any other failure.
 */
export async function openSession(o: SessionOptions): Promise<HaSession> {
  const { WebSocket } = await import('ws');
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(o.url, {
      lookup: pinnedLookup(o.address, o.family),
      handshakeTimeout: o.timings.handshakeTimeoutMs,
      maxPayload: MAX_PAYLOAD,
      followRedirects: false,
      perMessageDeflate: false,
    });
    let nextId = 1;
    let authed = false;
    let failure: string | undefined;
    let pingTimer: NodeJS.Timeout | undefined;
    let pongTimer: NodeJS.Timeout | undefined;
    const subscriptions = new Map<number, string>();
    let resolveClosed!: (reason: string) => void;
    const closed = new Promise<string>((r) => {
      resolveClosed = r;
    });

    const authTimer = setTimeout(
      () => fail(`no auth_ok within ${o.timings.handshakeTimeoutMs} ms`),
      o.timings.handshakeTimeoutMs,
    );
    // After auth_ok the owner closes the session cleanly with close(); the abort covers the handshake.
    const onAbort = () => {
      if (!authed) fail('stopped');
    };
    o.signal.addEventListener('abort', onAbort, { once: true });
    if (o.signal.aborted) onAbort();

    /** Ends the connection for a reason of ours (the close event settles the rest). */
    function fail(reason: string): void {
      failure ??= reason;
      ws.terminate();
    }

    const send = (msg: Record<string, unknown>): void => {
      if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(msg));
    };

    function heartbeat(): void {
      if (pongTimer) return;
      send({ id: nextId++, type: 'ping' });
      pongTimer = setTimeout(() => fail(`no pong within ${o.timings.pongTimeoutMs} ms`), o.timings.pongTimeoutMs);
    }

    const session: HaSession = {
      closed,
      async close() {
        if (ws.readyState === WebSocket.CLOSED) return;
        failure ??= 'closed by Herald';
        ws.close(1000);
        const cut = setTimeout(() => ws.terminate(), o.timings.closeTimeoutMs);
        await closed;
        clearTimeout(cut);
      },
    };

    function handle(msg: Record<string, unknown>): void {
      switch (msg.type) {
        case 'auth_required':
          send({ type: 'auth', access_token: o.token });
          return;
        case 'auth_ok': {
          authed = true;
          clearTimeout(authTimer);
          session.haVersion = typeof msg.ha_version === 'string' ? msg.ha_version : undefined;
          for (const eventType of o.eventTypes) {
            const id = nextId++;
            subscriptions.set(id, eventType);
            send({ id, type: 'subscribe_events', event_type: eventType });
          }
          pingTimer = setInterval(heartbeat, o.timings.pingIntervalMs);
          resolve(session);
          return;
        }
        case 'auth_invalid':
          clearTimeout(authTimer);
          failure = 'access token rejected';
          reject(
            new AuthRejectedError(
              typeof msg.message === 'string' ? `access token rejected: ${msg.message}` : 'access token rejected',
            ),
          );
          ws.terminate();
          return;
        case 'pong':
          clearTimeout(pongTimer);
          pongTimer = undefined;
          return;
        case 'result': {
          const eventType = subscriptions.get(Number(msg.id));
          if (eventType === undefined) return;
          subscriptions.delete(Number(msg.id));
          if (msg.success !== true) {
            const err = (msg.error ?? {}) as { code?: unknown; message?: unknown };
            o.log.warn(
              { eventType, code: err.code, error: err.message },
              'Home Assistant refused an event subscription',
            );
          }
          return;
        }
        case 'event': {
          const event = msg.event as HaEvent | undefined;
          if (authed && event && typeof event.event_type === 'string') o.onEvent(event);
          return;
        }
        default:
      }
    }

    ws.on('message', (raw: WebSocket.RawData, isBinary: boolean) => {
      if (isBinary) return;
      let parsed: unknown;
      try {
        parsed = JSON.parse(raw.toString());
      } catch {
        o.log.debug({}, 'ignored a message that is not JSON');
        return;
      }
      // Home Assistant may coalesce several messages into one JSON array.
      for (const msg of Array.isArray(parsed) ? parsed : [parsed]) {
        if (msg && typeof msg === 'object') {
          try {
            handle(msg as Record<string, unknown>);
          } catch (err) {
            o.log.error({ err }, 'failed to handle a Home Assistant message');
          }
        }
      }
    });

    ws.on('error', (err: Error) => {
      failure ??= err.message;
    });

    ws.on('close', (code: number, reason: Buffer) => {
      o.signal.removeEventListener('abort', onAbort);
      clearTimeout(authTimer);
      clearInterval(pingTimer);
      clearTimeout(pongTimer);
      const why =
        failure ?? `connection closed (code ${code}${reason.length ? `, ${reason.toString().slice(0, 200)}` : ''})`;
      if (!authed) reject(new Error(why));
      resolveClosed(why);
    });
  });
}
