/**
 * Summarizes a V8 `.cpuprofile` (from `--cpu-prof`): self time by function and by file, so a
 * benchmark run's hot spots can be read without a browser. `npx node scripts/bench/profile-summary.ts <file> [top]
 * [fromS] [toS]` (fromS / toS: only the samples between those seconds after the profile's start, e.g. the measured
 * phase).
 */
import fs from 'node:fs';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount: number;
  children?: number[];
}
const file = process.argv[2];
if (!file) {
  process.stderr.write('usage: profile-summary.ts <file.cpuprofile> [top]\n');
  process.exit(2);
}
const top = Number(process.argv[3] ?? 30);
const prof = JSON.parse(fs.readFileSync(file, 'utf8')) as {
  nodes: Node[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
};
const byId = new Map(prof.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of prof.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const from = Number(process.argv[4] ?? 0) * 1e6;
const to = Number(process.argv[5] ?? 1e9) * 1e6;
const self = new Map<number, number>();
let at = 0;
for (let i = 0; i < prof.samples.length; i++) {
  at += prof.timeDeltas[i] ?? 0;
  if (at < from || at > to) continue;
  self.set(prof.samples[i]!, (self.get(prof.samples[i]!) ?? 0) + (prof.timeDeltas[i] ?? 0));
}
const total = [...self.values()].reduce((a, b) => a + b, 0);
const short = (url: string) =>
  url.replace(/^file:\/\/.*?\/(node_modules|core|plugins|scripts)\//, '$1/').replace(/^node:/, 'node:');
const label = (n: Node) =>
  `${n.callFrame.functionName || '(anonymous)'} ${short(n.callFrame.url)}:${n.callFrame.lineNumber + 1}`;

const selfBy = new Map<string, number>();
const fileBy = new Map<string, number>();
const inclBy = new Map<string, number>();
for (const [id, us] of self) {
  const n = byId.get(id)!;
  selfBy.set(label(n), (selfBy.get(label(n)) ?? 0) + us);
  const f = short(n.callFrame.url) || `(${n.callFrame.functionName})`;
  const key = f.startsWith('node_modules/')
    ? f
        .split('/')
        .slice(0, f.startsWith('node_modules/@') ? 3 : 2)
        .join('/')
    : f;
  fileBy.set(key, (fileBy.get(key) ?? 0) + us);
  // Inclusive: charge every distinct frame on the stack once.
  const seen = new Set<string>();
  for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
    const l = label(byId.get(cur)!);
    if (!seen.has(l)) {
      seen.add(l);
      inclBy.set(l, (inclBy.get(l) ?? 0) + us);
    }
  }
}
const print = (title: string, m: Map<string, number>) => {
  process.stdout.write(
    `\n${title} (total ${(total / 1000).toFixed(0)} ms sampled over ` +
      `${((Math.min(to, prof.endTime - prof.startTime) - from) / 1e6).toFixed(1)} s)\n`,
  );
  for (const [k, v] of [...m].sort((a, b) => b[1] - a[1]).slice(0, top))
    process.stdout.write(
      `  ${((100 * v) / total).toFixed(1).padStart(5)}%  ${(v / 1000).toFixed(0).padStart(7)} ms  ${k}\n`,
    );
};
print('self time by function', selfBy);
print('self time by file / package', fileBy);
print('inclusive time by function', inclBy);
