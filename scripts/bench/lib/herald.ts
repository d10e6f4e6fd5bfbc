/**
 * Runs the real service as a child process (`core/src/main.ts` on this Node, or the built core/dist/main.js) on a
 * loopback port with its own data directory, and talks to its API. `BENCH_CPU_PROF=<dir>` adds `--cpu-prof` to the
 * child.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { SERVICE_ENV, SERVICE_NODE_FLAGS } from '../../node-flags.ts';
import { procKb, sleep, wallMs } from './stats.ts';

export const ROOT = new URL('../../..', import.meta.url).pathname;

/** A free loopback port (listen on 0, read it, close). */
export async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

export function tempDir(prefix: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), `herald-bench-${prefix}-`));
}

export interface HeraldOptions {
  dataDir: string;
  port: number;
  key: string;
  plugins: string;
  env?: Record<string, string>;
  /**
   * What to run: `source` (core/src/main.ts) or `built` (core/dist/main.js, what `npm start` runs; build it first
   * with `npm run build:server`, see buildService). No default, so that no bench runs the sources unawares: the
   * benches pass `benchEntry()` (built unless BENCH_ENTRY=source); ci-bar and paced-trace stay on the sources.
   */
  entry: 'source' | 'built';
}

export interface Herald {
  url: string;
  proc: ChildProcess;
  pid: number;
  /** Wall time the process was spawned. */
  spawnedAt: number;
  stderr: () => string;
  /** Peak resident set of the service so far, in kB (VmHWM). */
  peakRssKb(): number;
  rssKb(): number;
  /** Polls `/api/ready` until `ready: true`; resolves with the wall time it was first seen. */
  ready(timeoutMs?: number): Promise<number>;
  /** SIGTERM and wait for the exit (a CPU profile is written then). */
  stop(): Promise<void>;
  kill(): Promise<void>;
}

export function heraldOptions(
  dataDir: string,
  port: number,
  plugins: string,
  env: Record<string, string>,
  entry: HeraldOptions['entry'],
): HeraldOptions {
  return { dataDir, port, key: crypto.randomBytes(32).toString('hex'), plugins, env, entry };
}

export function spawnHerald(o: HeraldOptions): Herald {
  const prof = process.env.BENCH_CPU_PROF;
  // BENCH_NODE_ARGS: extra Node flags for the child (diagnostics such as --trace-gc); BENCH_CHILD_STDOUT: a file for
  // its stdout.
  const extra = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
  // The service's own flags first (as `npm start` runs it); BENCH_NODE_ARGS comes later and so wins (e.g.
  // `--max-semi-space-size=32` to compare).
  const args = [
    ...SERVICE_NODE_FLAGS,
    ...(prof ? ['--cpu-prof', `--cpu-prof-dir=${prof}`] : []),
    ...extra,
    o.entry === 'built' ? 'core/dist/main.js' : 'core/src/main.ts',
  ];
  const out = process.env.BENCH_CHILD_STDOUT ? fs.openSync(process.env.BENCH_CHILD_STDOUT, 'a') : 'ignore';
  const spawnedAt = wallMs();
  const proc = spawn(process.execPath, args, {
    cwd: ROOT,
    stdio: ['ignore', out, 'pipe'],
    env: {
      PATH: process.env.PATH,
      // What `npm start` sets (malloc's arenas); the bench's own MALLOC_ARENA_MAX wins, to compare.
      ...SERVICE_ENV,
      ...(process.env.MALLOC_ARENA_MAX ? { MALLOC_ARENA_MAX: process.env.MALLOC_ARENA_MAX } : {}),
      SERVICE_SECRET_KEY: o.key,
      SERVICE_DATA_DIR: o.dataDir,
      SERVICE_PORT: String(o.port),
      SERVICE_HOST: '127.0.0.1',
      SERVICE_PLUGINS: o.plugins,
      SERVICE_OUTBOUND_ALLOW_CIDRS: '127.0.0.0/8',
      SERVICE_LOG_LEVEL: 'WARNING',
      SERVICE_LOG_FORMAT: 'json',
      SERVICE_GRACEFUL_SHUTDOWN_SECONDS: '5',
      HERALD_BCRYPT_COST: '4',
      // Dispatch in its own thread or in the main one, as the bench's environment says (the service's default
      // otherwise).
      ...(process.env.SERVICE_DISPATCH_THREAD ? { SERVICE_DISPATCH_THREAD: process.env.SERVICE_DISPATCH_THREAD } : {}),
      // The assistant's opening gate's knobs (core/src/assistant/turns.ts) and the GC threads' nice value
      // (core/src/health/gc-threads.ts), for a sweep.
      ...Object.fromEntries(
        Object.entries(process.env).filter(([k]) => k.startsWith('HERALD_GATE_') || k === 'HERALD_GC_THREADS_NICE'),
      ),
      ...o.env,
    },
  });
  let err = '';
  proc.stderr!.on('data', (c: Buffer) => {
    err = (err + c.toString('utf8')).slice(-8000);
  });
  const url = `http://127.0.0.1:${o.port}`;
  const exited = new Promise<void>((r) => proc.once('exit', () => r()));
  return {
    url,
    proc,
    pid: proc.pid!,
    spawnedAt,
    stderr: () => err,
    peakRssKb: () => procKb(proc.pid!, 'VmHWM'),
    rssKb: () => procKb(proc.pid!, 'VmRSS'),
    async ready(timeoutMs = 30_000) {
      const end = Date.now() + timeoutMs;
      for (;;) {
        if (proc.exitCode !== null) throw new Error(`service exited with ${proc.exitCode}: ${err}`);
        try {
          const r = await fetch(`${url}/api/ready`);
          const at = wallMs();
          if (r.status === 200 && ((await r.json()) as { ready?: boolean }).ready === true) return at;
        } catch {
          /* not listening yet */
        }
        if (Date.now() > end) throw new Error(`service not ready after ${timeoutMs} ms: ${err}`);
        await sleep(5);
      }
    },
    async stop() {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      proc.kill('SIGTERM');
      const t = setTimeout(() => proc.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(t);
    },
    async kill() {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      proc.kill('SIGKILL');
      await exited;
    },
  };
}

/** Builds core/dist as `npm run build:server` does (a bench of the built service runs this first). */
export function buildService(): void {
  const r = spawnSync(process.execPath, ['scripts/build/server.ts'], {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  if (r.status !== 0) throw new Error(`npm run build:server failed: ${r.stderr.toString('utf8')}`);
}

/** benchEntry()'s answer: core/dist is built once in a bench's process. */
let chosenEntry: 'built' | 'source' | undefined;

/**
 * Which service a bench runs, from BENCH_ENTRY: `built` (the default, what `npm start` runs; core/dist is rebuilt
 * first) or `source` (core/src/main.ts).
 */
export function benchEntry(): 'built' | 'source' {
  if (chosenEntry) return chosenEntry;
  const entry = process.env.BENCH_ENTRY ?? 'built';
  if (entry !== 'built' && entry !== 'source') throw new Error('BENCH_ENTRY: built or source');
  if (entry === 'built') buildService();
  chosenEntry = entry;
  return entry;
}

/** A JSON API client bound to the service and, once set, a bearer token. */
export class Api {
  base: string;
  token?: string;
  constructor(base: string) {
    this.base = base;
  }

  async call<T = any>(method: string, p: string, body?: unknown): Promise<{ status: number; body: T }> {
    const headers: Record<string, string> = {};
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (this.token) headers.authorization = `Bearer ${this.token}`;
    const r = await fetch(this.base + p, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await r.text();
    let parsed: any = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      /* not JSON */
    }
    return { status: r.status, body: parsed };
  }

  /** Like `call`, but throws unless the status is 2xx. */
  async ok<T = any>(method: string, p: string, body?: unknown): Promise<T> {
    const r = await this.call<T>(method, p, body);
    if (r.status < 200 || r.status >= 300) throw new Error(`${method} ${p}: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  }

  /** First-run setup: creates the admin and keeps its token. */
  async setup(email = 'bench@example.test', password = 'bench password 123'): Promise<{ id: string }> {
    const r = await this.ok<{ access_token: string; user: { id: string } }>('POST', '/api/setup', { email, password });
    this.token = r.access_token;
    return r.user;
  }
}
