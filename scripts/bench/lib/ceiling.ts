/**
 * The ingestion ceiling: a bare Fastify + SQLite insert route (baseline/ingest-ceiling.ts) in a child process, driven
 * like the relay.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { ROOT, tempDir } from './herald.ts';
import { closedLoop } from './load.ts';
import { deliveries } from './relay-setup.ts';
import type { Sink } from './sink.ts';
import { ownCpuMs, procCpuMs } from './stats.ts';

/**
 * Requests/s it accepts and its CPU time per request (ms), over `n` signed webhooks after `warm` at
 * `concurrency` connections. `bare`: the route answers without inserting (the HTTP exchange alone). `sink`: the
 * process also posts each request's chat message to it (both exchanges in one process); the CPU time then runs until
 * every message arrived. `loadCpuPerReq`: the CPU time (ms) this process (the load generator, and a sink given to it)
 * spent per request meanwhile, on the same cores.
 */
export async function ingestCeiling(
  n: number,
  warm: number,
  concurrency: number,
  o: { bare?: boolean; sink?: Sink } = {},
): Promise<{ rate: number; cpuPerReq: number; loadCpuPerReq: number }> {
  const dir = tempDir('ceiling');
  const child = spawn(
    process.execPath,
    [
      'scripts/bench/baseline/ingest-ceiling.ts',
      dir,
      ...(o.bare ? ['--bare'] : []),
      ...(o.sink ? ['--relay', o.sink.url] : []),
    ],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  try {
    const port = await new Promise<number>((resolve, reject) => {
      child.stdout!.once('data', (c: Buffer) => resolve(Number(c.toString().trim())));
      child.once('exit', (code) => reject(new Error(`ceiling server exited ${code}`)));
    });
    const url = `http://127.0.0.1:${port}/hook`;
    await closedLoop(url, deliveries(0, warm), concurrency);
    if (o.sink && (await o.sink.waitDistinct(warm, 30_000)) < warm) throw new Error('the sink missed messages');
    const cpu0 = procCpuMs(child.pid!);
    const own0 = ownCpuMs();
    const r = await closedLoop(url, deliveries(warm, n), concurrency);
    const own = ownCpuMs() - own0;
    if (o.sink && (await o.sink.waitDistinct(warm + n, 120_000)) < warm + n)
      throw new Error('the sink missed messages');
    const cpu = procCpuMs(child.pid!) - cpu0;
    const ok = r.status.filter((s) => s === 202).length;
    return { rate: ok / ((r.finished - r.started) / 1000), cpuPerReq: cpu / ok, loadCpuPerReq: own / ok };
  } finally {
    child.kill('SIGTERM');
    await new Promise((res) => {
      if (child.exitCode !== null || child.signalCode !== null) res(undefined);
      else child.once('exit', res);
    });
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
