/**
 * CI bar for the relay's CPU per event (`npm run bench:ci-bar`, run by .ci/run after the tests).
 *
 * A short relay benchmark: the ingestion ceiling (bare Fastify + SQLite insert route) and the relay
 * chain (signed GitHub push → event log → chat-webhook target → loopback sink), driven with 2 × BENCH_N
 * and BENCH_N (2,000) webhooks at 32 connections after a warm-up. The figure is a ratio of CPU times
 * measured in the same run — the service's CPU per delivered event over the ceiling's CPU per
 * request — so other work on the machine moves both sides alike. BENCH_RUNS (3) runs, as many
 * again when their median is over the bar; the median ratio is compared with the `ci-bar: cpu_ratio=<x>` line of
 * scripts/bench/RESULTS.md and the bar fails when it is more than BENCH_TOLERANCE (30 %) above it, or when any run lost
 * or duplicated
 * an event. BENCH_CI_BAR=off skips it (a machine without the loopback budget).
 */
import fs from 'node:fs';
import path from 'node:path';
import { ingestCeiling } from './lib/ceiling.ts';
import { ROOT } from './lib/herald.ts';
import { closedLoop } from './lib/load.ts';
import { deliveries, outcome, startChain } from './lib/relay-setup.ts';
import { startSink } from './lib/sink.ts';
import { envInt, fmt, procCpuMs, sleep, wallMs } from './lib/stats.ts';

const N = envInt('BENCH_N', 2_000);
const RUNS = envInt('BENCH_RUNS', 3);
const C = 32;
const WARM = 500;
const TOLERANCE = Number(process.env.BENCH_TOLERANCE ?? '0.3');
const RESULTS = path.join(ROOT, 'scripts/bench/RESULTS.md');

/** The recorded ratio: the first `ci-bar: cpu_ratio=<x>` line of RESULTS.md. */
function recordedRatio(text: string): number | undefined {
  const m = /ci-bar: cpu_ratio=([0-9]+(?:\.[0-9]+)?)/.exec(text);
  return m ? Number(m[1]) : undefined;
}

interface Run {
  ratio: number;
  cpuUs: number;
  ceilingUs: number;
  lost: number;
  duplicates: number;
  delivered: number;
}

async function once(): Promise<Run> {
  // Twice as many requests for the ceiling: its CPU time is short, and /proc counts in 10 ms ticks.
  const ceiling = await ingestCeiling(2 * N, WARM, C);
  const total = WARM + N;
  const sink = await startSink(total);
  const chain = await startChain(sink.url);
  try {
    await closedLoop(chain.hookUrl, deliveries(0, WARM), C);
    await sink.waitDistinct(WARM, 30_000);
    const cpu0 = procCpuMs(chain.herald.pid);
    const load = await closedLoop(chain.hookUrl, deliveries(WARM, N), C);
    const end = wallMs() + 60_000;
    while (sink.total() < total && wallMs() < end) await sleep(20);
    const cpu = procCpuMs(chain.herald.pid) - cpu0;
    // A late duplicate would arrive after the last distinct id: give it a moment.
    await sleep(300);
    const o = outcome(load, sink, WARM);
    const cpuPerEvent = cpu / Math.max(1, o.delivered);
    return {
      ratio: cpuPerEvent / ceiling.cpuPerReq,
      cpuUs: cpuPerEvent * 1000,
      ceilingUs: ceiling.cpuPerReq * 1000,
      lost: o.lost + o.rejected,
      duplicates: o.duplicates,
      delivered: o.delivered,
    };
  } finally {
    await chain.herald.stop();
    await sink.close();
    fs.rmSync(chain.opts.dataDir, { recursive: true, force: true });
  }
}

async function main(): Promise<number> {
  if (process.env.BENCH_CI_BAR === 'off') {
    process.stdout.write('ci-bar: skipped (BENCH_CI_BAR=off)\n');
    return 0;
  }
  const recorded = recordedRatio(fs.readFileSync(RESULTS, 'utf8'));
  if (recorded === undefined) {
    process.stderr.write('ci-bar: no `ci-bar: cpu_ratio=<x>` line in scripts/bench/RESULTS.md\n');
    return 1;
  }
  const runs: Run[] = [];
  const run = async () => {
    const r = await once();
    runs.push(r);
    process.stdout.write(
      `ci-bar run ${runs.length}: ${fmt(r.cpuUs, 0)} µs CPU per delivered event, ceiling ${fmt(r.ceilingUs, 0)} ` +
        `µs per request, ratio ${fmt(r.ratio, 2)}; delivered ${r.delivered}, lost ${r.lost}, duplicated ` +
        `${r.duplicates}\n`,
    );
  };
  const medianOf = () => {
    const ratios = runs.map((r) => r.ratio).sort((a, b) => a - b);
    return ratios[Math.floor(ratios.length / 2)]!;
  };
  for (let i = 0; i < RUNS; i++) await run();
  const bar = recorded * (1 + TOLERANCE);
  // Over the bar: as many runs again before judging on the median of all. A regression shows in
  // every run; a burst of other work on a shared machine (single runs here have ranged from 5.2
  // to 7.3 against a median near 5.5) shows in a few.
  if (medianOf() > bar) {
    process.stdout.write(
      `ci-bar: median ${fmt(medianOf(), 2)} of ${runs.length} runs is over the bar ${fmt(bar, 2)}; ${RUNS} more ` +
        `runs to confirm\n`,
    );
    for (let i = 0; i < RUNS; i++) await run();
  }
  const median = medianOf();
  const lossy = runs.some((r) => r.lost || r.duplicates);
  process.stdout.write(
    `ci-bar: median cpu_ratio=${fmt(median, 2)} (recorded ${recorded}, bar ` +
      `${fmt(bar, 2)})${lossy ? '; events were lost or duplicated' : ''}\n`,
  );
  if (lossy) return 1;
  if (median > bar) {
    process.stderr.write(
      `ci-bar: CPU per event regressed: ratio ${fmt(median, 2)} is more than ${Math.round(TOLERANCE * 100)} % ` +
        `above the recorded ${recorded}\n`,
    );
    return 1;
  }
  return 0;
}

process.exitCode = await main();
