/**
 * Benchmark, issue 27 item 7, a large event log: BENCH_EVENTS events (default 1,000,000) of one user with their
 * deliveries, spread over BENCH_SPAN_DAYS (60) days, seeded straight into SQLite (prepared statements, one
 * transaction per 10,000 events) on a service set up with the relay chain of bench:relay (codehost provider →
 * tracker → chat-webhook target → loopback sink) and three more providers. Then, with retention off:
 *   1. start → ready on that log;
 *   2. `GET /api/events` with each filter the API offers (provider, event type, dispatch status, since/until,
 *      the `before` cursor, combined), BENCH_REQUESTS (50) sequential requests each: p50 / p95, goal p95 ≤ 50 ms;
 *   3. a paced relay run at BENCH_RATE (200/s) for BENCH_PACED_S (30 s): the same run's baseline p99;
 *   4. the same paced run while `herald events prune --before <n>d` (the retention job's `applyRetention`, run now
 *      as an operator would) deletes first the oldest day (a normal day's work for the daily job), then everything
 *      older than BENCH_PRUNE_DAYS (30: half the log, the worst case, the first cleanup after retention is switched
 *      on): each one's duration and the run's p99, lost, duplicated and refused. BENCH_PRUNE_VIA=service (default):
 *      the command asks the running service to prune (`POST /api/admin/events/prune`), which runs it in its own
 *      process; `local`: `--local`, the command deletes from its own process beside the service (the two contend
 *      for SQLite's write lock), as every prune did before;
 *   5. the daily job itself, in the service: restarted with SERVICE_EVENT_LOG_RETENTION_DAYS one day shorter (the
 *      job runs a minute after start, then daily), so it deletes one day of events, a normal day's work; a paced
 *      run from ready until it starts, then one while it runs (at least 5 s): its duration and that run's p99.
 * Goal (absolute): p95 ≤ 50 ms per filter; the cleanup must not stall delivery (p99 with it against without it).
 * Each cleanup is also shown over only the deliveries sent while it deleted (its window within the paced run).
 *
 * `npm run bench:eventlog` (BENCH_EVENTS, BENCH_SPAN_DAYS, BENCH_REQUESTS, BENCH_RATE, BENCH_PACED_S,
 * BENCH_PRUNE_DAYS, BENCH_PRUNE_VIA adjust it).
 */
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import Sqlite from 'better-sqlite3';
import { Pool } from 'undici';
import { SERVICE_NODE_FLAGS } from '../node-flags.ts';
import { BENCH_SECRET } from './lib/codehost.ts';
import { Api, benchEntry, freePort, type Herald, heraldOptions, ROOT, spawnHerald, tempDir } from './lib/herald.ts';
import type { LoadResult, Req } from './lib/load.ts';
import { deliveries, outcome, RELAY_PLUGINS } from './lib/relay-setup.ts';
import { startSink } from './lib/sink.ts';
import { type Dist, dist, envInt, fmt, heading, line, procCpuMs, record, sleep, wallMs } from './lib/stats.ts';

const EVENTS = envInt('BENCH_EVENTS', 1_000_000);
const SPAN_DAYS = envInt('BENCH_SPAN_DAYS', 60);
const REQUESTS = envInt('BENCH_REQUESTS', 50);
const RATE = envInt('BENCH_RATE', 200);
const PACED_S = envInt('BENCH_PACED_S', 30);
const PRUNE_DAYS = envInt('BENCH_PRUNE_DAYS', 30);
/** Who deletes in phase 4: the service, asked by the command (`service`), or the command itself (`local`). */
const PRUNE_VIA = process.env.BENCH_PRUNE_VIA === 'local' ? 'local' : 'service';
const PRUNE_HOW = PRUNE_VIA === 'local' ? 'CLI --local, beside the service' : 'asked of the service, run in it';
const DAY = 86_400_000;
const BATCH = 10_000;

const loadavg = () => fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

/** A UUIDv7 (time-ordered, as the service makes them) for wall time `ms`. */
function uuid7(ms: number): string {
  const h = ms.toString(16).padStart(12, '0');
  const r = crypto.randomBytes(10).toString('hex');
  const variant = (8 | (Number.parseInt(r[3]!, 16) & 3)).toString(16);
  return `${h.slice(0, 8)}-${h.slice(8)}-7${r.slice(0, 3)}-${variant}${r.slice(4, 7)}-${r.slice(7, 19)}`;
}

interface Seeded {
  providers: string[];
  /** Ids at a quarter, half and three quarters of the log (newest first), for the `before` cursor. */
  cursors: string[];
  /** Created_at of the first event (oldest). */
  oldest: number;
  deliveries: number;
}

/**
 * Writes `n` finished events of `userId` and their deliveries (one each, to `targetId` through `trackerId`, except
 * the dropped ones), oldest first, one every SPAN_DAYS / n, ending now. Event types, statuses and providers in
 * fixed proportions (push 69.9 %, pull requests 20 %, issues 10 %, releases 0.1 %; dispatched 93 %, dropped 5 %,
 * failed 1 %, partial 1 %; providers round robin).
 */
function seed(
  file: string,
  userId: string,
  providers: string[],
  trackerId: string,
  targetId: string,
  n: number,
): Seeded {
  const db = new Sqlite(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  const ev = db.prepare(
    'INSERT INTO event_log (id, user_id, provider_id, provider_kind, event_type, severity, payload, extras, ' +
      'tracker_ids, dispatch_status, details, occurred_at, created_at) ' +
      `VALUES (?, ?, ?, 'codehost', ?, 'info', ?, NULL, ?, ?, ?, ?, ?)`,
  );
  const dl = db.prepare(
    'INSERT INTO deliveries (id, event_id, user_id, tracker_id, target_id, status, reason, attempts, ' +
      'next_attempt_at, last_error, last_status_code, sent_at, created_at, updated_at) ' +
      'VALUES (?, ?, ?, ?, ?, ?, NULL, ?, ?, ?, ?, ?, ?, ?)',
  );
  const now = Date.now();
  const step = (SPAN_DAYS * DAY) / n;
  const oldest = Math.floor(now - n * step);
  const cursorAt = new Set([Math.floor(n / 4), Math.floor(n / 2), Math.floor((3 * n) / 4)]);
  const cursors: string[] = [];
  const repo = 'octo-org/herald-bench';
  const base = { repository: repo, repository_url: `https://github.com/${repo}`, sender: 'monalisa' };
  let made = 0;
  const trackers = JSON.stringify([trackerId]);
  for (let from = 0; from < n; from += BATCH) {
    db.transaction(() => {
      for (let i = from; i < Math.min(n, from + BATCH); i++) {
        const ms = Math.floor(oldest + i * step);
        const at = new Date(ms).toISOString();
        const id = uuid7(ms);
        if (cursorAt.has(n - 1 - i)) cursors.push(id);
        const kind = i % 1000 === 0 ? 'release' : i % 10 < 2 ? 'pr' : i % 10 === 2 ? 'issue' : 'push';
        const sha = crypto.createHash('sha1').update(String(i)).digest('hex');
        const type = { release: 'release_published', pr: 'pull_request_opened', issue: 'issue_opened', push: 'push' }[
          kind
        ];
        const payload =
          kind === 'push'
            ? {
                ...base,
                ref: 'refs/heads/main',
                branch: 'main',
                pusher: 'monalisa',
                commits: [
                  {
                    id: sha,
                    short_id: sha.slice(0, 7),
                    message: `Tune the relay hot path (${i})`,
                    author: 'Mona Lisa',
                    url: `https://github.com/${repo}/commit/${sha}`,
                  },
                ],
                commit_count: 1,
                compare_url: `https://github.com/${repo}/compare/${sha.slice(0, 12)}`,
                forced: false,
              }
            : kind === 'release'
              ? { ...base, tag: `v1.${i}`, name: `Version 1.${i}`, url: `https://github.com/${repo}/releases/${i}` }
              : {
                  ...base,
                  number: i,
                  title: `Change number ${i}`,
                  url: `https://github.com/${repo}/${kind === 'pr' ? 'pull' : 'issues'}/${i}`,
                  author: 'monalisa',
                  excerpt: 'A short description of the change.',
                  ...(kind === 'pr'
                    ? { source_branch: `feature-${i}`, target_branch: 'main', draft: false }
                    : { labels: 'bug' }),
                };
        const r = i % 100;
        const status = r < 1 ? 'failed' : r < 2 ? 'partial' : r < 7 ? 'dropped' : 'dispatched';
        const dStatus = status === 'dispatched' ? 'sent' : 'failed';
        const details =
          status === 'dropped'
            ? JSON.stringify({ reason: 'no_targets' })
            : JSON.stringify({ targets: [{ target_id: targetId, status: dStatus, attempts: 1 }] });
        ev.run(
          id,
          userId,
          providers[i % providers.length],
          type,
          JSON.stringify(payload),
          trackers,
          status,
          details,
          at,
          at,
        );
        if (status !== 'dropped') {
          const sent = new Date(ms + 150).toISOString();
          dl.run(
            uuid7(ms + 1),
            id,
            userId,
            trackerId,
            targetId,
            dStatus,
            dStatus === 'sent' ? 1 : 5,
            at,
            dStatus === 'sent' ? null : 'HTTP 502 from the target',
            dStatus === 'sent' ? 200 : 502,
            dStatus === 'sent' ? sent : null,
            at,
            sent,
          );
          made++;
        }
      }
    })();
  }
  db.close();
  return { providers, cursors, oldest, deliveries: made };
}

/** Offers signed deliveries at `rate`/s for at least `minMs` and until `until()` is true (checked once a second). */
async function pacedUntil(
  url: string,
  from: number,
  rate: number,
  minMs: number,
  until: () => boolean,
  maxMs: number,
): Promise<{ load: LoadResult; reqs: number }> {
  const u = new URL(url);
  const pool = new Pool(u.origin, { connections: 64, pipelining: 1, keepAliveTimeout: 30_000 });
  const max = Math.ceil((rate * maxMs) / 1000);
  const load: LoadResult = {
    sentAt: new Float64Array(max),
    status: new Int32Array(max),
    ackAt: new Float64Array(max),
    started: wallMs(),
    finished: 0,
    errors: 0,
  };
  const pending = new Set<Promise<void>>();
  const interval = 1000 / rate;
  let i = 0;
  let doneAt = 0;
  let batch: Req[] = [];
  while (i < max) {
    const elapsed = wallMs() - load.started;
    if (elapsed >= minMs && until()) {
      doneAt ||= wallMs();
      // Two more seconds after the condition holds: what it delayed shows in the run.
      if (wallMs() - doneAt > 2000) break;
    }
    const due = Math.min(max, Math.floor(elapsed / interval) + 1);
    for (; i < due; i++) {
      if (!batch.length) batch = deliveries(from + i, 200);
      const r = batch.shift()!;
      const k = i;
      const p = (async () => {
        load.sentAt[k] = wallMs();
        try {
          const a = await pool.request({ method: 'POST', path: u.pathname, headers: r.headers, body: r.body });
          await a.body.dump();
          load.status[k] = a.statusCode;
        } catch {
          load.errors++;
        }
        load.ackAt[k] = wallMs();
      })();
      pending.add(p);
      void p.finally(() => pending.delete(p));
    }
    await sleep(Math.max(0, load.started + i * interval - wallMs()));
  }
  await Promise.all(pending);
  load.finished = wallMs();
  await pool.close();
  const trim = (a: Float64Array | Int32Array) => a.subarray(0, i);
  return {
    load: {
      ...load,
      sentAt: trim(load.sentAt) as Float64Array,
      status: trim(load.status) as Int32Array,
      ackAt: trim(load.ackAt) as Float64Array,
    },
    reqs: i,
  };
}

heading(
  `event log: ${EVENTS.toLocaleString('en-US')} events over ${SPAN_DAYS} days, filters ×${REQUESTS}, ` +
    `paced ${RATE}/s, prune via ${PRUNE_VIA} (load ${loadavg()})`,
);
const maxIds = RATE * 1200;
const sink = await startSink(maxIds);
const env = { SERVICE_EVENT_LOG_RETENTION_DAYS: '0' };
const opts = heraldOptions(tempDir('eventlog'), await freePort(), RELAY_PLUGINS, env, benchEntry());
const file = path.join(opts.dataDir, 'herald.db');
let herald: Herald = spawnHerald(opts);
try {
  await herald.ready(60_000);
  const api = new Api(herald.url);
  const admin = await api.setup();
  const providers: string[] = [];
  let hookUrl = '';
  for (let k = 0; k < 4; k++) {
    const p = await api.ok('POST', '/api/providers', {
      kind: 'codehost',
      name: `GitHub ${k}`,
      config: { host: 'github', webhook_secret: BENCH_SECRET },
    });
    providers.push(p.id);
    if (k === 0) hookUrl = new URL(p.webhook_url).pathname;
  }
  const tr = await api.ok('POST', '/api/trackers', { provider_id: providers[0], name: 'All pushes' });
  const tg = await api.ok('POST', '/api/targets', {
    kind: 'chat_webhook',
    name: 'Mattermost sink',
    config: { format: 'mattermost', url: sink.url },
    locale: 'en',
  });
  await api.ok('PUT', `/api/trackers/${tr.id}/targets/${tg.id}`);
  await herald.stop();

  const s0 = wallMs();
  const seeded = seed(file, admin.id, providers, tr.id, tg.id, EVENTS);
  const seedS = (wallMs() - s0) / 1000;
  const sizeMb = fs.statSync(file).size / 1048576;
  line(
    'seeded',
    `${EVENTS.toLocaleString('en-US')} events + ${seeded.deliveries.toLocaleString('en-US')} deliveries in ` +
      `${fmt(seedS, 1)} s (${fmt(EVENTS / seedS, 0)} events/s), database ${fmt(sizeMb, 0)} MB`,
  );

  // 1. start → ready
  herald = spawnHerald(opts);
  const readyMs = (await herald.ready(120_000)) - herald.spawnedAt;
  line('start → ready', `${fmt(readyMs, 0)} ms, RSS ${fmt(herald.rssKb() / 1024, 1)} MB`);
  api.base = herald.url;
  hookUrl = `${herald.url}${hookUrl}`;

  // 2. the list with each filter
  const dayIso = (daysAgo: number) => new Date(Date.now() - daysAgo * DAY).toISOString();
  const filters: [string, string][] = [
    ['newest page (no filter)', ''],
    ['provider_id (1 of 4)', `provider_id=${providers[1]}`],
    ['event_type=pull_request_opened (20 %)', 'event_type=pull_request_opened'],
    ['event_type=release_published (0.1 %)', 'event_type=release_published'],
    ['dispatch_status=failed (1 %)', 'dispatch_status=failed'],
    ['since (last 24 h)', `since=${dayIso(1)}`],
    ['since/until (one day, 45 days ago)', `since=${dayIso(45)}&until=${dayIso(44)}`],
    ['before (cursor at the middle)', `before=${seeded.cursors[1]}`],
    ['before (cursor at 3/4)', `before=${seeded.cursors[2]}`],
    ['limit=200', 'limit=200'],
    ['provider + status=failed + since 30 d', `provider_id=${providers[0]}&dispatch_status=failed&since=${dayIso(30)}`],
    // Partial events all come from providers 1 and 3: nothing matches, so the whole provider's index is walked.
    ['provider + status=partial (no match)', `provider_id=${providers[0]}&dispatch_status=partial`],
  ];
  const listing: { filter: string; dist: Dist; events: number }[] = [];
  const cpu0 = procCpuMs(herald.pid);
  for (const [name, q] of filters) {
    const times: number[] = [];
    let count = 0;
    for (let k = 0; k < REQUESTS + 2; k++) {
      const t = wallMs();
      const r = await api.ok<{ events: unknown[] }>('GET', `/api/events${q ? `?${q}` : ''}`);
      // The first two warm the statement cache and the pages: not counted.
      if (k >= 2) times.push(wallMs() - t);
      count = r.events.length;
    }
    const d = dist(times);
    listing.push({ filter: name, dist: d, events: count });
    line(`GET /api/events ${name}`, `p50 ${fmt(d.p50, 1)} / p95 ${fmt(d.p95, 1)} ms (${count} events a page)`, {
      text: 'p95 <= 50 ms',
      ok: d.p95 <= 50,
    });
  }
  const listCpu = procCpuMs(herald.pid) - cpu0;
  line(
    'service CPU per list request',
    `${fmt((listCpu * 1000) / (filters.length * (REQUESTS + 2)), 0)} µs (all filters together)`,
  );

  // 3. paced baseline
  let next = 0;
  const paced = async (label: string, minMs: number, until: () => boolean, maxMs = 600_000) => {
    const from = next;
    const { load, reqs } = await pacedUntil(hookUrl, from, RATE, minMs, until, Math.min(maxMs, (maxIds / RATE) * 1000));
    next += reqs;
    await sink.waitDistinct(next, 60_000);
    const o = outcome(load, sink, from);
    line(
      `paced ${RATE}/s ${label}`,
      `${o.sent} sent, ${o.delivered} delivered, ${o.rejected} refused, ${o.lost} lost, ${o.duplicates} dup; ` +
        `latency p50 ${fmt(o.latency.p50, 1)} / p99 ${fmt(o.latency.p99, 1)} / max ${fmt(o.latency.max, 0)} ms`,
    );
    /** The latency of the deliveries sent from `a` to `b` (wall ms): a cleanup's own window within the run. */
    const within = (a: number, b: number): Dist => {
      const lat: number[] = [];
      for (let i = 0; i < load.sentAt.length; i++) {
        const at = load.sentAt[i]!;
        if (at >= a && at <= b && sink.count[from + i]! > 0) lat.push(sink.at[from + i]! - at);
      }
      return dist(lat);
    };
    return { ...o, within };
  };
  /**
   * The run's latency while the rows were being deleted only: a short cleanup (one day, 0.5 s) would otherwise be
   * diluted in the run's 20 s, and a slower one that covers the run compared unfairly with it.
   */
  const windowLine = (label: string, d: Dist) =>
    line(
      `${label}: only what was sent meanwhile`,
      `${d.n} deliveries, latency p50 ${fmt(d.p50, 1)} / p99 ${fmt(d.p99, 1)} / max ${fmt(d.max, 0)} ms ` +
        `(p99 ${fmt(d.p99 / base.latency.p99, 2)}× the run without cleanup)`,
    );
  // A first run warms the relay (connections, compiled code, statement caches): not compared.
  await paced('warm-up', 5000, () => true);
  const base = await paced('without cleanup', PACED_S * 1000, () => true);

  // 4. the cleanup run now beside the service: first one day (the oldest: a normal day's work for the daily job), then
  // everything older than PRUNE_DAYS (half the log: the worst case, the first cleanup after retention is switched on)
  const ro = new Sqlite(file, { readonly: true });
  const countBefore = (iso: string) =>
    Number((ro.prepare('SELECT COUNT(*) AS n FROM event_log WHERE created_at < ?').get(iso) as { n: number }).n);
  /**
   * `herald events prune --before <days>d` in a process of its own, with the service's configuration (its port: the
   * command asks the service, unless BENCH_PRUNE_VIA=local); ms to its exit.
   */
  const runPrune = (days: number) =>
    new Promise<{ ms: number; out: string }>((resolve) => {
      const t = wallMs();
      let out = '';
      const child = spawn(
        process.execPath,
        [...SERVICE_NODE_FLAGS, 'core/src/cli/main.ts', 'events', 'prune'].concat(
          ['--before', `${days}d`],
          PRUNE_VIA === 'local' ? ['--local'] : [],
        ),
        {
          cwd: ROOT,
          stdio: ['ignore', 'pipe', 'pipe'],
          env: {
            PATH: process.env.PATH,
            SERVICE_SECRET_KEY: opts.key,
            SERVICE_DATA_DIR: opts.dataDir,
            SERVICE_PLUGINS: opts.plugins,
            SERVICE_PORT: String(opts.port),
            SERVICE_HOST: '127.0.0.1',
            SERVICE_LOG_LEVEL: 'WARNING',
          },
        },
      );
      for (const s of [child.stdout!, child.stderr!])
        s.on('data', (c: Buffer) => {
          out += c.toString();
        });
      child.once('exit', () => resolve({ ms: wallMs() - t, out }));
    });
  const prunePhase = async (days: number) => {
    const cutoff = new Date(Date.now() - days * DAY).toISOString();
    const toDelete = countBefore(cutoff);
    let ms = 0;
    let out = '';
    let pruning = true;
    let goneAt = 0;
    const t0 = wallMs() + 3000;
    const watch = (async () => {
      while (!goneAt) {
        if (!pruning || countBefore(cutoff) === 0) goneAt = wallMs();
        else await sleep(5);
      }
    })();
    const logBefore = herald.stderr();
    const run = sleep(3000).then(() =>
      runPrune(days).then((r) => {
        ms = r.ms;
        out = r.out;
        pruning = false;
      }),
    );
    const o = await paced(`with prune --before ${days}d`, PACED_S * 1000, () => !pruning);
    await run;
    await watch;
    // From the CLI's spawn less its own start (when the service begins deleting) to the rows' disappearance.
    const during = o.within(t0 + noop.ms, goneAt);
    windowLine(`prune --before ${days}d`, during);
    // The delete itself: from the CLI's spawn to the commit that removed the rows, less the CLI's own start (and,
    // asked of the service, the request's).
    const deleteMs = Math.max(0, goneAt - t0 - noop.ms);
    line(
      `prune --before ${days}d (${PRUNE_HOW})`,
      `${fmt(ms / 1000, 2)} s to exit, rows gone ${fmt((goneAt - t0) / 1000, 2)} s after the spawn; less the ` +
        `CLI's start: ${fmt(deleteMs / 1000, 2)} s for ${toDelete.toLocaleString('en-US')} events ` +
        `(${fmt((deleteMs * 1000) / Math.max(1, toDelete), 0)} µs each): ${out.trim().split('\n').pop()}`,
    );
    // The service's warnings while it ran (from the last 8 kB of its log): what a held write lock did to it.
    const now = herald.stderr();
    const log = now.startsWith(logBefore) ? now.slice(logBefore.length) : now;
    const warnings = log.split('\n').filter((l) => l.includes('"level"'));
    if (warnings.length)
      line('service warnings meanwhile', `${warnings.length} (last: ${warnings.at(-1)!.slice(0, 300)})`);
    if (out.includes('herald:')) line('the prune failed', out.trim());
    line(`p99 with prune --before ${days}d / without`, `${fmt(o.latency.p99 / base.latency.p99, 2)}×`, {
      text: 'no stall (p99 ≤ 2×, max < 1 s, 0 lost / dup)',
      ok:
        o.latency.p99 <= 2 * base.latency.p99 &&
        o.latency.max < 1000 &&
        o.lost === 0 &&
        o.duplicates === 0 &&
        o.rejected === 0,
    });
    return {
      ms,
      delete_ms: deleteMs,
      events: toDelete,
      latency: o.latency,
      during: during,
      lost: o.lost,
      duplicates: o.duplicates,
      rejected: o.rejected,
    };
  };
  // The CLI's own start and exit, deleting nothing (no event is that old): subtracted from the prunes. Asked of the
  // service, it makes the request and follows the prune too.
  const noop = await runPrune(SPAN_DAYS + 2);
  line('prune with nothing to delete (the CLI alone)', `${fmt(noop.ms, 0)} ms`);
  const pruneDay = await prunePhase(SPAN_DAYS - 1);
  const pruneHalf = await prunePhase(PRUNE_DAYS);
  const withPrune = pruneHalf;

  // 5. the daily job in the service: one day of events past the retention period
  await herald.stop();
  const days = PRUNE_DAYS - 1;
  const dailyCutoff = new Date(Date.now() - days * DAY).toISOString();
  const daily = countBefore(dailyCutoff);
  opts.env = { SERVICE_EVENT_LOG_RETENTION_DAYS: String(days) };
  herald = spawnHerald(opts);
  let jobStartAt = 0;
  let jobDoneAt = 0;
  const watch = (async () => {
    while (!jobDoneAt) {
      const left = countBefore(dailyCutoff);
      if (!jobStartAt && left < daily) jobStartAt = wallMs();
      if (left === 0) jobDoneAt = wallMs();
      else await sleep(5);
    }
  })();
  const readyDailyMs = (await herald.ready(120_000)) - herald.spawnedAt;
  const wasDone = jobDoneAt !== 0;
  // The job waits a minute after start (off the boot's path): the relay runs paced until it starts, then is measured
  // while it runs (at least 5 s).
  await paced('after the restart, until the job starts', 1000, () => jobStartAt !== 0);
  const withJob = await paced(`with the daily job (${days} d)`, 5000, () => jobDoneAt !== 0);
  await watch;
  ro.close();
  line(
    `daily job in the service (retention ${days} d)`,
    `${daily.toLocaleString('en-US')} events deleted, done ` +
      `${fmt(jobDoneAt - herald.spawnedAt, 0)} ms after the spawn, ` +
      `started at ${fmt(jobStartAt - herald.spawnedAt, 0)} ms, ` +
      `took ${fmt(jobDoneAt - jobStartAt, 0)} ms ` +
      `(ready at ${fmt(readyDailyMs, 0)} ms${wasDone ? ', done before ready' : ', still running at ready'})`,
  );
  line('p99 with the daily job / without', `${fmt(withJob.latency.p99 / base.latency.p99, 2)}×`);
  const jobDuring = withJob.within(jobStartAt, jobDoneAt);
  windowLine('the daily job', jobDuring);
  const worst = listing.reduce((a, b) => (b.dist.p95 > a.dist.p95 ? b : a));
  line(
    'limiting resource',
    `slowest filter: ${worst.filter}, p95 ${fmt(worst.dist.p95, 1)} ms; the prune held delivery for up to ` +
      `${fmt(withPrune.latency.max, 0)} ms (max latency; ${fmt(base.latency.max, 0)} ms without)`,
  );
  line('load average at the end', loadavg());
  record('eventlog', {
    events: EVENTS,
    prune_via: PRUNE_VIA,
    seed_s: seedS,
    db_mb: sizeMb,
    ready_ms: readyMs,
    listing,
    base: { latency: base.latency, lost: base.lost, dup: base.duplicates },
    prune_day: pruneDay,
    prune_half: pruneHalf,
    daily: {
      events: daily,
      start_ms: jobStartAt - herald.spawnedAt,
      done_ms: jobDoneAt - herald.spawnedAt,
      ready_ms: readyDailyMs,
      latency: withJob.latency,
      during: jobDuring,
    },
  });
} finally {
  await herald.stop();
  await sink.close();
  fs.rmSync(opts.dataDir, { recursive: true, force: true });
}
