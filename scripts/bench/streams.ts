/**
 * Benchmark 3, assistant streams: STREAMS concurrent chats, each streaming CHUNKS chunks 20 ms
 * apart from the fake model (its own process, stamping each chunk with its emission time), read
 * through the service's SSE route. Per chunk: arrival − emission. Baseline in the same run: the
 * same clients reading the fake model directly. Reports the latency the service adds (p50/p99),
 * RSS per open stream and whether every stream completed.
 *
 * Before the measured run a few messages go through the service (BENCH_WARMUP chats, two
 * messages each, in their own chats), so lazy loading and JIT warm-up are done, as in a service
 * that has been running: steady state is what is measured.
 *
 * Issue 27's goal is read per phase: the added p99 of the chunks emitted while the streams are still being opened,
 * and of those emitted while all are open (from the last stream's first chunk to the first stream's last), each
 * against the direct baseline's same phase; the chunks emitted while the streams end are a third phase, printed. The
 * service's CPU time during the measured run is printed too (per stream, the least noisy figure of what opening and
 * relaying cost), and where a chunk's time through herald goes: emission → read and → written by the service (a
 * sampler preloaded into it), written → arrived at the clients (each chunk joined by its stamp), and the clients' own
 * loop in both runs.
 *
 * `npm run bench:streams` (BENCH_STREAMS, BENCH_CHUNKS, BENCH_WARMUP adjust it; BENCH_SQL_PROFILE=1 prints the
 * service's statement timings at exit, setup included; BENCH_LAG_OUT=<file> keeps the sampler's raw figures). It
 * runs the built service, as `npm start` does; BENCH_ENTRY=source runs core/src/main.ts.
 *
 * BENCH_PIN=1 pins the service to CPU 0 and this process (the clients) with the fake model to CPU 1 (taskset, every
 * thread of each), so that on a 2-core machine the two sides do not take each other's CPU: the direct baseline then
 * measures the clients and the model alone, and the service's loop has a core of its own (its GC and other threads
 * share it). The service is ready before the direct baseline runs, and both paths are warmed up first.
 * BENCH_PIN=<service cpus>/<client cpus> (taskset's list syntax, e.g. `0/1` or `0-1/2-3`) chooses the CPUs.
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { Agent, request } from 'undici';
import { Api, benchEntry, freePort, heraldOptions, ROOT, spawnHerald, tempDir } from './lib/herald.ts';
import { type Dist, dist, envInt, fmt, heading, line, procCpuMs, record, sleep, wallMs } from './lib/stats.ts';

const STREAMS = envInt('BENCH_STREAMS', 500);
/**
 * 250 chunks 20 ms apart (a 250-token reply at 50 tokens a second): a stream lasts 5 s, longer than 500 take to open
 * through the service (2–4 s on 2 cores, new messages waiting while its loop is busy), so that all of them do run at
 * once for a while before the first ones end, as issue 27's goal has it.
 */
const CHUNKS = envInt('BENCH_CHUNKS', 250);
const DELAY_MS = 20;
const USERS = Math.max(1, Math.ceil(STREAMS / 100));
const WARMUP = envInt('BENCH_WARMUP', 4);
/** What `npm start` runs, the built service (core/dist, rebuilt first); BENCH_ENTRY=source runs core/src/main.ts. */
const ENTRY = benchEntry();
const STAMP = /<t:(\d+\.\d+)>/g;
/**
 * BENCH_MODEL: `sleep` (the default) is the test fake (scripts/bench/lib/fake-model-server.ts), which sleeps DELAY_MS
 * after each write: streams opened in the same turn (the direct baseline's 500 at once) or fired by the same late
 * turn stay together from then on. `scheduled` is the model of this file (`--model`): the streams' chunks are spread
 * evenly over each DELAY_MS period (the n-th request's chunks come at phase (n mod STREAMS) × DELAY_MS / STREAMS of
 * the period, the first at least DELAY_MS after the request), whenever the requests came, and a late turn does not
 * move the later chunks. So the direct baseline and the service get the same even stream of emissions (25 chunks
 * a ms at the defaults), as from many independent users. In trials on a 2-core machine both still emitted up to
 * 60–110 chunks in one ms (a descheduled or late turn releases everything due in it), and neither steadied the
 * direct baseline's p99.
 */
const MODEL = process.env.BENCH_MODEL === 'scheduled' ? 'scheduled' : 'sleep';

if (process.argv[2] === '--model')
  await serveModel(Number(process.argv[3]), Number(process.argv[4]), Number(process.argv[5]));

/**
 * The scheduled fake model (see BENCH_MODEL): OpenAI's streaming wire format as the test fake sends it (a role
 * chunk, CHUNKS content chunks each carrying `<t:emission ms>`, a finish chunk, a usage chunk, `[DONE]`), built from
 * fixed strings. Prints its base URL; runs until SIGTERM.
 */
async function serveModel(chunks: number, delayMs: number, streams: number): Promise<never> {
  let seq = 0;
  const epoch = performance.now();
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      // This stream's phase in the period, and its first chunk's time: the first such time DELAY_MS after now.
      const phase = epoch + ((seq % streams) * delayMs) / streams;
      const first = phase + Math.ceil((performance.now() + delayMs - phase) / delayMs) * delayMs;
      const head = `data: {"id":"chatcmpl-bench${++seq}","object":"chat.completion.chunk","created":${Math.floor(
        Date.now() / 1000,
      )},"model":"bench-model","system_fingerprint":null,"choices":[{"index":0,"delta":`;
      const tail = ',"logprobs":null,"finish_reason":';
      res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
      res.write(`${head}{"role":"assistant","content":"","refusal":null}${tail}null}],"usage":null}\n\n`);
      let k = 0;
      const next = (): void => {
        if (res.destroyed) return;
        const stamp = (performance.timeOrigin + performance.now()).toFixed(3);
        res.write(`${head}{"content":"<t:${stamp}>"}${tail}null}],"usage":null}\n\n`);
        if (++k < chunks) {
          setTimeout(next, Math.max(0, first + k * delayMs - performance.now()));
          return;
        }
        res.write(`${head}{}${tail}"stop"}],"usage":null}\n\n`);
        res.write(
          `${head.slice(0, head.indexOf('"choices"'))}"choices":[],"usage":{"prompt_tokens":20,` +
            `"completion_tokens":${chunks},"total_tokens":${20 + chunks}}}\n\ndata: [DONE]\n\n`,
        );
        res.end();
      };
      setTimeout(next, Math.max(0, first - performance.now()));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  process.stdout.write(`http://127.0.0.1:${(server.address() as AddressInfo).port}/v1\n`);
  process.on('SIGTERM', () => {
    server.closeAllConnections();
    server.close(() => process.exit(0));
  });
  return new Promise<never>(() => {});
}
const PIN = pinSpec(process.env.BENCH_PIN);

/** BENCH_PIN: `1` → service on CPU 0, clients and model on CPU 1; `<a>/<b>` → service on a, clients on b. */
function pinSpec(v: string | undefined): { service: string; clients: string } | undefined {
  if (!v || v === '0') return undefined;
  if (v === '1') return { service: '0', clients: '1' };
  const m = /^([\d,-]+)\/([\d,-]+)$/.exec(v);
  if (!m) throw new Error(`BENCH_PIN: expected 1 or <service cpus>/<client cpus>, got ${v}`);
  return { service: m[1]!, clients: m[2]! };
}

/** Sets the CPU affinity of every thread of a process (threads it starts later inherit it). */
function pin(pid: number, cpus: string): void {
  const r = spawnSync('taskset', ['-a', '-p', '-c', cpus, String(pid)], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`taskset ${cpus} ${pid}: ${r.stderr || r.error?.message}`);
}

interface StreamResult {
  latencies: number[];
  emitted: number[];
  chunks: number;
  done: boolean;
  error?: string;
  /** Request sent → response headers (which the service sends with its first frame), ms. */
  startMs?: number;
  /** Request sent → the first chunk of the model's text read, ms. */
  firstMs?: number;
}

/** Reads one SSE / chat-completions stream, collecting arrival − emission for every stamp. */
async function consume(
  body: AsyncIterable<Buffer>,
  finished: (text: string) => boolean,
  sent: number,
): Promise<StreamResult> {
  const r: StreamResult = { latencies: [], emitted: [], chunks: 0, done: false };
  let buf = '';
  for await (const c of body) {
    const now = wallMs();
    buf += c.toString('utf8');
    const cut = buf.lastIndexOf('\n\n');
    if (cut < 0) continue;
    const frames = buf.slice(0, cut).split('\n\n');
    buf = buf.slice(cut + 2);
    for (const f of frames) {
      // The final frame repeats the whole reply (and so every stamp): it marks the end, nothing more.
      if (finished(f)) {
        r.done = true;
        continue;
      }
      for (const m of f.matchAll(STAMP)) {
        const at = Number(m[1]);
        r.firstMs ??= now - sent;
        r.latencies.push(now - at);
        r.emitted.push(at);
        r.chunks++;
      }
    }
  }
  return r;
}

async function runClients(
  open: (i: number) => Promise<StreamResult>,
  sample?: () => void,
): Promise<{ results: StreamResult[]; ms: number; clientsCpuMs: number; modelCpuMs: number }> {
  const started = wallMs();
  const cpu0 = process.cpuUsage();
  const model0 = procCpuMs(fakeProc.pid!);
  let live = true;
  const sampler = (async () => {
    while (live && sample) {
      sample();
      await sleep(100);
    }
  })();
  const results = await Promise.all(
    Array.from({ length: STREAMS }, (_, i) =>
      open(i).catch((err: Error) => ({ latencies: [], emitted: [], chunks: 0, done: false, error: err.message })),
    ),
  );
  live = false;
  await sampler;
  const cpu = process.cpuUsage(cpu0);
  return {
    results,
    ms: wallMs() - started,
    clientsCpuMs: (cpu.user + cpu.system) / 1000,
    modelCpuMs: procCpuMs(fakeProc.pid!) - model0,
  };
}

interface Phases {
  all: Dist;
  opening: Dist;
  open: Dist;
  closing: Dist;
  /** Wall time of the last stream's first chunk: the opening phase ends there. */
  allOpen: number;
  /**
   * Wall time of the first stream's last chunk, or `allOpen` if that came first: all are open until then, and the
   * closing phase starts.
   */
  firstEnd: number;
  /** Streams running (first chunk emitted, last not yet) at `allOpen`. */
  runningAtAllOpen: number;
}

/**
 * The service's own event loop, sampled from inside it (a module preloaded with --import): a 2 ms timer whose
 * lateness is recorded with its wall time and written to a file at exit. A chunk that reaches the service waits for
 * the loop, so this is what the service's loop adds to it, without the clients' and the model's scheduling in the
 * figure (other work on the machine is still in it).
 */
const LAG_SAMPLER = `import fs from 'node:fs';
import net from 'node:net';
const file = process.env.HERALD_BENCH_LAG_FILE;
// The figures go to typed arrays off the JavaScript heap, read without building strings: the sampler runs inside the
// service, and its own garbage (growing arrays copied, a string per stamp) would add to the service's collections.
class Series {
  constructor() {
    this.a = new Float64Array(1 << 16);
    this.n = 0;
  }
  push(v) {
    if (this.n === this.a.length) {
      const b = new Float64Array(this.a.length * 2);
      b.set(this.a);
      this.a = b;
    }
    this.a[this.n++] = v;
  }
  get length() {
    return this.n;
  }
  toJSON() {
    return Array.from(this.a.subarray(0, this.n));
  }
}
// The number written at i (digits and a point) in a Buffer or a string, up to the first other character.
function stampAt(b, i, code) {
  let v = 0;
  let scale = 0;
  for (let c = code(b, i); (c >= 48 && c <= 57) || c === 46; c = code(b, ++i)) {
    if (c === 46) scale = 1;
    else {
      v = v * 10 + (c - 48);
      if (scale) scale *= 10;
    }
  }
  return scale ? v / scale : v;
}
const byte = (b, i) => (i < b.length ? b[i] : -1);
const char = (s, i) => s.charCodeAt(i);
const at = new Series();
const late = new Series();
const cpu = new Series();
// Each delta frame written (the final frame, which repeats every stamp, is left out): its chunk's emission time and
// how long after it the service handed the frame to the kernel.
const emitted = new Series();
const written = new Series();
// Each stamp in what the service read from a socket (the model's chunks, as undici reads them): its emission time and
// how long after it the service had the bytes.
const readEmitted = new Series();
const read = new Series();
const socketRead = net.Socket.prototype.read;
net.Socket.prototype.read = function (...args) {
  const b = socketRead.apply(this, args);
  if (b && typeof b !== 'string') {
    const now = performance.timeOrigin + performance.now();
    for (let i = b.indexOf('<t:'); i >= 0; i = b.indexOf('<t:', i + 3)) {
      const stamp = stampAt(b, i + 3, byte);
      readEmitted.push(stamp);
      read.push(now - stamp);
    }
  }
  return b;
};
const write = net.Socket.prototype.write;
let writes = 0;
net.Socket.prototype.write = function (chunk, ...rest) {
  if (typeof chunk === 'string') {
    // A write may carry several delta frames (those of one read go out together), each with its stamp.
    const before = emitted.length;
    for (let f = chunk.indexOf('event: delta\\n'); f >= 0; f = chunk.indexOf('event: delta\\n', f + 13)) {
      const i = chunk.indexOf('<t:', f);
      const end = chunk.indexOf('\\n\\n', f);
      if (i < 0 || (end >= 0 && i > end)) continue;
      const stamp = stampAt(chunk, i + 3, char);
      emitted.push(stamp);
      written.push(performance.timeOrigin + performance.now() - stamp);
    }
    if (emitted.length > before) writes++;
  }
  return write.call(this, chunk, ...rest);
};
let due = performance.now() + 2;
const tick = () => {
  const now = performance.now();
  const c = process.threadCpuUsage();
  at.push(performance.timeOrigin + now);
  late.push(now - due);
  cpu.push((c.user + c.system) / 1000);
  due = now + 2;
  setTimeout(tick, 2).unref();
};
setTimeout(tick, 2).unref();
// For a closer look (BENCH_LAG_OUT): a CPU profile's clock (µs) against wall time, and the process's time origin
// (--trace-gc counts from about there).
const clock = { hr: Number(process.hrtime.bigint() / 1000n), wall: performance.timeOrigin + performance.now() };
const samples = {
  origin: performance.timeOrigin,
  clock,
  get writes() { return writes; },
  at, late, cpu, emitted, written, readEmitted, read,
};
process.on('exit', () => fs.writeFileSync(file, JSON.stringify(samples)));
`;

interface LagSamples {
  /** Socket writes that carried delta frames. */
  writes: number;
  at: number[];
  late: number[];
  cpu: number[];
  emitted: number[];
  written: number[];
  readEmitted: number[];
  read: number[];
}

/** p50 / p99 / max of the `late` values whose emission time is in [from, to). */
function byEmission(emitted: number[], late: number[], from: number, to: number): string {
  const d = dist(late.filter((_, i) => emitted[i]! >= from && emitted[i]! < to));
  return `${fmt(d.p50, 2)} / ${fmt(d.p99, 2)} / ${fmt(d.max, 1)} ms (${d.n} chunks)`;
}

/** A loop's 2 ms timer samples (the service's or the clients'): wall time, lateness, the thread's CPU time at each. */
type LoopSamples = Pick<LagSamples, 'at' | 'late' | 'cpu'>;

/** The loop's lateness p50 / p99 / max in [from, to) of wall time, from the sampler's file. */
function loopLate(samples: LoopSamples, from: number, to: number): string {
  const v = samples.late.filter((_, i) => samples.at[i]! >= from && samples.at[i]! < to);
  const d = dist(v);
  return `${fmt(d.p50, 2)} / ${fmt(d.p99, 2)} / ${fmt(d.max, 1)} ms (${d.n} samples)`;
}

/**
 * The part of each sample's lateness the service's main thread spent running (its CPU time since the previous sample,
 * capped at the lateness): what the loop's own work made the timer wait, without the time the machine's other work
 * kept the thread off a CPU. An upper bound of the own part by up to the 2 ms period (CPU spent before the timer was
 * due counts too).
 */
function loopLateOwn(samples: LoopSamples, from: number, to: number): string {
  const v: number[] = [];
  for (let i = 1; i < samples.at.length; i++)
    if (samples.at[i]! >= from && samples.at[i]! < to)
      v.push(Math.max(0, Math.min(samples.late[i]!, samples.cpu[i]! - samples.cpu[i - 1]!)));
  const d = dist(v);
  return `${fmt(d.p50, 2)} / ${fmt(d.p99, 2)} / ${fmt(d.max, 1)} ms`;
}

function summary(label: string, rs: StreamResult[]): Phases {
  const all = rs.flatMap((r) => r.latencies);
  const d = dist(all);
  const complete = rs.filter((r) => r.done && r.chunks === CHUNKS).length;
  line(`${label}: streams complete`, `${complete} / ${rs.length}`, {
    text: 'every stream complete',
    ok: complete === rs.length,
  });
  line(
    `${label}: arrival − emission p50 / p99 / max`,
    `${fmt(d.p50, 2)} / ${fmt(d.p99, 2)} / ${fmt(d.max, 1)} ms over ${d.n} chunks`,
  );
  // The tail split by phase, by emission time: chunks emitted while streams were still being opened (before the last
  // stream's first chunk), those emitted while every stream was open (up to the first stream's last chunk), and those
  // emitted while the streams end (their replies saved, their `done` frames sent, their sockets closed).
  const allOpen = Math.max(...rs.map((r) => r.emitted[0] ?? 0));
  const firstEnd = Math.max(allOpen, Math.min(...rs.map((r) => r.emitted.at(-1) ?? Number.POSITIVE_INFINITY)));
  const during: number[] = [];
  const after: number[] = [];
  const ending: number[] = [];
  for (const r of rs)
    r.latencies.forEach((l, i) => {
      const e = r.emitted[i]!;
      (e < allOpen ? during : e <= firstEnd ? after : ending).push(l);
    });
  const a = dist(during);
  const b = dist(after);
  const c = dist(ending);
  // How bunched the emissions were once all were open: the chunks emitted in the busiest 1 ms against the mean.
  const perMs = new Map<number, number>();
  for (const r of rs)
    for (const e of r.emitted)
      if (e >= allOpen && e <= firstEnd) perMs.set(Math.floor(e), (perMs.get(Math.floor(e)) ?? 0) + 1);
  const counts = [...perMs.values()].sort((x, y) => x - y);
  const span = Math.max(1, Math.max(...perMs.keys()) - Math.min(...perMs.keys()) + 1);
  line(
    `${label}: emitted per ms once all open`,
    `mean ${fmt(b.n / span, 1)}, p99 ${counts[Math.floor(counts.length * 0.99)] ?? 0}, max ${counts.at(-1) ?? 0}`,
  );
  // How many streams were running together: from its first chunk's emission to its last's. Openings spread over
  // longer than a stream lasts (CHUNKS × DELAY_MS) leave the first finished before the last starts.
  const spans = rs.filter((r) => r.emitted.length).map((r) => [r.emitted[0]!, r.emitted.at(-1)!] as const);
  const edges = spans.flatMap(([from, to]) => [[from, 1] as const, [to, -1] as const]).sort((x, y) => x[0] - y[0]);
  let running = 0;
  let most = 0;
  for (const [, step] of edges) most = Math.max(most, (running += step));
  const runningAtAllOpen = spans.filter(([from, to]) => from <= allOpen && to >= allOpen).length;
  line(`${label}: streams running at once, most / when the last opened`, `${most} / ${runningAtAllOpen}`);
  line(
    `${label}: p50 / p99 while opening | all open | closing`,
    `${fmt(a.p50, 2)} / ${fmt(a.p99, 2)} ms (${a.n} chunks) | ${fmt(b.p50, 2)} / ${fmt(b.p99, 2)} ms (${b.n}) | ` +
      `${fmt(c.p50, 2)} / ${fmt(c.p99, 2)} ms (${c.n})`,
  );
  // What pacing the openings costs the new streams: how long each waited for its response to start.
  const starts = dist(rs.flatMap((r) => (r.startMs === undefined ? [] : [r.startMs])));
  line(
    `${label}: request → response start p50 / p99 / max`,
    `${fmt(starts.p50, 1)} / ${fmt(starts.p99, 1)} / ${fmt(starts.max, 1)} ms`,
  );
  const firsts = dist(rs.flatMap((r) => (r.firstMs === undefined ? [] : [r.firstMs])));
  line(
    `${label}: request → first chunk p50 / p99 / max`,
    `${fmt(firsts.p50, 1)} / ${fmt(firsts.p99, 1)} / ${fmt(firsts.max, 1)} ms`,
  );
  const errors = [...new Set(rs.map((r) => r.error).filter(Boolean))];
  if (errors.length) line(`${label}: errors`, errors.slice(0, 3).join(' | '));
  return { all: d, opening: a, open: b, closing: c, allOpen, firstEnd, runningAtAllOpen };
}

heading(`assistant streams (${STREAMS} concurrent, ${CHUNKS} chunks ${DELAY_MS} ms apart)`);
// Pinned before the fake model starts, so that it inherits the clients' CPUs.
if (PIN) pin(process.pid, PIN.clients);
const load = (): string =>
  os
    .loadavg()
    .map((l) => fmt(l, 2))
    .join(' / ');
line('load average 1 / 5 / 15 min at start', load());
line(
  'service (BENCH_ENTRY)',
  ENTRY === 'built' ? 'built (core/dist, as npm start runs it)' : 'source (core/src/main.ts)',
);
line('model (BENCH_MODEL)', MODEL);
// Run as `nice -n -10 npm run bench:streams` (as root) so that other work on the machine takes less of the CPU.
line('niceness (inherited by the service and the model)', String(os.getPriority()));
line('CPU pinning (BENCH_PIN)', PIN ? `service on ${PIN.service}, clients and model on ${PIN.clients}` : 'none');
const fakeProc = spawn(
  process.execPath,
  MODEL === 'sleep'
    ? ['scripts/bench/lib/fake-model-server.ts', String(CHUNKS), String(DELAY_MS)]
    : [new URL(import.meta.url).pathname, '--model', String(CHUNKS), String(DELAY_MS), String(STREAMS)],
  { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] },
);
const baseUrl = await new Promise<string>((resolve) =>
  fakeProc.stdout!.once('data', (c: Buffer) => resolve(c.toString().trim())),
);
const agent = new Agent({
  connections: STREAMS * 2,
  keepAliveTimeout: 30_000,
  bodyTimeout: 120_000,
  headersTimeout: 120_000,
});
const dataDir = tempDir('streams');
const lagFile = `${dataDir}-loop-lag.json`;
fs.writeFileSync(`${dataDir}-lag.mjs`, LAG_SAMPLER);
const sampler = `--import=${new URL(`file://${dataDir}-lag.mjs`).href}`;
process.env.BENCH_NODE_ARGS = `${sampler} ${process.env.BENCH_NODE_ARGS ?? ''}`;
const opts = heraldOptions(
  dataDir,
  await freePort(),
  '@herald/provider-bridge-self',
  {
    HERALD_BENCH_LAG_FILE: lagFile,
    AI_BASE_URL: baseUrl,
    AI_API_KEY: 'sk-bench-key',
    AI_MODEL: 'bench-model',
    ...(process.env.BENCH_SQL_PROFILE === '1' ? { HERALD_SQL_PROFILE: '1' } : {}),
  },
  ENTRY,
);
const herald = spawnHerald(opts);
/** Wall-time windows for the service's loop lateness: the direct run (the service idle), opening, all open, ending. */
const windows: {
  idle?: [number, number];
  opening?: [number, number];
  open?: [number, number];
  closing?: [number, number];
} = {};
/**
 * The clients' own loop (this process, where every chunk's arrival is stamped): a 2 ms timer's lateness with its wall
 * time, as the service's sampler takes it. A chunk that reaches this process waits for this loop too, in both runs.
 */
const clientsLoop = { at: [] as number[], late: [] as number[], cpu: [] as number[] };
let clientsDue = performance.now() + 2;
const clientsTimer = setInterval(() => {
  const now = performance.now();
  const c = process.threadCpuUsage();
  clientsLoop.at.push(performance.timeOrigin + now);
  clientsLoop.late.push(now - clientsDue);
  clientsLoop.cpu.push((c.user + c.system) / 1000);
  clientsDue = now + 2;
}, 2).unref();
/** The chunks through herald as the clients got them: emission stamp and arrival − emission. */
let viaChunks: { emitted: number; latency: number }[] = [];
/** Each run's start, the wall time its last stream opened, the wall time its first stream ended, and its end. */
const clientsWindows: Partial<Record<'direct' | 'through herald', [number, number, number, number]>> = {};
if (PIN) pin(herald.pid, PIN.service);
try {
  // The service is ready (and idle) before the baseline runs: its start would otherwise share the CPU with it.
  await herald.ready();
  // Baseline: the same clients reading the fake model directly.
  const directStream = async (): Promise<StreamResult> => {
    const sent = wallMs();
    const res = await request(`${baseUrl}/chat/completions`, {
      method: 'POST',
      dispatcher: agent,
      headers: { 'content-type': 'application/json', authorization: 'Bearer sk-bench-key' },
      body: JSON.stringify({
        model: 'bench-model',
        stream: true,
        stream_options: { include_usage: true },
        messages: [{ role: 'user', content: 'hello' }],
      }),
    });
    const startMs = wallMs() - sent;
    return { ...(await consume(res.body, (t) => t.includes('data: [DONE]'), sent)), startMs };
  };
  // Warm-up of the direct path too (the clients' code and the model's), as many streams as the service's below.
  for (let round = 0; round < 2; round++) await Promise.all(Array.from({ length: WARMUP }, directStream));
  const directFrom = wallMs();
  const direct = await runClients(directStream);
  windows.idle = [directFrom, wallMs()];
  const base = summary('baseline (direct)', direct.results);

  const api = new Api(herald.url);
  await api.setup();
  const chats: { token: string; id: string }[] = [];
  const warm: { token: string; id: string }[] = [];
  for (let u = 0; u < USERS; u++) {
    const email = `bench${u}@example.test`;
    const user = await api.ok('POST', '/api/v1/admin/users', {
      email,
      password: 'bench user password',
      max_chats: 1000,
    });
    // Raise the user's daily limits so that the run is not refused by its quota.
    await api.ok('PATCH', `/api/v1/admin/users/${user.id ?? user.user?.id}`, {
      max_ai_messages_per_day: 1_000_000,
      max_ai_tokens_per_day: 1_000_000_000,
    });
    const login = await new Api(herald.url).ok('POST', '/api/auth/login', { email, password: 'bench user password' });
    const ua = new Api(herald.url);
    ua.token = login.access_token;
    for (let c = u * 100; c < Math.min(STREAMS, (u + 1) * 100); c++)
      chats.push({ token: login.access_token, id: (await ua.ok('POST', '/api/v1/chats', { title: `bench ${c}` })).id });
    if (u === 0)
      for (let w = 0; w < WARMUP; w++)
        warm.push({
          token: login.access_token,
          id: (await ua.ok('POST', '/api/v1/chats', { title: `warm-up ${w}` })).id,
        });
  }
  // Warm-up, outside the measurement: a few messages through the service, in chats of their own.
  const message = async (chat: { token: string; id: string }): Promise<StreamResult> => {
    const sent = wallMs();
    const res = await request(`${herald.url}/api/v1/chats/${chat.id}/messages`, {
      method: 'POST',
      dispatcher: agent,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${chat.token}` },
      body: JSON.stringify({ content: 'hello' }),
    });
    if (res.statusCode !== 200)
      return {
        latencies: [],
        emitted: [],
        chunks: 0,
        done: false,
        error: `HTTP ${res.statusCode}: ${(await res.body.text()).slice(0, 200)}`,
      };
    const startMs = wallMs() - sent;
    return { ...(await consume(res.body, (f) => f.startsWith('event: done'), sent)), startMs };
  };
  for (let round = 0; round < 2; round++) {
    const r = await Promise.all(warm.map(message));
    const failed = r.find((x) => !x.done);
    if (failed) throw new Error(`warm-up message failed: ${failed.error ?? 'incomplete stream'}`);
  }
  await sleep(1000);
  const idleKb = herald.rssKb();
  /** The service's RSS every 100 ms of the run, with its wall time. */
  const rss: [number, number][] = [];
  const cpuBefore = procCpuMs(herald.pid);
  const viaFrom = wallMs();
  const via = await runClients(
    (i) => message(chats[i]!),
    () => {
      rss.push([wallMs(), herald.rssKb()]);
    },
  );
  const cpuMs = procCpuMs(herald.pid) - cpuBefore;
  const phases = summary('through herald', via.results);
  windows.opening = [viaFrom, phases.allOpen];
  windows.open = [phases.allOpen, phases.firstEnd];
  windows.closing = [phases.firstEnd, viaFrom + via.ms];
  viaChunks = via.results.flatMap((r) => r.latencies.map((latency, i) => ({ emitted: r.emitted[i]!, latency })));
  clientsWindows.direct = [directFrom, base.allOpen, base.firstEnd, directFrom + direct.ms];
  clientsWindows['through herald'] = [viaFrom, phases.allOpen, phases.firstEnd, viaFrom + via.ms];
  const through = phases.all;
  const addedP50 = through.p50 - base.all.p50;
  const addedP99 = through.p99 - base.all.p99;
  const addedOpening = phases.opening.p99 - base.opening.p99;
  const addedOpen = phases.open.p99 - base.open.p99;
  const addedClosing = phases.closing.p99 - base.closing.p99;
  // What the open streams hold: the largest RSS while all of them were open. Over the whole run the peak also holds
  // the garbage of the streams' later chunks, more the longer they last, until a full collection returns it.
  const peakOf = (samples: [number, number][]) => Math.max(idleKb, ...samples.map(([, kb]) => kb));
  const peakKb = peakOf(rss);
  const openPeakKb = peakOf(rss.filter(([at]) => at >= phases.allOpen && at <= phases.firstEnd));
  const perStreamKb = (openPeakKb - idleKb) / STREAMS;
  line('added latency per chunk p50 / p99', `${fmt(addedP50, 2)} / ${fmt(addedP99, 2)} ms`, {
    text: 'p99 added <= 5 ms',
    ok: addedP99 <= 5,
  });
  line('added p99 while opening', `${fmt(addedOpening, 2)} ms`, { text: '<= 15 ms', ok: addedOpening <= 15 });
  // The goal is for all of them running at once: streams shorter than the openings take do not test it.
  const allRunning = phases.runningAtAllOpen === STREAMS;
  line(
    'added p99 once all are open',
    `${fmt(addedOpen, 2)} ms${allRunning ? '' : ` (only ${phases.runningAtAllOpen} of ${STREAMS} running at once)`}`,
    { text: `<= 5 ms with all ${STREAMS} running`, ok: addedOpen <= 5 && allRunning },
  );
  // Not a phase the goal names (fewer than all are open then), printed beside it: the replies saved, the `done`
  // frames, the sockets closed, among the streams still relaying.
  line('added p99 while they end', `${fmt(addedClosing, 2)} ms`);
  line(
    'herald CPU during the run',
    `${fmt(cpuMs, 0)} ms, ${fmt((1000 * cpuMs) / STREAMS, 0)} µs per stream (${CHUNKS} chunks each)`,
  );
  line(
    'herald RSS idle → peak while all open / over the run',
    `${fmt(idleKb / 1024, 1)} → ${fmt(openPeakKb / 1024, 1)} / ${fmt(peakKb / 1024, 1)} MB`,
  );
  line('memory per open stream', `${fmt(perStreamKb, 1)} KB (while all are open)`, {
    text: '<= 100 KB',
    ok: allRunning && perStreamKb <= 100,
  });
  const share = (cpu: number, ms: number) => `${fmt(cpu, 0)} ms (${fmt((100 * cpu) / ms, 0)} % of a core)`;
  line(
    'clients CPU, direct / through herald',
    `${share(direct.clientsCpuMs, direct.ms)} / ${share(via.clientsCpuMs, via.ms)}`,
  );
  line(
    'model CPU, direct / through herald',
    `${share(direct.modelCpuMs, direct.ms)} / ${share(via.modelCpuMs, via.ms)}`,
  );
  line(
    'wall time direct / through herald',
    `${fmt(direct.ms / 1000, 2)} / ${fmt(via.ms / 1000, 2)} s (${fmt(via.ms / direct.ms, 2)}×)`,
  );
  line('load average 1 / 5 / 15 min at end', load());
  record('streams', {
    streams: STREAMS,
    chunks: CHUNKS,
    pin: PIN ? `${PIN.service}/${PIN.clients}` : null,
    model: MODEL,
    warmup_messages: WARMUP * 2,
    baseline: base.all,
    herald: through,
    added_p50: addedP50,
    added_p99: addedP99,
    added_p99_opening: addedOpening,
    added_p99_open: addedOpen,
    added_p99_closing: addedClosing,
    cpu_ms: cpuMs,
    idle_kb: idleKb,
    peak_kb: peakKb,
    open_peak_kb: openPeakKb,
    per_stream_kb: perStreamKb,
  });
} finally {
  await herald.stop();
  if (process.env.BENCH_SQL_PROFILE === '1') {
    const at = herald.stderr().lastIndexOf('SQL profile:');
    if (at >= 0) process.stdout.write(`${herald.stderr().slice(at)}\n`);
  }
  if (windows.open && fs.existsSync(lagFile)) {
    const samples = JSON.parse(fs.readFileSync(lagFile, 'utf8')) as LagSamples;
    line('service loop lateness p50 / p99 / max', '(a 2 ms timer inside the service)');
    line('  during the direct run (service idle)', loopLate(samples, ...windows.idle!));
    line('  while the streams open', loopLate(samples, ...windows.opening!));
    line('  once all are open', loopLate(samples, ...windows.open));
    line('  while they end', loopLate(samples, ...windows.closing!));
    line('its own part (main thread running) p50 / p99 / max', '(the lateness less the time off the CPU)');
    line('  during the direct run (service idle)', loopLateOwn(samples, ...windows.idle!));
    line('  while the streams open', loopLateOwn(samples, ...windows.opening!));
    // The requests all arrive at the start: the first half of the opening holds their intake.
    const [from, to] = windows.opening!;
    line(
      '    its first half | second half',
      `${loopLateOwn(samples, from, (from + to) / 2)} | ${loopLateOwn(samples, (from + to) / 2, to)}`,
    );
    line('  once all are open', loopLateOwn(samples, ...windows.open));
    line('  while they end', loopLateOwn(samples, ...windows.closing!));
    // The same phases as the added latency's (by emission time): how much of a chunk's way is the model's and the
    // service's, up to the frame's write, and how much the kernel's and the client's after it.
    const [opened, ending, end] = [windows.open[0], windows.open[1], Number.POSITIVE_INFINITY];
    line('chunk emitted → read by the service p50 / p99 / max', "(the stamps in the service's socket reads)");
    line('  while the streams open', byEmission(samples.readEmitted, samples.read, windows.opening![0], opened));
    line('  once all are open', byEmission(samples.readEmitted, samples.read, opened, ending));
    line('  while they end', byEmission(samples.readEmitted, samples.read, ending, end));
    line('chunk emitted → written by the service p50 / p99 / max', '(the stamp in each frame written)');
    line('  while the streams open', byEmission(samples.emitted, samples.written, windows.opening![0], opened));
    line('  once all are open', byEmission(samples.emitted, samples.written, opened, ending));
    line('  while they end', byEmission(samples.emitted, samples.written, ending, end));
    line('delta frames written / socket writes', `${samples.emitted.length} / ${samples.writes}`);
    // Each chunk through herald joined by its stamp to the frame the service wrote: what the kernel and the clients'
    // process add after the service's write (a stamp that two chunks share is left out).
    const writtenAt = new Map<number, number>();
    const shared = new Set<number>();
    samples.emitted.forEach((e, i) => {
      if (writtenAt.has(e)) shared.add(e);
      writtenAt.set(e, samples.written[i]!);
    });
    const joined = viaChunks.filter((c) => writtenAt.has(c.emitted) && !shared.has(c.emitted));
    const afterWrite = joined.map((c) => c.latency - writtenAt.get(c.emitted)!);
    const joinedEmitted = joined.map((c) => c.emitted);
    line('chunk written by the service → arrived at the clients p50 / p99 / max', '(the kernel and the clients)');
    line('  while the streams open', byEmission(joinedEmitted, afterWrite, windows.opening![0], opened));
    line('  once all are open', byEmission(joinedEmitted, afterWrite, opened, ending));
    line('  while they end', byEmission(joinedEmitted, afterWrite, ending, end));
  }
  clearInterval(clientsTimer);
  if (clientsWindows.direct)
    line('clients loop lateness p50 / p99 / max', '(a 2 ms timer in this process; its own part after the |)');
  for (const [run, w] of Object.entries(clientsWindows)) {
    const [from, opened, ending, end] = w;
    for (const [phase, a, b] of [
      ['while the streams open', from, opened],
      ['once all are open', opened, ending],
      ['while they end', ending, end],
    ] as const)
      line(`  ${run}, ${phase}`, `${loopLate(clientsLoop, a, b)} | ${loopLateOwn(clientsLoop, a, b)}`);
  }
  // BENCH_LAG_OUT=<file>: the sampler's raw figures and the phases' wall times, kept for a closer look.
  if (process.env.BENCH_LAG_OUT && fs.existsSync(lagFile))
    fs.writeFileSync(
      process.env.BENCH_LAG_OUT,
      JSON.stringify({ windows, samples: JSON.parse(fs.readFileSync(lagFile, 'utf8')) }),
    );
  for (const f of [lagFile, `${dataDir}-lag.mjs`]) fs.rmSync(f, { force: true });
  fakeProc.kill('SIGTERM');
  await agent.close();
  fs.rmSync(opts.dataDir, { recursive: true, force: true });
}
