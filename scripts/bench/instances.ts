/**
 * Benchmark, issue 27 item 6, many instances: 1,000 providers and 1,000 targets for 50 users, then the service
 * restarted with that data: start → ready, idle RSS and idle CPU per minute. Half the providers poll (Immich, every
 * 60 s, one followed album each, against a loopback fake of the Immich API in this process that answers ping, the
 * key check and the album), half take webhooks (codehost, GitHub); each provider has one tracker linked to one
 * target (chat-webhook, mattermost, to a loopback sink that nothing reaches while idle). Everything is created through
 * the API (users by the admin API, then each user's own token). The idle CPU comes from /proc/<pid>/stat (every
 * thread), per minute over BENCH_IDLE_MS after a settle period; the same run boots an empty service with the same
 * plugins and measures it the same way (the baseline of the ratio). Goals (absolute): idle CPU under 2 % of one core,
 * start → ready under 3 s.
 *
 * `npm run bench:instances` (BENCH_ENTRY: built, the default, or source; BENCH_USERS, BENCH_PROVIDERS,
 * BENCH_TARGETS, BENCH_IDLE_MS, BENCH_SETTLE_MS, BENCH_BASELINE_IDLE_MS shrink or grow it; BENCH_BASELINE_IDLE_MS=0
 * skips the empty service).
 */
import fs from 'node:fs';
import http from 'node:http';
import type net from 'node:net';
import { BENCH_SECRET } from './lib/codehost.ts';
import { Api, benchEntry, freePort, type Herald, heraldOptions, spawnHerald, tempDir } from './lib/herald.ts';
import { envInt, fmt, heading, line, procCpuMs, record, sleep, wallMs } from './lib/stats.ts';

const USERS = envInt('BENCH_USERS', 50);
const PROVIDERS = envInt('BENCH_PROVIDERS', 1_000);
const TARGETS = envInt('BENCH_TARGETS', 1_000);
const IDLE_MS = envInt('BENCH_IDLE_MS', 180_000);
// The boot's tail (every instance's start, compile cache, the idle memory reducer's collection) is not idle. The
// first polls are spread over the first interval (each instance at its own offset), so the window sees the steady rate;
// it opens once every polling instance has polled (see measureIdle), at least this long after ready.
const SETTLE_MS = envInt('BENCH_SETTLE_MS', 30_000);
const BASE_IDLE_MS = Number(process.env.BENCH_BASELINE_IDLE_MS ?? 60_000);
const CONCURRENCY = 8;
// What boots: the built service (`npm start`'s, the default) or the sources (BENCH_ENTRY=source).
const ENTRY = benchEntry();
const PLUGINS =
  '@herald/provider-bridge-self,@herald/provider-codehost,@herald/provider-immich,@herald/target-chat-webhook';

/** A loopback Immich (ping, the key check, one album per id) and target sink; counts what it was asked. */
async function startFake(): Promise<{ url: string; counts: Record<string, number>; close(): Promise<void> }> {
  const counts: Record<string, number> = { ping: 0, me: 0, album: 0, sink: 0 };
  const json = (res: http.ServerResponse, body: unknown) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const url = req.url ?? '/';
      if (url === '/api/server/ping') {
        counts.ping!++;
        json(res, { res: 'pong' });
      } else if (url === '/api/users/me') {
        counts.me!++;
        json(res, { id: 'u-bench', name: 'Bench', email: 'bench@example.test' });
      } else if (url.startsWith('/api/albums/')) {
        counts.album!++;
        const id = decodeURIComponent(url.slice('/api/albums/'.length).split('?')[0]!);
        json(res, {
          id,
          albumName: `Album ${id}`,
          owner: { id: 'u-bench', name: 'Bench' },
          albumUsers: [],
          assetCount: 3,
          assets: [1, 2, 3].map((n) => ({ id: `${id}-a${n}`, originalFileName: `IMG_${n}.jpg`, ownerId: 'u-bench' })),
        });
      } else {
        counts.sink!++;
        json(res, { ok: true });
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as net.AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    counts,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/** Runs `fn` over 0..n-1 with at most `c` at once. */
async function pool(n: number, c: number, fn: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(c, n) }, async () => {
      while (next < n) await fn(next++);
    }),
  );
}

interface Idle {
  readyMs: number;
  rssReadyKb: number;
  rssIdleKb: number;
  /** Service CPU per minute of each whole minute of the idle window, ms. */
  perMinuteMs: number[];
  /** Share of one core over the whole idle window. */
  share: number;
  albumPolls: number;
  windowMs: number;
  /** The service's threads as the window opened, the most seen in it and how many started in it (each second). */
  threads: { start: number; max: number; started: number };
  /** From ready to the window's start. */
  settledMs: number;
}

/** The number of threads of a process now (0 once it is gone). */
function threadCount(pid: number): number {
  try {
    return fs.readdirSync(`/proc/${pid}/task`).length;
  } catch {
    return 0;
  }
}

/**
 * Waits for ready, settles, then samples the service's CPU over `idleMs`. The settle lasts until every one of
 * `polling` instances has polled once since the start (at least SETTLE_MS): a tracker's first poll writes (its
 * baseline, its first poll time) and the data made through the API has none, while a service that has run a while
 * has them; the window measures the steady state.
 */
async function measureIdle(
  h: Herald,
  idleMs: number,
  fake: { counts: Record<string, number> },
  polling = 0,
): Promise<Idle> {
  const albums0 = fake.counts.album!;
  const at = await h.ready(120_000);
  const readyMs = at - h.spawnedAt;
  const rssReadyKb = h.rssKb();
  await sleep(SETTLE_MS);
  const until = wallMs() + 120_000;
  while (fake.counts.album! - albums0 < polling && wallMs() < until) await sleep(500);
  // The last first polls' writes and the checkpoint after them.
  if (polling) await sleep(5_000);
  const settledMs = wallMs() - at;
  const polls0 = fake.counts.album!;
  // A thread started in the window (the WAL checkpoint worker starts under a burst of commits) shows as a rise.
  const threads = { start: threadCount(h.pid), max: 0, started: 0 };
  threads.max = threads.start;
  let lastThreads = threads.start;
  const sampler = setInterval(() => {
    const n = threadCount(h.pid);
    if (n > lastThreads) threads.started += n - lastThreads;
    threads.max = Math.max(threads.max, n);
    lastThreads = n;
  }, 1000);
  const t0 = wallMs();
  const c0 = procCpuMs(h.pid);
  const perMinuteMs: number[] = [];
  let prev = c0;
  while (wallMs() - t0 < idleMs) {
    const left = idleMs - (wallMs() - t0);
    await sleep(Math.min(60_000, left));
    const c = procCpuMs(h.pid);
    if (wallMs() - t0 >= (perMinuteMs.length + 1) * 60_000 - 50) perMinuteMs.push(c - prev);
    prev = c;
  }
  const windowMs = wallMs() - t0;
  const cpu = procCpuMs(h.pid) - c0;
  clearInterval(sampler);
  return {
    readyMs,
    rssReadyKb,
    rssIdleKb: h.rssKb(),
    perMinuteMs,
    share: cpu / windowMs,
    albumPolls: fake.counts.album! - polls0,
    windowMs,
    threads,
    settledMs,
  };
}

const loadavg = () => fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
const perUser = (total: number, u: number) => Math.floor(total / USERS) + (u < total % USERS ? 1 : 0);

heading(
  `many instances: ${USERS} users, ${PROVIDERS} providers (half Immich polling every 60 s, half webhook), ` +
    `${TARGETS} targets; idle ${fmt(IDLE_MS / 1000, 0)} s after at least ${fmt(SETTLE_MS / 1000, 0)} s; ` +
    `${ENTRY === 'built' ? 'built (core/dist, npm start)' : 'sources'} (load ${loadavg()})`,
);
const fake = await startFake();
const opts = heraldOptions(tempDir('instances'), await freePort(), PLUGINS, {}, ENTRY);
let herald = spawnHerald(opts);
try {
  await herald.ready(60_000);
  const admin = new Api(herald.url);
  await admin.setup();
  const apis: Api[] = [admin];
  const t0 = wallMs();
  await pool(USERS - 1, CONCURRENCY, async (i) => {
    const email = `bench-user-${i + 1}@example.test`;
    const password = 'bench password 123';
    await admin.ok('POST', '/api/v1/admin/users', { email, password });
    const api = new Api(herald.url);
    api.token = (await api.ok<{ access_token: string }>('POST', '/api/auth/login', { email, password })).access_token;
    apis[i + 1] = api;
  });
  const usersMs = wallMs() - t0;
  // Providers alternate polling and webhook; each gets one tracker linked to the user's next target (round robin).
  const made = { providers: 0, polling: 0, targets: 0, trackers: 0, links: 0 };
  const t1 = wallMs();
  await pool(USERS, CONCURRENCY, async (u) => {
    const api = apis[u]!;
    const targets: string[] = [];
    for (let k = 0; k < perUser(TARGETS, u); k++) {
      const tg = await api.ok('POST', '/api/targets', {
        kind: 'chat_webhook',
        name: `Sink ${u}-${k}`,
        config: { format: 'mattermost', url: `${fake.url}/t/${u}/${k}` },
        locale: 'en',
      });
      targets.push(tg.id);
      made.targets++;
    }
    for (let k = 0; k < perUser(PROVIDERS, u); k++) {
      const polling = k % 2 === 0;
      const p = await api.ok(
        'POST',
        '/api/providers',
        polling
          ? {
              kind: 'immich',
              name: `Immich ${u}-${k}`,
              config: { base_url: fake.url, api_key: `key-${u}-${k}`, poll_interval_seconds: 60 },
            }
          : { kind: 'codehost', name: `GitHub ${u}-${k}`, config: { host: 'github', webhook_secret: BENCH_SECRET } },
      );
      made.providers++;
      if (polling) made.polling++;
      const tr = await api.ok('POST', '/api/trackers', {
        provider_id: p.id,
        name: `Tracker ${u}-${k}`,
        ...(polling ? { config: { album_ids: [`album-${u}-${k}`] } } : {}),
      });
      made.trackers++;
      if (targets.length) {
        await api.ok('PUT', `/api/trackers/${tr.id}/targets/${targets[k % targets.length]}`);
        made.links++;
      }
    }
  });
  const createMs = wallMs() - t1;
  line('created through the API', `${USERS} users in ${fmt(usersMs / 1000, 1)} s`);
  const calls = made.providers + made.targets + made.trackers + made.links;
  line(
    '',
    `${made.providers} providers (${made.polling} polling), ${made.targets} targets, ${made.trackers} trackers, ` +
      `${made.links} links in ${fmt(createMs / 1000, 1)} s (${fmt(createMs / calls, 1)} ms per call)`,
  );
  // Restart on that data: the boot starts every instance.
  await herald.stop();
  const before = { ...fake.counts };
  herald = spawnHerald(opts);
  const idle = await measureIdle(herald, IDLE_MS, fake, made.polling);
  const started = fake.counts.ping! - before.ping!;
  const perMin = idle.perMinuteMs.map((m) => fmt(m, 0)).join(', ');
  line('start → ready', `${fmt(idle.readyMs, 0)} ms (${started} Immich instances had pinged by the end)`, {
    text: '< 3 s',
    ok: idle.readyMs < 3000,
  });
  line('window opened', `${fmt(idle.settledMs / 1000, 1)} s after ready (every polling instance had polled once)`);
  line('RSS at ready / idle', `${fmt(idle.rssReadyKb / 1024, 1)} / ${fmt(idle.rssIdleKb / 1024, 1)} MB`);
  line(
    'idle CPU',
    `${fmt(100 * idle.share, 2)} % of one core (${fmt((idle.share * 60_000) / 1000, 2)} s per minute; ` +
      `per whole minute: ${perMin} ms)`,
    { text: '< 2 %', ok: idle.share < 0.02 },
  );
  line(
    'Immich album polls in the idle window',
    `${idle.albumPolls} (${fmt((idle.albumPolls * 60_000) / idle.windowMs, 0)}/min; ${made.polling} expected)`,
  );
  line(
    'threads in the idle window',
    `${idle.threads.start} at its start, at most ${idle.threads.max}, ${idle.threads.started} started in it`,
  );
  if (idle.albumPolls)
    line(
      'idle CPU per poll (upper bound)',
      `${fmt(((idle.share * idle.windowMs) / idle.albumPolls) * 1000, 0)} µs (all idle CPU / polls)`,
    );

  let base: Idle | undefined;
  if (BASE_IDLE_MS > 0) {
    const bo = heraldOptions(tempDir('instances-empty'), await freePort(), PLUGINS, {}, ENTRY);
    const bh = spawnHerald(bo);
    try {
      base = await measureIdle(bh, BASE_IDLE_MS, fake);
    } finally {
      await bh.stop();
      fs.rmSync(bo.dataDir, { recursive: true, force: true });
    }
    line(
      'baseline: empty service, same plugins',
      `ready ${fmt(base.readyMs, 0)} ms, idle RSS ${fmt(base.rssIdleKb / 1024, 1)} MB, idle CPU ` +
        `${fmt(100 * base.share, 2)} % of one core (${base.perMinuteMs.map((m) => fmt(m, 0)).join(', ')} ms ` +
        `per whole minute; ${base.threads.started} threads started)`,
    );
    line(
      'ratios to the empty service',
      `ready ${fmt(idle.readyMs / base.readyMs, 2)}×, idle RSS ${fmt(idle.rssIdleKb / base.rssIdleKb, 2)}×, ` +
        `idle CPU ${fmt(idle.share / base.share, 1)}×`,
    );
  }
  const limit =
    idle.share >= 0.02
      ? `idle CPU: ${fmt(100 * idle.share, 2)} % of a core, ${idle.albumPolls} polls in ` +
        `${fmt(idle.windowMs / 1000, 0)} s`
      : idle.readyMs >= 3000
        ? `start → ready: ${fmt(idle.readyMs, 0)} ms`
        : 'none of the goals (both met)';
  line('limiting resource', limit);
  line('load average at the end', loadavg());
  record('instances', { users: USERS, providers: PROVIDERS, targets: TARGETS, made, createMs, idle, base });
} finally {
  await herald.stop();
  await fake.close();
  fs.rmSync(opts.dataDir, { recursive: true, force: true });
}
