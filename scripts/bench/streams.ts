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
 * and of those emitted once all are open, each against the direct baseline's same phase. The service's CPU time
 * during the measured run is printed too (per stream, the least noisy figure of what opening and relaying cost).
 *
 * `npm run bench:streams` (BENCH_STREAMS, BENCH_CHUNKS, BENCH_WARMUP adjust it; BENCH_SQL_PROFILE=1 prints the
 * service's statement timings at exit, setup included).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { Agent, request } from 'undici';
import { Api, freePort, heraldOptions, ROOT, spawnHerald, tempDir } from './lib/herald.ts';
import { type Dist, dist, envInt, fmt, heading, line, procCpuMs, record, sleep, wallMs } from './lib/stats.ts';

const STREAMS = envInt('BENCH_STREAMS', 500);
const CHUNKS = envInt('BENCH_CHUNKS', 50);
const DELAY_MS = 20;
const USERS = Math.max(1, Math.ceil(STREAMS / 100));
const WARMUP = envInt('BENCH_WARMUP', 4);
const STAMP = /<t:(\d+\.\d+)>/g;

interface StreamResult {
  latencies: number[];
  emitted: number[];
  chunks: number;
  done: boolean;
  error?: string;
  /** Request sent → response headers (which the service sends with its first frame), ms. */
  startMs?: number;
}

/** Reads one SSE / chat-completions stream, collecting arrival − emission for every stamp. */
async function consume(body: AsyncIterable<Buffer>, finished: (text: string) => boolean): Promise<StreamResult> {
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
): Promise<{ results: StreamResult[]; ms: number }> {
  const started = wallMs();
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
  return { results, ms: wallMs() - started };
}

interface Phases {
  all: Dist;
  opening: Dist;
  open: Dist;
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
  // The tail split by phase: chunks emitted while streams were still being opened (before the last
  // stream's first chunk) and those emitted once every stream was open.
  const allOpen = Math.max(...rs.map((r) => r.emitted[0] ?? 0));
  const during: number[] = [];
  const after: number[] = [];
  for (const r of rs) r.latencies.forEach((l, i) => (r.emitted[i]! < allOpen ? during : after).push(l));
  const a = dist(during);
  const b = dist(after);
  line(
    `${label}: p50 / p99 while opening | all open`,
    `${fmt(a.p50, 2)} / ${fmt(a.p99, 2)} ms (${a.n} chunks) | ${fmt(b.p50, 2)} / ${fmt(b.p99, 2)} ms (${b.n})`,
  );
  // What pacing the openings costs the new streams: how long each waited for its response to start.
  const starts = dist(rs.flatMap((r) => (r.startMs === undefined ? [] : [r.startMs])));
  line(
    `${label}: request → response start p50 / p99 / max`,
    `${fmt(starts.p50, 1)} / ${fmt(starts.p99, 1)} / ${fmt(starts.max, 1)} ms`,
  );
  const errors = [...new Set(rs.map((r) => r.error).filter(Boolean))];
  if (errors.length) line(`${label}: errors`, errors.slice(0, 3).join(' | '));
  return { all: d, opening: a, open: b };
}

heading(`assistant streams (${STREAMS} concurrent, ${CHUNKS} chunks ${DELAY_MS} ms apart)`);
const fakeProc = spawn(process.execPath, ['scripts/bench/lib/fake-model-server.ts', String(CHUNKS), String(DELAY_MS)], {
  cwd: ROOT,
  stdio: ['ignore', 'pipe', 'inherit'],
});
const baseUrl = await new Promise<string>((resolve) =>
  fakeProc.stdout!.once('data', (c: Buffer) => resolve(c.toString().trim())),
);
const agent = new Agent({
  connections: STREAMS * 2,
  keepAliveTimeout: 30_000,
  bodyTimeout: 120_000,
  headersTimeout: 120_000,
});
const opts = heraldOptions(tempDir('streams'), await freePort(), '@herald/provider-bridge-self', {
  AI_BASE_URL: baseUrl,
  AI_API_KEY: 'sk-bench-key',
  AI_MODEL: 'bench-model',
  ...(process.env.BENCH_SQL_PROFILE === '1' ? { HERALD_SQL_PROFILE: '1' } : {}),
});
const herald = spawnHerald(opts);
try {
  // Baseline: the same clients reading the fake model directly.
  const direct = await runClients(async () => {
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
    return { ...(await consume(res.body, (t) => t.includes('data: [DONE]'))), startMs };
  });
  const base = summary('baseline (direct)', direct.results);

  await herald.ready();
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
    return { ...(await consume(res.body, (f) => f.startsWith('event: done'))), startMs };
  };
  for (let round = 0; round < 2; round++) {
    const r = await Promise.all(warm.map(message));
    const failed = r.find((x) => !x.done);
    if (failed) throw new Error(`warm-up message failed: ${failed.error ?? 'incomplete stream'}`);
  }
  await sleep(1000);
  const idleKb = herald.rssKb();
  let peakKb = idleKb;
  const cpuBefore = procCpuMs(herald.pid);
  const via = await runClients(
    (i) => message(chats[i]!),
    () => {
      peakKb = Math.max(peakKb, herald.rssKb());
    },
  );
  const cpuMs = procCpuMs(herald.pid) - cpuBefore;
  const phases = summary('through herald', via.results);
  const through = phases.all;
  const addedP50 = through.p50 - base.all.p50;
  const addedP99 = through.p99 - base.all.p99;
  const addedOpening = phases.opening.p99 - base.opening.p99;
  const addedOpen = phases.open.p99 - base.open.p99;
  const perStreamKb = (peakKb - idleKb) / STREAMS;
  line('added latency per chunk p50 / p99', `${fmt(addedP50, 2)} / ${fmt(addedP99, 2)} ms`, {
    text: 'p99 added <= 5 ms',
    ok: addedP99 <= 5,
  });
  line('added p99 while opening', `${fmt(addedOpening, 2)} ms`, { text: '<= 15 ms', ok: addedOpening <= 15 });
  line('added p99 once all are open', `${fmt(addedOpen, 2)} ms`, { text: '<= 5 ms', ok: addedOpen <= 5 });
  line(
    'herald CPU during the run',
    `${fmt(cpuMs, 0)} ms, ${fmt((1000 * cpuMs) / STREAMS, 0)} µs per stream (${CHUNKS} chunks each)`,
  );
  line('herald RSS idle → peak', `${fmt(idleKb / 1024, 1)} → ${fmt(peakKb / 1024, 1)} MB`);
  line('memory per open stream', `${fmt(perStreamKb, 1)} KB`, { text: '<= 100 KB', ok: perStreamKb <= 100 });
  line(
    'wall time direct / through herald',
    `${fmt(direct.ms / 1000, 2)} / ${fmt(via.ms / 1000, 2)} s (${fmt(via.ms / direct.ms, 2)}×)`,
  );
  record('streams', {
    streams: STREAMS,
    chunks: CHUNKS,
    warmup_messages: WARMUP * 2,
    baseline: base.all,
    herald: through,
    added_p50: addedP50,
    added_p99: addedP99,
    added_p99_opening: addedOpening,
    added_p99_open: addedOpen,
    cpu_ms: cpuMs,
    idle_kb: idleKb,
    peak_kb: peakKb,
    per_stream_kb: perStreamKb,
  });
} finally {
  await herald.stop();
  if (process.env.BENCH_SQL_PROFILE === '1') {
    const at = herald.stderr().lastIndexOf('SQL profile:');
    if (at >= 0) process.stdout.write(`${herald.stderr().slice(at)}\n`);
  }
  fakeProc.kill('SIGTERM');
  await agent.close();
  fs.rmSync(opts.dataDir, { recursive: true, force: true });
}
