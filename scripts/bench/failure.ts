/**
 * Benchmark 2, relay under failure, on the same chain as bench:relay:
 *  A. the sink answers 503 for 30 s in the middle of a paced run, then recovers;
 *  B. the service is SIGKILLed in the middle of a paced run and restarted on the same data.
 * Reports delivered, lost (accepted with 202 but never delivered), duplicate arrivals and the time
 * to drain the backlog. Baseline: the same paced run with nothing failing, drained in the same way.
 *
 * `npm run bench:failure` (BENCH_FAIL_RATE, BENCH_FAIL_SECONDS, BENCH_OUTAGE_SECONDS adjust it).
 */
import fs from 'node:fs';
import path from 'node:path';
import Sqlite from 'better-sqlite3';
import { benchEntry, spawnHerald } from './lib/herald.ts';
import { pacedLoop } from './lib/load.ts';
import { deliveries, type Outcome, outcome, startChain } from './lib/relay-setup.ts';
import { type Sink, startSink } from './lib/sink.ts';
import { envInt, fmt, heading, line, record, sleep, wallMs } from './lib/stats.ts';

const RATE = envInt('BENCH_FAIL_RATE', 500);
const SECONDS = envInt('BENCH_FAIL_SECONDS', 50);
const OUTAGE_S = envInt('BENCH_OUTAGE_SECONDS', 30);
const N = RATE * SECONDS;
// What boots: the built service (`npm start`'s, the default) or the sources (BENCH_ENTRY=source).
const ENTRY = benchEntry();
/** How long a run may take to drain after its load ends (retries back off up to ~64 s at the 6th attempt). */
const DRAIN_LIMIT_MS = 240_000;

/** Waits until every accepted id arrived (or the limit); returns the wall time of the last first-arrival. */
async function drained(sink: Sink, statuses: Int32Array, from: number, limitMs: number): Promise<boolean> {
  const end = wallMs() + limitMs;
  for (;;) {
    let missing = 0;
    for (let i = 0; i < statuses.length; i++)
      if (statuses[i]! >= 200 && statuses[i]! < 300 && sink.count[from + i] === 0) missing++;
    if (!missing) return true;
    if (wallMs() > end) return false;
    await sleep(50);
  }
}

/** For accepted ids that never arrived: what the service's database says about their deliveries. */
function explainLost(dataDir: string, sink: Sink, statuses: Int32Array, from: number): void {
  const lost: number[] = [];
  for (let i = 0; i < statuses.length; i++)
    if (statuses[i]! >= 200 && statuses[i]! < 300 && sink.count[from + i] === 0) lost.push(from + i);
  if (!lost.length) return;
  const db = new Sqlite(path.join(dataDir, 'herald.db'), { readonly: true });
  try {
    const q = db.prepare(
      'SELECT e.dispatch_status, d.status, d.attempts, d.last_error, d.next_attempt_at, d.lease_until FROM ' +
        `event_log e
      LEFT JOIN deliveries d ON d.event_id = e.id WHERE e.payload LIKE ?`,
    );
    for (const id of lost.slice(0, 5)) line(`  lost id ${id}`, JSON.stringify(q.all(`%benchid${id}x%`)));
  } finally {
    db.close();
  }
}

function report(label: string, o: Outcome, drainMs: number, drainLabel: string): void {
  line(`${label}: sent / accepted / refused`, `${o.sent} / ${o.accepted} / ${o.rejected}`);
  line(`${label}: delivered / lost / duplicates`, `${o.delivered} / ${o.lost} / ${o.duplicates}`, {
    text: '0 lost',
    ok: o.lost === 0,
  });
  line(`${label}: ${drainLabel}`, `${fmt(drainMs / 1000, 2)} s`);
}

async function baseline(): Promise<number> {
  const sink = await startSink(N);
  const chain = await startChain(sink.url, {}, ENTRY);
  try {
    const load = await pacedLoop(chain.hookUrl, deliveries(0, N), RATE);
    await drained(sink, load.status, 0, 60_000);
    const o = outcome(load, sink, 0);
    const drainMs = o.lastArrival - load.finished;
    report('baseline (no failure)', o, drainMs, 'drain after the last send');
    return o.lastArrival - load.started;
  } finally {
    await chain.herald.stop();
    await sink.close();
    fs.rmSync(chain.opts.dataDir, { recursive: true, force: true });
  }
}

async function sinkOutage(): Promise<Record<string, unknown>> {
  const sink = await startSink(N);
  const chain = await startChain(sink.url, {}, ENTRY);
  try {
    const t0 = wallMs();
    const outageStart = 5_000;
    let recoveredAt = 0;
    const fail = setTimeout(() => sink.respond(503), outageStart);
    const heal = setTimeout(
      () => {
        sink.respond(200);
        recoveredAt = wallMs();
      },
      outageStart + OUTAGE_S * 1000,
    );
    const load = await pacedLoop(chain.hookUrl, deliveries(0, N), RATE);
    await new Promise((r) => setTimeout(r, Math.max(0, t0 + outageStart + OUTAGE_S * 1000 - wallMs() + 10)));
    clearTimeout(fail);
    clearTimeout(heal);
    const complete = await drained(sink, load.status, 0, DRAIN_LIMIT_MS);
    const o = outcome(load, sink, 0);
    const drainMs = o.lastArrival - recoveredAt;
    report(`A. sink 503 for ${OUTAGE_S} s`, o, drainMs, 'backlog drained after recovery in');
    line('A. requests the sink refused', String(sink.refused()));
    if (!complete) {
      line('A. drain limit reached', `${DRAIN_LIMIT_MS / 1000} s`);
      explainLost(chain.opts.dataDir, sink, load.status, 0);
    }
    return { ...o, drain_ms: drainMs, refused_by_sink: sink.refused(), run_ms: o.lastArrival - load.started };
  } finally {
    await chain.herald.stop();
    await sink.close();
    fs.rmSync(chain.opts.dataDir, { recursive: true, force: true });
  }
}

async function killRestart(): Promise<Record<string, unknown>> {
  const sink = await startSink(N);
  const chain = await startChain(sink.url, {}, ENTRY);
  let herald = chain.herald;
  try {
    let restartedAt = 0;
    let readyAt = 0;
    const killer = setTimeout(
      () => {
        void (async () => {
          await herald.kill();
          restartedAt = wallMs();
          herald = spawnHerald(chain.opts);
          readyAt = await herald.ready();
        })();
      },
      Math.floor((SECONDS * 1000) / 2),
    );
    const load = await pacedLoop(chain.hookUrl, deliveries(0, N), RATE);
    while (!readyAt) await sleep(20);
    clearTimeout(killer);
    const complete = await drained(sink, load.status, 0, DRAIN_LIMIT_MS);
    const o = outcome(load, sink, 0);
    const drainMs = o.lastArrival - readyAt;
    report('B. SIGKILL + restart', o, drainMs, 'backlog drained after ready in');
    line('B. restart to ready', `${fmt((readyAt - restartedAt) / 1000, 2)} s`);
    if (!complete) {
      line('B. drain limit reached', `${DRAIN_LIMIT_MS / 1000} s`);
      explainLost(chain.opts.dataDir, sink, load.status, 0);
    }
    return { ...o, drain_ms: drainMs, restart_ms: readyAt - restartedAt, run_ms: o.lastArrival - load.started };
  } finally {
    await herald.stop();
    await sink.close();
    fs.rmSync(chain.opts.dataDir, { recursive: true, force: true });
  }
}

heading(`relay under failure (${N} events paced at ${RATE}/s)`);
const base = await baseline();
const a = await sinkOutage();
const b = await killRestart();
line(
  'first send → last arrival: baseline / A / B',
  `${fmt(base / 1000, 1)} / ${fmt((a.run_ms as number) / 1000, 1)} / ${fmt((b.run_ms as number) / 1000, 1)} s`,
);
line(
  'ratio A / baseline, B / baseline',
  `${fmt((a.run_ms as number) / base, 2)}×, ${fmt((b.run_ms as number) / base, 2)}×`,
);
record('failure', { rate: RATE, n: N, outage_s: OUTAGE_S, baseline_run_ms: base, sink_outage: a, kill_restart: b });
