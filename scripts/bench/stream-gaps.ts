/**
 * Where the chunks of bench:streams wait: the service loop's longest gaps, what they held and what ran in them.
 *
 * `BENCH_LAG_OUT=<lag.json> [BENCH_NODE_ARGS=--trace-gc BENCH_CHILD_STDOUT=<gc.log>] [BENCH_CPU_PROF=<dir>]
 * npm run bench:streams`, then `npx node scripts/bench/stream-gaps.ts <lag.json> [--gc <gc.log>]
 * [--prof <file.cpuprofile>] [--top <n>]`.
 *
 * For each phase (while the streams open, once all are open) it prints the chunks' wait from emission to the service's
 * read, and the `--top` longest gaps between two of the sampler's 2 ms ticks (one loop turn, or one poll phase that
 * kept polling): the chunks read during the gap and how many a read carried, the full collections whose marking
 * overlapped it (`--gc`), and the main thread's sampled time in it by kind of work (`--prof`; a profile of the built
 * service is read through its bundles' module marks, so that it is classified as one of the sources).
 */
import fs from 'node:fs';
import { dist, fmt } from './lib/stats.ts';

interface Samples {
  origin: number;
  clock: { hr: number; wall: number };
  at: number[];
  readEmitted: number[];
  read: number[];
}
interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

const args = process.argv.slice(2);
const option = (name: string): string | undefined => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : undefined;
};
const file = args[0];
if (!file || file.startsWith('--')) {
  process.stderr.write('usage: stream-gaps.ts <lag.json> [--gc <gc.log>] [--prof <file.cpuprofile>] [--top <n>]\n');
  process.exit(2);
}
const { windows, samples: s } = JSON.parse(fs.readFileSync(file, 'utf8')) as {
  windows: Record<'opening' | 'open', [number, number]> & { closing?: [number, number] };
  samples: Samples;
};
const top = Number(option('top') ?? 4);

/** Full collections of the main isolate (the first one named in the log), with their marking's start, in wall ms. */
function fullCollections(log: string): { start: number; end: number; pause: number }[] {
  const out: { start: number; end: number; pause: number }[] = [];
  let main: string | undefined;
  for (const l of log.split('\n')) {
    const m = /^\[\d+:(0x[0-9a-f]+)\]\s+(\d+) ms: (Scavenge|Mark-Compact)\b.*?MB, pooled: \d+ MB, ([\d.]+) \//.exec(l);
    if (!m) continue;
    main ??= m[1];
    if (m[1] !== main || m[3] !== 'Mark-Compact') continue;
    const end = s.origin + Number(m[2]);
    const marking = Number(/walltime since start of marking (\d+) ms/.exec(l)?.[1] ?? 0);
    out.push({ start: end - marking, end: end + Number(m[4]), pause: Number(m[4]) });
  }
  return out;
}

/**
 * The source module a frame of the built service ran (`core/dist/*.js` bundles mark each module they hold with a
 * `// core/src/….ts` comment line, as `// plugins/…` for plugins): the frame's own URL for anything else. Without it a
 * profile of the built service, which bench:streams runs by default, matches none of the kinds below by file.
 */
function sourceModules(): (url: string, line: number) => string {
  const marks = new Map<string, { line: number; module: string }[]>();
  const read = (url: string) => {
    let m = marks.get(url);
    if (m) return m;
    m = [];
    try {
      const lines = fs.readFileSync(new URL(url), 'utf8').split('\n');
      for (let i = 0; i < lines.length; i++) {
        const r = /^\/\/ ((?:core|plugins)\/\S+\.ts)$/.exec(lines[i]!);
        if (r) m.push({ line: i, module: r[1]! });
      }
    } catch {
      /* a file gone since the run: its URL stands */
    }
    marks.set(url, m);
    return m;
  };
  return (url, line) => {
    if (!url.startsWith('file:') || !url.includes('/dist/')) return url;
    let found = url;
    for (const mark of read(url)) {
      if (mark.line > line) break;
      found = mark.module;
    }
    return found;
  };
}

/** A function giving the sampled main-thread time in [from, to] (wall ms) by kind of work, largest first. */
function profileKinds(prof: Profile): (from: number, to: number) => [string, number][] {
  const byId = new Map(prof.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of prof.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const source = sourceModules();
  const frame = (n: ProfileNode) => `${n.callFrame.functionName} ${source(n.callFrame.url, n.callFrame.lineNumber)}`;
  const kinds: [string, RegExp][] = [
    ['relaying a chunk', /onResponseData .*model-fetch/],
    ['opening: the SSE response', /respond .*send\.ts|open .*sse\.ts/],
    ['SQL', /sqlite|db\/database\.ts/],
    ['the upstream connection', /internalConnect|connect .*undici|Client .*undici/],
    ['HTTP intake', /parserOnIncoming|_http_server|fastify/],
    ['assistant setup', /assistant\/(send|assemble|context|lab-tools|tools)/],
  ];
  return (from, to) => {
    const sums = new Map<string, number>();
    let t = prof.startTime;
    for (let i = 0; i < prof.samples.length; i++) {
      t += prof.timeDeltas[i] ?? 0;
      const wall = s.clock.wall + (t - s.clock.hr) / 1000;
      if (wall < from || wall > to) continue;
      const leaf = byId.get(prof.samples[i]!)!;
      let kind = 'other';
      if (leaf.callFrame.functionName === '(garbage collector)') kind = 'garbage collection';
      else if (leaf.callFrame.functionName === '(idle)') kind = 'idle';
      else {
        const stack: string[] = [];
        for (let id: number | undefined = leaf.id; id !== undefined; id = parent.get(id))
          stack.push(frame(byId.get(id)!));
        const joined = stack.join('\n');
        kind = kinds.find(([, re]) => re.test(joined))?.[0] ?? 'other';
      }
      sums.set(kind, (sums.get(kind) ?? 0) + (prof.timeDeltas[i + 1] ?? 0) / 1000);
    }
    return [...sums].sort((a, b) => b[1] - a[1]);
  };
}

const gcLog = option('gc');
const collections = gcLog ? fullCollections(fs.readFileSync(gcLog, 'utf8')) : undefined;
const profFile = option('prof');
const kindsIn = profFile ? profileKinds(JSON.parse(fs.readFileSync(profFile, 'utf8')) as Profile) : undefined;

const phases: [string, [number, number]][] = [
  ['while the streams open', windows.opening],
  ['once all are open', windows.open],
];
if (windows.closing) phases.push(['while they end', windows.closing]);
for (const [phase, [from, to]] of phases) {
  const waits = s.read.filter((_, i) => s.readEmitted[i]! >= from && s.readEmitted[i]! < to);
  const d = dist(waits);
  process.stdout.write(
    `\n${phase} (${fmt(to - from, 0)} ms): chunk emitted → read p50 / p95 / p99 / max ` +
      `${fmt(d.p50, 1)} / ${fmt(d.p95, 1)} / ${fmt(d.p99, 1)} / ${fmt(d.max, 1)} ms (${d.n} chunks)\n`,
  );
  if (collections) {
    const inPhase = collections
      .filter((c) => c.end >= from && c.start < to)
      .map((c) => `marking ${fmt(c.start - from, 0)}–${fmt(c.end - from, 0)} ms, pause ${fmt(c.pause, 1)} ms`);
    process.stdout.write(`  full collections: ${inPhase.join('; ') || 'none'}\n`);
  }
  if (kindsIn) {
    const kinds = kindsIn(from, to);
    process.stdout.write(`  the whole phase: ${kinds.map(([k, ms]) => `${k} ${fmt(ms, 0)} ms`).join(', ')}\n`);
  }
  const gaps: { at: number; ms: number }[] = [];
  for (let i = 1; i < s.at.length; i++)
    if (s.at[i]! >= from && s.at[i - 1]! < to) gaps.push({ at: s.at[i - 1]!, ms: s.at[i]! - s.at[i - 1]! });
  gaps.sort((a, b) => b.ms - a.ms);
  for (const g of gaps.slice(0, top)) {
    const reads = new Map<number, number>();
    for (let i = 0; i < s.read.length; i++) {
      const t = s.readEmitted[i]! + s.read[i]!;
      if (t >= g.at && t <= g.at + g.ms) reads.set(t, (reads.get(t) ?? 0) + 1);
    }
    const chunks = [...reads.values()].reduce((a, b) => a + b, 0);
    const marking = collections?.some((c) => c.start < g.at + g.ms && c.end > g.at);
    process.stdout.write(
      `  gap of ${fmt(g.ms, 1)} ms at ${fmt(g.at - from, 0)} ms: ${chunks} chunks read in ${reads.size} reads` +
        `${collections ? (marking ? ', during a full collection' : ', no full collection') : ''}\n`,
    );
    if (kindsIn) {
      const kinds = kindsIn(g.at, g.at + g.ms);
      process.stdout.write(`    ${kinds.map(([k, ms]) => `${k} ${fmt(ms, 1)} ms`).join(', ')}\n`);
    }
  }
}
