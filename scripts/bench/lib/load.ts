/**
 * Loopback load generators over one undici pool: closed loop (C requests in flight, the next sent
 * when one answers) and paced open loop (a fixed offered rate, sends not waiting on answers).
 * Both are bounded by the number of requests and stop by themselves.
 */
import { Pool } from 'undici';
import { sleep, wallMs } from './stats.ts';

export interface Req {
  body: Buffer;
  headers: Record<string, string>;
}

export interface LoadResult {
  /** Wall time each request was sent (0 = never sent). */
  sentAt: Float64Array;
  /** HTTP status of each answer (0 = no answer). */
  status: Int32Array;
  /** Wall time each answer arrived. */
  ackAt: Float64Array;
  started: number;
  finished: number;
  errors: number;
}

function target(url: string): { origin: string; path: string } {
  const u = new URL(url);
  return { origin: u.origin, path: u.pathname + u.search };
}

async function one(pool: Pool, path: string, r: Req, i: number, res: LoadResult): Promise<void> {
  res.sentAt[i] = wallMs();
  try {
    const a = await pool.request({ method: 'POST', path, headers: r.headers, body: r.body });
    await a.body.dump();
    res.status[i] = a.statusCode;
  } catch {
    res.errors++;
  }
  res.ackAt[i] = wallMs();
}

function fresh(n: number): LoadResult {
  return {
    sentAt: new Float64Array(n),
    status: new Int32Array(n),
    ackAt: new Float64Array(n),
    started: 0,
    finished: 0,
    errors: 0,
  };
}

/** Sends `reqs` with `concurrency` requests in flight until all are answered or `deadlineMs` passes. */
export async function closedLoop(
  url: string,
  reqs: Req[],
  concurrency: number,
  deadlineMs = 120_000,
  opts: { stopAt?: () => boolean } = {},
): Promise<LoadResult> {
  const { origin, path } = target(url);
  const pool = new Pool(origin, { connections: concurrency, pipelining: 1, keepAliveTimeout: 30_000 });
  const res = fresh(reqs.length);
  const end = Date.now() + deadlineMs;
  let next = 0;
  res.started = wallMs();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < reqs.length && Date.now() < end && !opts.stopAt?.()) {
        const i = next++;
        await one(pool, path, reqs[i]!, i, res);
      }
    }),
  );
  res.finished = wallMs();
  await pool.close();
  return res;
}

/** Offers `reqs` at `rate` requests per second (open loop) through up to `connections` sockets. */
export async function pacedLoop(url: string, reqs: Req[], rate: number, connections = 64): Promise<LoadResult> {
  const { origin, path } = target(url);
  const pool = new Pool(origin, { connections, pipelining: 1, keepAliveTimeout: 30_000 });
  const res = fresh(reqs.length);
  const pending = new Set<Promise<void>>();
  const interval = 1000 / rate;
  res.started = wallMs();
  let i = 0;
  while (i < reqs.length) {
    const due = Math.min(reqs.length, Math.floor((wallMs() - res.started) / interval) + 1);
    for (; i < due; i++) {
      const p = one(pool, path, reqs[i]!, i, res);
      pending.add(p);
      void p.finally(() => pending.delete(p));
    }
    if (i < reqs.length) await sleep(Math.max(0, res.started + i * interval - wallMs()));
  }
  await Promise.all(pending);
  res.finished = wallMs();
  await pool.close();
  return res;
}
