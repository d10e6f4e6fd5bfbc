/**
 * Diagnostic (not one of the five benchmarks): where the service's memory goes during a burst.
 * Warms a fresh relay chain with 500 webhooks, sends BENCH_N (10,000) in a closed loop at
 * BENCH_CONCURRENCY (32), and samples every 250 ms the resident set (/proc) and the V8 heap as
 * the service's own /api/metrics reports it (new and old space committed, heap used, external).
 * `npx node scripts/bench/burst-memory.ts`; BENCH_NODE_ARGS passes V8 flags to the service. It runs what `npm start`
 * runs, the built service (core/dist, rebuilt first); BENCH_ENTRY=source runs core/src/main.ts instead.
 */
import fs from 'node:fs';
import { benchEntry } from './lib/herald.ts';
import { closedLoop } from './lib/load.ts';
import { deliveries, startChain } from './lib/relay-setup.ts';
import { startSink } from './lib/sink.ts';
import { envInt, fmt, procCpuMs, sleep, wallMs } from './lib/stats.ts';

const N = envInt('BENCH_N', 10_000);
const C = envInt('BENCH_CONCURRENCY', 32);
const WARM = 500;
const MB = 1024 * 1024;
const ENTRY = benchEntry();

interface Sample {
  t: number;
  rss: number;
  newSpace: number;
  oldSpace: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
  delivered: number;
}

function metric(text: string, name: string, label?: string): number {
  for (const l of text.split('\n')) {
    if (!l.startsWith(name)) continue;
    if (label ? !l.includes(label) : l[name.length] !== ' ') continue;
    return Number(l.slice(l.lastIndexOf(' ') + 1));
  }
  return Number.NaN;
}

const sink = await startSink(WARM + N);
const chain = await startChain(sink.url, {}, ENTRY);
try {
  await closedLoop(chain.hookUrl, deliveries(0, WARM), C);
  await sink.waitDistinct(WARM, 30_000);
  const samples: Sample[] = [];
  let sampling = true;
  const t0 = wallMs();
  const sampler = (async () => {
    while (sampling) {
      const text = await fetch(`${chain.herald.url}/api/metrics`)
        .then((r) => r.text())
        .catch(() => '');
      samples.push({
        t: wallMs() - t0,
        rss: chain.herald.rssKb() / 1024,
        newSpace: metric(text, 'nodejs_heap_space_size_total_bytes', 'space="new"') / MB,
        oldSpace: metric(text, 'nodejs_heap_space_size_total_bytes', 'space="old"') / MB,
        heapUsed: metric(text, 'nodejs_heap_size_used_bytes') / MB,
        heapTotal: metric(text, 'nodejs_heap_size_total_bytes') / MB,
        external: metric(text, 'nodejs_external_memory_bytes') / MB,
        delivered: sink.total(),
      });
      await sleep(250);
    }
  })();
  const cpu0 = procCpuMs(chain.herald.pid);
  const load = await closedLoop(chain.hookUrl, deliveries(WARM, N), C);
  await sink.waitDistinct(WARM + N, 120_000);
  const cpuUs = ((procCpuMs(chain.herald.pid) - cpu0) * 1000) / N;
  await sleep(500);
  sampling = false;
  await sampler;
  process.stdout.write(
    `burst of ${N}: ${fmt(N / ((load.finished - load.started) / 1000), 0)} accepted/s; peak RSS (VmHWM) ` +
      `${fmt(chain.herald.peakRssKb() / 1024, 1)} MB; service CPU ${fmt(cpuUs, 0)} µs per event (${ENTRY})\n`,
  );
  process.stdout.write('     t   rss  heap total / used   new   old  external  delivered\n');
  for (const s of samples) {
    process.stdout.write(
      `${fmt(s.t / 1000, 2).padStart(6)} ${fmt(s.rss, 0).padStart(5)} ${fmt(s.heapTotal, 0).padStart(10)} / ` +
        `${fmt(s.heapUsed, 0).padStart(4)} ${fmt(s.newSpace, 0).padStart(5)} ${fmt(s.oldSpace, 0).padStart(5)} ` +
        `${fmt(s.external, 1).padStart(9)} ${String(s.delivered).padStart(10)}\n`,
    );
  }
  if (process.env.BENCH_SMAPS) {
    // The largest mappings by resident size (anonymous ones are V8's heap, malloc arenas, thread stacks).
    const maps: { name: string; rss: number }[] = [];
    let cur: { name: string; rss: number } | undefined;
    for (const l of fs.readFileSync(`/proc/${chain.herald.pid}/smaps`, 'utf8').split('\n')) {
      const head = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/.exec(l);
      if (head) {
        cur = { name: `${l.split(' ')[0]} ${head[1] || '[anon]'}`, rss: 0 };
        maps.push(cur);
        continue;
      }
      if (cur && l.startsWith('Rss:')) cur.rss = Number(l.split(/\s+/)[1]) / 1024;
    }
    maps.sort((a, b) => b.rss - a.rss);
    process.stdout.write(`threads: ${fs.readdirSync(`/proc/${chain.herald.pid}/task`).length}\n`);
    for (const m of maps.slice(0, 25)) process.stdout.write(`${fmt(m.rss, 1).padStart(7)} MB  ${m.name}\n`);
  }
} finally {
  await chain.herald.stop();
  await sink.close();
  fs.rmSync(chain.opts.dataDir, { recursive: true, force: true });
}
