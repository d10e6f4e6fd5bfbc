/**
 * Benchmark 1, relay end to end: signed GitHub push webhooks → event log → template → chat-webhook
 * target (mattermost) → loopback sink that records each arrival by the id in the commit message.
 * Baselines measured in the same run: a bare Fastify + SQLite insert route (the ingestion
 * ceiling) and Debian's Apprise delivering the same number of notifications to the same kind of sink.
 *
 * `npm run bench:relay` (BENCH_N, BENCH_PACED_N, BENCH_RATE, BENCH_CONCURRENCY, BENCH_APPRISE_N shrink or grow it).
 * It runs the built service (core/dist, rebuilt first), as `npm start` does; BENCH_ENTRY=source runs
 * core/src/main.ts instead (the figures recorded before the seventeenth session were taken that way).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { ingestCeiling } from './lib/ceiling.ts';
import { benchEntry, ROOT } from './lib/herald.ts';
import { closedLoop, pacedLoop } from './lib/load.ts';
import { deliveries, type Outcome, outcome, startChain } from './lib/relay-setup.ts';
import { startSink } from './lib/sink.ts';
import {
  envInt,
  fmt,
  heading,
  line,
  ownCpuMs,
  procCpuMs,
  rateHalfRoom,
  record,
  sleep,
  threadCpuMs,
  wallMs,
} from './lib/stats.ts';

const N = envInt('BENCH_N', 10_000);
const PACED_N = envInt('BENCH_PACED_N', 10_000);
const RATE = envInt('BENCH_RATE', 1_000);
const C = envInt('BENCH_CONCURRENCY', 32);
const APPRISE_N = envInt('BENCH_APPRISE_N', N);
const WARM = 500;
const ENTRY = benchEntry();

async function apprise(): Promise<number> {
  if (spawnSync('/usr/bin/python3', ['-c', 'import apprise']).status !== 0) {
    process.stdout.write('  installing apprise (apt-get install -y apprise)\n');
    const inst = spawnSync('apt-get', ['install', '-y', 'apprise'], { stdio: 'ignore' });
    if (inst.status !== 0) throw new Error('apprise is missing and apt-get install -y apprise failed');
  }
  const sink = await startSink(APPRISE_N);
  try {
    const port = new URL(sink.url).port;
    const r = spawnSync('/usr/bin/python3', ['scripts/bench/baseline/apprise_loop.py', port, String(APPRISE_N)], {
      cwd: ROOT,
      encoding: 'utf8',
      maxBuffer: 1 << 20,
    });
    if (r.status !== 0) throw new Error(`apprise loop failed: ${r.stderr}`);
    const { start, failed } = JSON.parse(r.stdout.trim().split('\n').pop()!) as {
      start: number;
      end: number;
      failed: number;
    };
    const got = await sink.waitDistinct(APPRISE_N, 10_000);
    let last = 0;
    for (let i = 0; i < APPRISE_N; i++) last = Math.max(last, sink.at[i]!);
    if (failed || got < APPRISE_N)
      process.stdout.write(`  apprise: ${failed} failed, ${got} of ${APPRISE_N} arrived\n`);
    return got / ((last - start) / 1000);
  } finally {
    await sink.close();
  }
}

function report(label: string, o: Outcome): void {
  line(`${label}: sent / accepted / delivered`, `${o.sent} / ${o.accepted} / ${o.delivered}`);
  line(`${label}: lost / duplicates / rejected`, `${o.lost} / ${o.duplicates} / ${o.rejected}`, {
    text: '0 lost, 0 duplicated',
    ok: o.lost === 0 && o.duplicates === 0,
  });
  line(
    `${label}: latency p50 / p95 / p99 / max`,
    `${fmt(o.latency.p50, 2)} / ${fmt(o.latency.p95, 2)} / ${fmt(o.latency.p99, 2)} / ${fmt(o.latency.max, 1)} ms`,
  );
}

async function main(): Promise<void> {
  heading(`relay end to end (N=${N} closed loop at ${C} connections, ${PACED_N} paced at ${RATE}/s, ${ENTRY})`);
  const { rate: ceiling, cpuPerReq, loadCpuPerReq } = await ingestCeiling(N, WARM, C);
  line(
    'baseline: Fastify + SQLite insert route',
    `${fmt(ceiling, 0)} requests/s, ${fmt(cpuPerReq * 1000, 0)} µs CPU per request`,
  );

  const total = WARM + N + 2 * PACED_N;
  const sink = await startSink(total);
  const chain = await startChain(sink.url, {}, ENTRY);
  let peakKb = 0;
  try {
    // Warm-up: JIT, connection pools, template cache.
    await closedLoop(chain.hookUrl, deliveries(0, WARM), C);
    await sink.waitDistinct(WARM, 30_000);

    // Steady state first: the offered 1,000/s on a warm service, before any burst has left work
    // behind (a WAL to checkpoint, a grown heap). The same rate right after the burst is reported
    // too, as the recovery figure.
    const paced = await pacedLoop(chain.hookUrl, deliveries(WARM, PACED_N), RATE);
    await waitFor(sink, WARM, PACED_N, paced, 60_000);
    const steady = outcome(paced, sink, WARM);
    const offered = PACED_N / ((paced.sentAt[PACED_N - 1]! - paced.started) / 1000);
    line('paced: offered rate achieved', `${fmt(offered, 0)} events/s`);
    report('paced', steady);
    line('paced: p99 send → arrival', `${fmt(steady.latency.p99, 2)} ms`, {
      text: `<= 50 ms at ${RATE}/s`,
      ok: steady.latency.p99 <= 50,
    });

    const from = WARM + PACED_N;
    const reqs = deliveries(from, N);
    const cpu0 = procCpuMs(chain.herald.pid);
    const threads0 = threadCpuMs(chain.herald.pid);
    const own0 = ownCpuMs();
    const load = await closedLoop(chain.hookUrl, reqs, C);
    await waitFor(sink, from, N, load, 120_000);
    const cpuPerEvent = (procCpuMs(chain.herald.pid) - cpu0) / N;
    // The load generator and the sink run in this process, on the same cores as the service.
    const toolsPerEvent = (ownCpuMs() - own0) / N;
    const mainPerEvent =
      ((threadCpuMs(chain.herald.pid).get('MainThread') ?? 0) - (threads0.get('MainThread') ?? 0)) / N;
    const burst = outcome(load, sink, from);
    line('herald: ingest (202) rate', `${fmt(burst.accepted / ((load.finished - load.started) / 1000), 0)} events/s`);
    line('herald: delivered rate at the sink', `${fmt(burst.rate, 0)} events/s`, {
      text: '>= 3,000/s',
      ok: burst.rate >= 3000,
    });
    report('burst', burst);
    line(
      'herald: service CPU per delivered event',
      `${fmt(cpuPerEvent * 1000, 0)} µs (${fmt(cpuPerEvent / cpuPerReq, 2)}× the ceiling's per request)`,
      { text: '<= 2.5× the ceiling’s', ok: cpuPerEvent / cpuPerReq <= 2.5 },
    );
    if (sink.unmatched()) line('sink: bodies without an id', String(sink.unmatched()));
    const bound = rateBound(ceiling, loadCpuPerReq, cpuPerEvent, mainPerEvent, toolsPerEvent);

    const after = await pacedLoop(chain.hookUrl, deliveries(from + N, PACED_N), RATE);
    await waitFor(sink, from + N, PACED_N, after, 60_000);
    const recovery = outcome(after, sink, from + N);
    report('paced right after the burst', recovery);
    peakKb = chain.herald.peakRssKb();
    line('herald: peak RSS (VmHWM)', `${fmt(peakKb / 1024, 1)} MB`, { text: '<= 250 MB', ok: peakKb / 1024 <= 250 });

    await chain.herald.stop();
    const appriseRate = await apprise();
    line(`baseline: apprise, ${APPRISE_N} notify() calls`, `${fmt(appriseRate, 0)} notifications/s`);
    const vsApprise = burst.rate / appriseRate;
    line('ratio herald / apprise', `${fmt(vsApprise, 2)}×`, { text: '>= 7×', ok: vsApprise >= 7 });
    line('ratio herald / ingestion ceiling', `${fmt(burst.rate / ceiling, 2)}×`, {
      text: '>= 0.5×',
      ok: burst.rate / ceiling >= 0.5,
    });
    record('relay', {
      entry: ENTRY,
      n: N,
      concurrency: C,
      ceiling,
      apprise: appriseRate,
      delivered_rate: burst.rate,
      ratio_apprise: vsApprise,
      ratio_ceiling: burst.rate / ceiling,
      cpu_us_per_event: cpuPerEvent * 1000,
      ceiling_cpu_us_per_request: cpuPerReq * 1000,
      burst: { ...burst },
      paced: { ...steady, offered },
      paced_after_burst: { ...recovery },
      peak_rss_mb: peakKb / 1024,
      rate_bound: bound,
    });
  } finally {
    await chain.herald.stop();
    await sink.close();
    fs.rmSync(chain.opts.dataDir, { recursive: true, force: true });
  }
}

/**
 * What bounds the delivered rate on this machine (all times in ms per event): the service, the load generator and
 * the sink share its cores, and the service's event loop is one thread. Prints the bound each sets, which one
 * limits, and the most the service could spend per event for the 0.5× the ceiling here.
 */
function rateBound(
  ceiling: number,
  ceilingLoad: number,
  service: number,
  main: number,
  tools: number,
): Record<string, number | string> {
  const { cores, rate: goal, roomUs } = rateHalfRoom(ceiling, tools * 1000);
  line(
    'bench tools on the same cores: CPU per event',
    `${fmt(tools * 1000, 0)} µs (load generator + sink; the ceiling's load generator ` +
      `${fmt(ceilingLoad * 1000, 0)} µs a request)`,
  );
  line('herald: main thread CPU per delivered event', `${fmt(main * 1000, 0)} µs`);
  const byCores = (cores * 1000) / (service + tools);
  const byLoop = 1000 / main;
  const limit = byCores <= byLoop ? `${cores} cores` : 'the event loop';
  line(
    'bound on the delivered rate here',
    `${fmt(Math.min(byCores, byLoop), 0)}/s = ${fmt(Math.min(byCores, byLoop) / ceiling, 2)}× the ceiling, set by ` +
      `${limit} (${cores} cores / (herald + tools): ${fmt(byCores, 0)}/s; one event loop: ${fmt(byLoop, 0)}/s)`,
  );
  line(
    'for 0.5× the ceiling on this machine',
    `herald could spend at most ${fmt(roomUs, 0)} µs an event (${fmt(roomUs / 1000 / service, 2)}× today's), its ` +
      `event loop at most ${fmt(1e6 / goal, 0)} µs`,
  );
  return {
    cores,
    tools_cpu_us_per_event: tools * 1000,
    ceiling_load_cpu_us_per_request: ceilingLoad * 1000,
    main_thread_cpu_us_per_event: main * 1000,
    by_cores: byCores,
    by_event_loop: byLoop,
    limit,
    most_cpu_us_per_event_for_half_the_ceiling: roomUs,
  };
}

/** Waits until every accepted id of the range arrived, or the deadline passed. */
async function waitFor(
  sink: Awaited<ReturnType<typeof startSink>>,
  from: number,
  n: number,
  load: { status: Int32Array },
  ms: number,
): Promise<void> {
  const end = wallMs() + ms;
  for (;;) {
    let missing = 0;
    for (let i = 0; i < n; i++)
      if (load.status[i]! >= 200 && load.status[i]! < 300 && sink.count[from + i] === 0) missing++;
    if (!missing || wallMs() > end) return;
    await sleep(20);
  }
}

await main();
