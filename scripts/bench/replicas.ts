/**
 * Benchmark, issue 27 item 8, PostgreSQL replicas: the relay chain of bench:relay (signed GitHub push webhooks →
 * codehost provider → tracker → chat-webhook target → loopback sink) on one throwaway PostgreSQL cluster
 * (scripts/peers/postgres.ts: loopback, fsync and synchronous_commit off), with one replica and then with two
 * (same database and secret key; the burst split evenly over both replicas' webhook URLs; either replica's
 * dispatcher may deliver any event), against `pgbench`'s simple-insert ceiling on the same server in the same run
 * (a one-table schema, a script of one INSERT, 32 clients for 10 s, measured before and after the relay phases).
 * Per phase: delivered events per second and its ratio to the ceiling, lost and duplicated across replicas (the sink
 * counts every id), PostgreSQL transactions and row writes per event (pg_stat_database), and the CPU of each
 * replica, of PostgreSQL (postmaster and backends, from /proc) and of the machine.
 *
 * `npm run bench:replicas` (BENCH_EVENTS, BENCH_CONCURRENCY, BENCH_PGBENCH_S adjust it).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { startPostgres } from '../peers/postgres.ts';
import { BENCH_SECRET } from './lib/codehost.ts';
import { Api, benchEntry, freePort, type Herald, heraldOptions, spawnHerald, tempDir } from './lib/herald.ts';
import { closedLoop, type LoadResult } from './lib/load.ts';
import { deliveries, outcome, RELAY_PLUGINS } from './lib/relay-setup.ts';
import { startSink } from './lib/sink.ts';
import { envInt, fmt, heading, line, procCpuMs, record, wallMs } from './lib/stats.ts';

const EVENTS = envInt('BENCH_EVENTS', 5_000);
const WARM = 500;
const C = envInt('BENCH_CONCURRENCY', 32);
const PGBENCH_S = envInt('BENCH_PGBENCH_S', 10);
// What boots: the built service (`npm start`'s, the default) or the sources (BENCH_ENTRY=source).
const ENTRY = benchEntry();

const loadavg = () => fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

const machineMs = (): { busy: number; all: number } => {
  const f = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1, 9).map(Number);
  const all = f.reduce((a, b) => a + b, 0) * 10;
  return { busy: all - (f[3]! + f[4]!) * 10, all };
};

/** CPU (ms) of the PostgreSQL server on `port`: the postmaster (with its reaped children) and live backends. */
function postgresCpuMs(port: number): number {
  let total = 0;
  let master = 0;
  const stats = new Map<number, string[]>();
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const s = fs.readFileSync(`/proc/${d}/stat`, 'utf8');
      stats.set(Number(d), s.slice(s.lastIndexOf(')') + 2).split(' '));
      if (!master && fs.readFileSync(`/proc/${d}/cmdline`, 'utf8').includes(`port=${port}`)) master = Number(d);
    } catch {
      /* gone */
    }
  }
  for (const [pid, f] of stats) {
    // After the command name: 1 = ppid, 11..14 = utime, stime, cutime, cstime (clock ticks).
    if (pid === master) total += Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
    else if (Number(f[1]) === master) total += Number(f[11]) + Number(f[12]);
  }
  return total * 10;
}

/** pgbench's simple-insert ceiling: transactions per second of one INSERT into a one-table schema. */
function pgbench(binDir: string, url: string, dir: string): number {
  const script = path.join(dir, 'insert.sql');
  fs.writeFileSync(script, "INSERT INTO bench_insert (v) VALUES ('a short row of about forty bytes of text');\n");
  const r = spawnSync(
    path.join(binDir, 'pgbench'),
    ['-n', '-c', '32', '-j', '2', '-T', String(PGBENCH_S), '-f', script, url],
    { encoding: 'utf8' },
  );
  const m = /tps = ([\d.]+) \(without initial connection time\)/.exec(r.stdout ?? '');
  if (!m) throw new Error(`pgbench failed: ${r.stderr || r.stdout}`);
  return Number(m[1]);
}

interface Phase {
  replicas: number;
  events: number;
  delivered: number;
  lost: number;
  duplicates: number;
  rejected: number;
  rate: number;
  p99: number;
  wallS: number;
  xactPerEvent: number;
  rowsPerEvent: number;
  cpuUsPerEvent: { replicas: number[]; postgres: number };
  machineBusy: number;
}

heading(
  `PostgreSQL replicas: relay burst of ${EVENTS} events at ${C} connections, 1 and 2 replicas (load ${loadavg()})`,
);
const pgPeer = await startPostgres();
const port = Number(new URL(pgPeer.url()).port);
const work = tempDir('replicas');
const heralds: Herald[] = [];
const sink = await startSink(4 * (EVENTS + WARM));
try {
  const benchDb = await pgPeer.createDatabase();
  const c0 = new pg.Client({ connectionString: pgPeer.url(benchDb) });
  await c0.connect();
  await c0.query('CREATE TABLE bench_insert (id bigserial PRIMARY KEY, v text NOT NULL)');
  await c0.end();
  const ceilingBefore = pgbench(pgPeer.binDir, pgPeer.url(benchDb), work);
  line('pgbench simple INSERT (32 clients), before', `${fmt(ceilingBefore, 0)} tps`);

  const dbName = await pgPeer.createDatabase();
  const dbUrl = pgPeer.url(dbName);
  const stat = new pg.Client({ connectionString: dbUrl });
  await stat.connect();
  const counters = async () => {
    const r = await stat.query(
      'SELECT xact_commit + xact_rollback AS x, tup_inserted + tup_updated + tup_deleted AS w FROM ' +
        'pg_stat_database WHERE datname = current_database()',
    );
    return { x: Number(r.rows[0].x), w: Number(r.rows[0].w) };
  };
  /** Starts replica `i` on the shared database (the others with the first's key) and waits until it is ready. */
  const startReplica = async (i: number, key?: string) => {
    const o = heraldOptions(
      path.join(work, `r${i}`),
      await freePort(),
      RELAY_PLUGINS,
      { SERVICE_DATABASE_URL: dbUrl },
      ENTRY,
    );
    if (key) o.key = key;
    fs.mkdirSync(o.dataDir);
    heralds.push(spawnHerald(o));
    await heralds[i]!.ready(120_000);
    return o;
  };
  const first = await startReplica(0);
  const api = new Api(heralds[0]!.url);
  await api.setup();
  const p = await api.ok('POST', '/api/providers', {
    kind: 'codehost',
    name: 'GitHub bench',
    config: { host: 'github', webhook_secret: BENCH_SECRET },
  });
  const tr = await api.ok('POST', '/api/trackers', { provider_id: p.id, name: 'All pushes' });
  const tg = await api.ok('POST', '/api/targets', {
    kind: 'chat_webhook',
    name: 'Mattermost sink',
    config: { format: 'mattermost', url: sink.url },
    locale: 'en',
  });
  await api.ok('PUT', `/api/trackers/${tr.id}/targets/${tg.id}`);
  const hookPath = new URL(p.webhook_url).pathname;

  let next = 0;
  /** A burst of `n` events split evenly over the running replicas; waits until the sink has them all. */
  const burst = async (n: number) => {
    const from = next;
    next += n;
    const share = Math.ceil(n / heralds.length);
    const parts = heralds.map((h, k) => ({
      h,
      from: from + k * share,
      n: Math.max(0, Math.min(share, n - k * share)),
    }));
    const loads: LoadResult[] = await Promise.all(
      parts.map((x) =>
        closedLoop(`${x.h.url}${hookPath}`, deliveries(x.from, x.n), Math.max(1, Math.floor(C / heralds.length))),
      ),
    );
    await sink.waitDistinct(next, 120_000);
    return parts.map((x, k) => ({ ...x, load: loads[k]! }));
  };
  const phase = async (): Promise<Phase> => {
    await burst(WARM);
    // Settles are written after the send: let the warm-up's finish before counting.
    await new Promise((r) => setTimeout(r, 1000));
    const cpu0 = { r: heralds.map((h) => procCpuMs(h.pid)), pg: postgresCpuMs(port) };
    const k0 = await counters();
    const m0 = machineMs();
    const t0 = wallMs();
    const parts = await burst(EVENTS);
    const wallS = (wallMs() - t0) / 1000;
    const m1 = machineMs();
    // The settles of the last sends land just after their arrival.
    await new Promise((r) => setTimeout(r, 1000));
    const k1 = await counters();
    const cpu = { r: heralds.map((h, i) => procCpuMs(h.pid) - cpu0.r[i]!), pg: postgresCpuMs(port) - cpu0.pg };
    let delivered = 0;
    let lost = 0;
    let duplicates = 0;
    let rejected = 0;
    let started = Number.POSITIVE_INFINITY;
    let last = 0;
    const lat: number[] = [];
    for (const x of parts) {
      const o = outcome(x.load, sink, x.from);
      delivered += o.delivered;
      lost += o.lost;
      duplicates += o.duplicates;
      rejected += o.rejected;
      started = Math.min(started, x.load.started);
      last = Math.max(last, o.lastArrival);
      for (let i = 0; i < x.n; i++) if (sink.at[x.from + i]) lat.push(sink.at[x.from + i]! - x.load.sentAt[i]!);
    }
    lat.sort((a, b) => a - b);
    return {
      replicas: heralds.length,
      events: EVENTS,
      delivered,
      lost,
      duplicates,
      rejected,
      rate: delivered / ((last - started) / 1000),
      p99: lat[Math.max(0, Math.ceil(0.99 * lat.length) - 1)] ?? Number.NaN,
      wallS,
      xactPerEvent: (k1.x - k0.x) / EVENTS,
      rowsPerEvent: (k1.w - k0.w) / EVENTS,
      cpuUsPerEvent: { replicas: cpu.r.map((ms) => (ms * 1000) / EVENTS), postgres: (cpu.pg * 1000) / EVENTS },
      machineBusy: (m1.busy - m0.busy) / (m1.all - m0.all),
    };
  };

  const phases: Phase[] = [];
  phases.push(await phase());
  await startReplica(1, first.key);
  phases.push(await phase());
  await stat.end();
  const ceilingAfter = pgbench(pgPeer.binDir, pgPeer.url(benchDb), work);
  line('pgbench simple INSERT (32 clients), after', `${fmt(ceilingAfter, 0)} tps`);
  const ceiling = (ceilingBefore + ceilingAfter) / 2;
  for (const r of phases) {
    const tag = `${r.replicas} replica${r.replicas > 1 ? 's' : ''}`;
    line(
      `${tag}: delivered/s (× pgbench ceiling)`,
      `${fmt(r.rate, 0)} (${fmt(r.rate / ceiling, 3)}×); p99 ${fmt(r.p99, 0)} ms; ${fmt(r.wallS, 1)} s`,
    );
    line(
      `${tag}: lost / duplicated across replicas`,
      `${r.lost} / ${r.duplicates}${r.rejected ? `, ${r.rejected} rejected` : ''}`,
      { text: '0 / 0', ok: r.lost === 0 && r.duplicates === 0 && r.rejected === 0 },
    );
    line(
      `${tag}: PostgreSQL per event`,
      `${fmt(r.xactPerEvent, 1)} transactions, ${fmt(r.rowsPerEvent, 1)} row writes; ` +
        `at the ceiling's rate ≈ ${fmt(ceiling / r.xactPerEvent, 0)} events/s`,
    );
    line(
      `${tag}: CPU per event`,
      `replicas ${r.cpuUsPerEvent.replicas.map((u) => `${fmt(u, 0)} µs`).join(' + ')}, PostgreSQL ` +
        `${fmt(r.cpuUsPerEvent.postgres, 0)} µs; machine ${fmt(100 * r.machineBusy, 0)} % busy`,
    );
  }
  const [one, two] = phases as [Phase, Phase];
  line('2 replicas / 1 replica, delivered/s', `${fmt(two.rate / one.rate, 2)}×`);
  const perEvent = (r: Phase) => r.cpuUsPerEvent.replicas.reduce((a, b) => a + b, 0) + r.cpuUsPerEvent.postgres;
  const cores = (n: number) => (perEvent(two) * n) / 1e6;
  line(
    'limiting resource',
    two.machineBusy > 0.9
      ? `the machine's CPU (${fmt(100 * two.machineBusy, 0)} % of both cores busy with 2 replicas; ` +
          `${fmt(perEvent(two), 0)} µs of replica + PostgreSQL CPU per event = ${fmt(cores(two.rate), 2)} cores at ` +
          `${fmt(two.rate, 0)}/s)`
      : `not the machine's CPU (${fmt(100 * two.machineBusy, 0)} % busy): PostgreSQL round trips per event ` +
          `(${fmt(two.xactPerEvent, 1)} transactions)`,
  );
  line('load average at the end', loadavg());
  record('replicas', {
    events: EVENTS,
    concurrency: C,
    ceiling_before: ceilingBefore,
    ceiling_after: ceilingAfter,
    phases,
  });
} finally {
  for (const h of heralds) await h.stop();
  await sink.close();
  await pgPeer.stop();
  fs.rmSync(work, { recursive: true, force: true });
}
