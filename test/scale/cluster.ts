/**
 * Several real Herald processes (`core/src/main.ts`) on one PostgreSQL database and one shared
 * data folder, as the README's "Running several replicas" describes, plus a recording sink that
 * notices sends whose sender vanished before it answered.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import crypto from 'node:crypto';
import http from 'node:http';
import type net from 'node:net';
import { freePort } from '../helpers/peers.ts';
import { heraldProcessEnv } from '../helpers/process.ts';
import { waitThrough } from '../helpers/wait.ts';

const root = new URL('../..', import.meta.url).pathname;

export interface Replica {
  index: number;
  url: string;
  child: ChildProcess;
  /** Log lines (JSON) written so far. */
  logs: string[];
  alive: boolean;
  /** Sends SIGKILL and waits for the process to be gone. */
  kill(): Promise<void>;
}

export interface ReadyBody {
  ready: boolean;
  replica: { id: string; scheduler_leader: boolean };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `fn` every 50 ms until it returns something truthy (an error means not yet); throws after `ms`. */
export async function until<T>(
  fn: () => Promise<T | undefined | false> | T | undefined | false,
  ms: number,
  what: string,
): Promise<T> {
  return (await waitThrough(what, fn, ms)) as T;
}

/** Starts `n` replicas at once (they race for the boot lock) and waits until each is ready. */
export async function startReplicas(n: number, env: Record<string, string>): Promise<Replica[]> {
  const key = crypto.randomBytes(32).toString('hex');
  const replicas: Replica[] = [];
  for (let i = 0; i < n; i++) {
    const port = await freePort();
    const child = spawn(process.execPath, ['core/src/main.ts'], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: heraldProcessEnv({ port, key, env: { SERVICE_GRACEFUL_SHUTDOWN_SECONDS: '2', ...env } }),
    });
    const r: Replica = {
      index: i,
      url: `http://127.0.0.1:${port}`,
      child,
      logs: [],
      alive: true,
      async kill() {
        if (!r.alive) return;
        const gone = new Promise((res) => child.once('exit', res));
        child.kill('SIGKILL');
        await gone;
      },
    };
    child.once('exit', () => {
      r.alive = false;
    });
    for (const s of [child.stdout!, child.stderr!])
      s.on('data', (c: Buffer) => {
        r.logs.push(...c.toString('utf8').split('\n').filter(Boolean));
        if (r.logs.length > 4000) r.logs.splice(0, 1000);
      });
    replicas.push(r);
  }
  await Promise.all(
    replicas.map((r) =>
      until(
        async () => r.alive && (await fetch(`${r.url}/api/ready`)).status === 200,
        60_000,
        `replica ${r.index} ready`,
      ),
    ),
  );
  return replicas;
}

/** Stops the live replicas gracefully (SIGKILL after 10 s). */
export async function stopReplicas(replicas: Replica[]): Promise<void> {
  await Promise.all(
    replicas
      .filter((r) => r.alive)
      .map(async (r) => {
        const gone = new Promise((res) => r.child.once('exit', res));
        r.child.kill('SIGTERM');
        const t = setTimeout(() => r.child.kill('SIGKILL'), 10_000);
        await gone;
        clearTimeout(t);
      }),
  );
}

export async function ready(r: Replica): Promise<ReadyBody | undefined> {
  if (!r.alive) return undefined;
  try {
    return (await (await fetch(`${r.url}/api/ready`, { signal: AbortSignal.timeout(2000) })).json()) as ReadyBody;
  } catch {
    return undefined;
  }
}

/** The replicas that say they lead the scheduler right now. */
export async function leaders(replicas: Replica[]): Promise<Replica[]> {
  const states = await Promise.all(replicas.map(async (r) => ({ r, b: await ready(r) })));
  return states.filter((s) => s.b?.replica.scheduler_leader).map((s) => s.r);
}

/** JSON over HTTP against one replica. */
export async function call(
  r: Replica,
  method: string,
  p: string,
  o: { token?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<{ status: number; body: any }> {
  const headers: Record<string, string> = { ...(o.headers ?? {}) };
  if (o.token) headers.authorization = `Bearer ${o.token}`;
  if (o.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(r.url + p, {
    method,
    headers,
    body: o.body === undefined ? undefined : JSON.stringify(o.body),
  });
  const text = await res.text();
  let body: any = text;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    /* not JSON */
  }
  return { status: res.status, body };
}

export interface Arrival {
  deliveryId: string;
  eventId: string;
  eventType: string;
  body: string;
  at: number;
  /** The sender's connection closed before the sink answered: the sender never learnt the outcome. */
  unanswered: boolean;
  /** When the sender's connection closed (ms since epoch), if it did while the test ran. */
  connectionClosedAt?: number;
}

/** A loopback sink for the recorder target: records every message, answers after `delayMs`. */
export async function startRecordingSink(
  delayMs: number,
): Promise<{ url: string; arrivals: Arrival[]; close(): Promise<void> }> {
  const arrivals: Arrival[] = [];
  const bySocket = new Map<net.Socket, Arrival[]>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const m = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      const a: Arrival = {
        deliveryId: m.deliveryId,
        eventId: m.eventId,
        eventType: m.eventType,
        body: m.plainBody,
        at: Date.now(),
        unanswered: true,
      };
      arrivals.push(a);
      const list = bySocket.get(req.socket) ?? [];
      list.push(a);
      bySocket.set(req.socket, list);
      setTimeout(() => {
        if (!req.socket.destroyed)
          res.end('ok', () => {
            a.unanswered = false;
          });
      }, delayMs);
    });
  });
  server.on('connection', (sock) =>
    sock.on('close', () => {
      for (const a of bySocket.get(sock) ?? []) a.connectionClosedAt = Date.now();
      bySocket.delete(sock);
    }),
  );
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}/`,
    arrivals,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
