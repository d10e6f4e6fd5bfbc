/**
 * Benchmark, issue 27 item 5, fan-out: one event to 1, 5 and 20 targets. The relay chain of bench:relay (signed
 * GitHub push webhooks → codehost provider → one tracker) with the tracker linked to N chat-webhook targets
 * (mattermost), each posting to its own path of a loopback sink in a process of its own that counts every
 * (target, event) pair. Per N, a fresh service, a warm-up, then a burst of about the same number of deliveries;
 * the service's CPU (from /proc) until every event left `pending` gives CPU per event and per delivery. The
 * baseline is the same run's N = 1: CPU per delivery at N over that at 1, goal ≤ 0.5× at 20 targets (the event's
 * inbound and durable costs are shared by its deliveries).
 *
 * `npm run bench:fanout` (BENCH_DELIVERIES, BENCH_CONCURRENCY, BENCH_FANOUT="1,5,20" shrink or grow it).
 */
import fs from 'node:fs';
import { BENCH_SECRET } from './lib/codehost.ts';
import { Api, benchEntry, freePort, heraldOptions, spawnHerald, tempDir } from './lib/herald.ts';
import { startKeyedSink } from './lib/keyed-sink.ts';
import { closedLoop } from './lib/load.ts';
import { deliveries, RELAY_PLUGINS } from './lib/relay-setup.ts';
import { envInt, fmt, heading, line, procCpuMs, record, sleep, wallMs } from './lib/stats.ts';

const DELIVERIES = envInt('BENCH_DELIVERIES', 3_000);
const WARM_DELIVERIES = 600;
const C = envInt('BENCH_CONCURRENCY', 32);
// What boots: the built service (`npm start`'s, the default) or the sources (BENCH_ENTRY=source).
const ENTRY = benchEntry();
const FANOUT = (process.env.BENCH_FANOUT ?? '1,5,20').split(',').map(Number);

interface Phase {
  targets: number;
  events: number;
  deliveries: number;
  lost: number;
  duplicates: number;
  unmatched: number;
  rejected: number;
  cpuUsPerEvent: number;
  cpuUsPerDelivery: number;
  deliveriesPerS: number;
  wallS: number;
  /** CPU over the measured phase, ms: service, load generator (this process), sink. */
  cpu: { service: number; load: number; sink: number };
  /** Share of the machine's CPU (all cores) busy during the phase, any process. */
  machineBusy: number;
}

/** The whole machine's busy and total CPU time so far, ms (every core, every process: /proc/stat). */
const machineMs = (): { busy: number; all: number } => {
  const f = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1, 9).map(Number);
  const all = f.reduce((a, b) => a + b, 0) * 10;
  return { busy: all - (f[3]! + f[4]!) * 10, all };
};

const selfCpuMs = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

async function phase(targets: number): Promise<Phase> {
  const events = Math.ceil(DELIVERIES / targets);
  const warm = Math.max(50, Math.ceil(WARM_DELIVERIES / targets));
  const ids = warm + events;
  const sink = await startKeyedSink(targets, ids);
  const opts = heraldOptions(tempDir('fanout'), await freePort(), RELAY_PLUGINS, {}, ENTRY);
  const herald = spawnHerald(opts);
  try {
    await herald.ready();
    const api = new Api(herald.url);
    await api.setup();
    const p = await api.ok('POST', '/api/providers', {
      kind: 'codehost',
      name: 'GitHub bench',
      config: { host: 'github', webhook_secret: BENCH_SECRET },
    });
    const tr = await api.ok('POST', '/api/trackers', { provider_id: p.id, name: 'All pushes' });
    for (let k = 0; k < targets; k++) {
      const tg = await api.ok('POST', '/api/targets', {
        kind: 'chat_webhook',
        name: `Mattermost sink ${k}`,
        config: { format: 'mattermost', url: `${sink.url}t${k}` },
        locale: 'en',
      });
      await api.ok('PUT', `/api/trackers/${tr.id}/targets/${tg.id}`);
    }
    const hookUrl = `${herald.url}${new URL(p.webhook_url).pathname}`;
    const settled = async (expect: number, ms: number) => {
      const end = wallMs() + ms;
      await sink.waitTotal(expect, ms);
      // Arrived is not settled: the delivery's and the event's outcome rows are written after the send.
      while (wallMs() < end) {
        const r = await api.ok<{ events: unknown[] }>('GET', '/api/events?dispatch_status=pending&limit=1');
        if (!r.events.length) return;
        await sleep(20);
      }
    };

    await closedLoop(hookUrl, deliveries(0, warm), C);
    await settled(warm * targets, 60_000);

    const cpu0 = { service: procCpuMs(herald.pid), load: selfCpuMs(), sink: sink.cpuMs() };
    const m0 = machineMs();
    const t0 = wallMs();
    const load = await closedLoop(hookUrl, deliveries(warm, events), C);
    await settled((warm + events) * targets, 90_000);
    const wallS = (wallMs() - t0) / 1000;
    const cpu = {
      service: procCpuMs(herald.pid) - cpu0.service,
      load: selfCpuMs() - cpu0.load,
      sink: sink.cpuMs() - cpu0.sink,
    };
    const m1 = machineMs();
    const rejected = load.status.filter((s) => s < 200 || s >= 300).length;
    const got = await sink.counts();
    let delivered = 0;
    let lost = 0;
    let duplicates = 0;
    for (let k = 0; k < targets; k++)
      for (let n = warm; n < ids; n++) {
        const c = got.counts[k * ids + n]!;
        if (c === 0) lost++;
        else delivered++;
        if (c > 1) duplicates += c - 1;
      }
    return {
      targets,
      events,
      deliveries: delivered,
      lost,
      duplicates,
      unmatched: got.unmatched,
      rejected,
      cpuUsPerEvent: (cpu.service * 1000) / events,
      cpuUsPerDelivery: (cpu.service * 1000) / (events * targets),
      deliveriesPerS: delivered / wallS,
      wallS,
      cpu,
      machineBusy: (m1.busy - m0.busy) / (m1.all - m0.all),
    };
  } finally {
    await herald.stop();
    await sink.close();
    fs.rmSync(opts.dataDir, { recursive: true, force: true });
  }
}

heading(`fan-out: one event to ${FANOUT.join(', ')} targets (~${DELIVERIES} deliveries each, ${C} connections)`);
const results: Phase[] = [];
for (const n of FANOUT) {
  const r = await phase(n);
  results.push(r);
  const base = results[0]!;
  const ratio = r.cpuUsPerDelivery / base.cpuUsPerDelivery;
  const who = Object.entries(r.cpu).sort((a, b) => b[1] - a[1]);
  line(`${n} target(s): events / deliveries`, `${r.events} / ${r.deliveries} in ${fmt(r.wallS, 2)} s`);
  line(
    `${n} target(s): lost / duplicated`,
    `${r.lost} / ${r.duplicates}${r.rejected ? `, ${r.rejected} rejected` : ''}` +
      `${r.unmatched ? `, ${r.unmatched} unmatched` : ''}`,
    { text: '0 / 0', ok: r.lost === 0 && r.duplicates === 0 && r.rejected === 0 },
  );
  line(
    `${n} target(s): service CPU per event / delivery`,
    `${fmt(r.cpuUsPerEvent, 0)} / ${fmt(r.cpuUsPerDelivery, 0)} µs`,
  );
  line(`${n} target(s): deliveries/s`, fmt(r.deliveriesPerS, 0));
  line(
    `${n} target(s): CPU per delivery vs 1 target`,
    `${fmt(ratio, 2)}×`,
    n === 20 ? { text: '<= 0.5×', ok: ratio <= 0.5 } : undefined,
  );
  line(
    `${n} target(s): CPU used, ms (% of wall)`,
    who.map(([k, v]) => `${k} ${fmt(v, 0)} (${fmt((100 * v) / 1000 / r.wallS, 0)} %)`).join(', ') +
      ` → most: ${who[0]![0]}`,
  );
  line(`${n} target(s): machine busy (every process)`, `${fmt(100 * r.machineBusy, 0)} % of all cores`);
}
record('fanout', { deliveries: DELIVERIES, concurrency: C, phases: results });
