/**
 * Diagnostic (not one of the five benchmarks): offers BENCH_PACED_N webhooks at BENCH_RATE/s to a
 * fresh relay chain and prints, per 500 ms of send time, the median and worst send → arrival and
 * send → 202 latency, so periodic stalls show where they are. `npx node scripts/bench/paced-trace.ts`
 */
import fs from 'node:fs';
import { closedLoop, pacedLoop } from './lib/load.ts';
import { deliveries, startChain } from './lib/relay-setup.ts';
import { startSink } from './lib/sink.ts';
import { envInt, fmt, sleep, wallMs } from './lib/stats.ts';

const N = envInt('BENCH_PACED_N', 5_000);
const RATE = envInt('BENCH_RATE', 1_000);
const BURST = envInt('BENCH_N', 0);
const sink = await startSink(N + 500 + BURST);
const chain = await startChain(sink.url, process.env.HERALD_SQL_PROFILE ? { HERALD_SQL_PROFILE: '1' } : {});
try {
  const warm = await pacedLoop(chain.hookUrl, deliveries(0, 500), RATE);
  await sink.waitDistinct(500, 30_000);
  void warm;
  if (BURST) {
    await closedLoop(chain.hookUrl, deliveries(500 + N, BURST), 32);
    await sink.waitDistinct(500 + BURST, 120_000);
    await sleep(envInt('BENCH_GAP_MS', 0));
    process.stdout.write(`after a burst of ${BURST}: RSS ${fmt(chain.herald.rssKb() / 1024, 0)} MB\n`);
  }
  process.stdout.write(
    `paced phase starts ${fmt((wallMs() - chain.herald.spawnedAt) / 1000, 2)} s after the service was spawned\n`,
  );
  const r = await pacedLoop(chain.hookUrl, deliveries(500, N), RATE);
  await sink.waitDistinct(N + 500 + BURST, 60_000);
  await sleep(200);
  const bucket = 500;
  const rows = new Map<number, { arr: number[]; ack: number[]; gap: number }>();
  for (let i = 0; i < N; i++) {
    const b = Math.floor((r.sentAt[i]! - r.started) / bucket);
    const row = rows.get(b) ?? { arr: [], ack: [], gap: 0 };
    if (i > 0) row.gap = Math.max(row.gap, r.sentAt[i]! - r.sentAt[i - 1]!);
    row.arr.push(sink.at[500 + i]! - r.sentAt[i]!);
    row.ack.push(r.ackAt[i]! - r.sentAt[i]!);
    rows.set(b, row);
  }
  const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  for (const [b, row] of [...rows].sort((x, y) => x[0] - y[0])) {
    process.stdout.write(
      `${String(b * bucket).padStart(6)} ms  arrival p50 ${fmt(med(row.arr), 1).padStart(7)} max ` +
        `${fmt(Math.max(...row.arr), 1).padStart(7)}   ack p50 ${fmt(med(row.ack), 1).padStart(6)} max ` +
        `${fmt(Math.max(...row.ack), 1).padStart(7)}   sends ${row.arr.length} longest gap ${fmt(row.gap, 1)} ms\n`,
    );
  }
} finally {
  await chain.herald.stop();
  if (process.env.HERALD_SQL_PROFILE)
    process.stdout.write(chain.herald.stderr().slice(chain.herald.stderr().indexOf('SQL profile')) + '\n');
  await sink.close();
  fs.rmSync(chain.opts.dataDir, { recursive: true, force: true });
}
