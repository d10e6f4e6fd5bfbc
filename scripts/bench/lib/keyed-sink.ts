/**
 * A loopback sink in a process of its own (so its CPU can be read from /proc), counting arrivals per delivery:
 * target k posts to `/t<k>` and the body carries the event's `benchid<n>x`, so (k, n) names one delivery. Run by
 * `startKeyedSink`; the parent reads the counts over IPC.
 */
import { spawn } from 'node:child_process';
import http from 'node:http';
import { procCpuMs, sleep } from './stats.ts';

export interface KeyedSink {
  url: string;
  pid: number;
  /** The sink's CPU time so far, ms. */
  cpuMs(): number;
  /** Arrivals per delivery: index k × events + n. */
  counts(): Promise<{ counts: number[]; total: number; unmatched: number }>;
  /** Waits until `n` 2xx arrivals were counted or `ms` passed; returns the count. */
  waitTotal(n: number, ms: number): Promise<number>;
  close(): Promise<void>;
}

/** Starts the sink for `targets` targets and event ids [0, events). */
export async function startKeyedSink(targets: number, events: number): Promise<KeyedSink> {
  const child = spawn(process.execPath, [new URL(import.meta.url).pathname, String(targets), String(events)], {
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    child.once('message', (m: { port: number }) => resolve(m.port));
    child.once('exit', (code) => reject(new Error(`sink exited ${code}`)));
  });
  const ask = <T>(what: string): Promise<T> =>
    new Promise((resolve) => {
      child.once('message', (m: T) => resolve(m));
      child.send(what);
    });
  return {
    url: `http://127.0.0.1:${port}/`,
    pid: child.pid!,
    cpuMs: () => procCpuMs(child.pid!),
    counts: () => ask('counts'),
    async waitTotal(n, ms) {
      const end = Date.now() + ms;
      for (;;) {
        const t = (await ask<{ total: number }>('total')).total;
        if (t >= n || Date.now() > end) return t;
        await sleep(20);
      }
    },
    async close() {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

function serve(targets: number, events: number): void {
  const count = new Int32Array(targets * events);
  let total = 0;
  let unmatched = 0;
  const ID = /benchid(\d+)x/;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const k = Number(/^\/t(\d+)/.exec(req.url ?? '')?.[1] ?? -1);
      const n = Number(ID.exec(Buffer.concat(chunks).toString('utf8'))?.[1] ?? -1);
      if (k >= 0 && k < targets && n >= 0 && n < events) count[k * events + n]!++;
      else unmatched++;
      total++;
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '2' });
      res.end('ok');
    });
  });
  server.keepAliveTimeout = 30_000;
  server.listen(0, '127.0.0.1', () => process.send!({ port: (server.address() as { port: number }).port }));
  process.on('message', (m: string) => {
    if (m === 'total') process.send!({ total });
    else if (m === 'counts') process.send!({ counts: Array.from(count), total, unmatched });
  });
  process.on('SIGTERM', () => {
    server.closeAllConnections();
    server.close(() => process.exit(0));
  });
}

if (process.argv[1] === new URL(import.meta.url).pathname) serve(Number(process.argv[2]), Number(process.argv[3]));
