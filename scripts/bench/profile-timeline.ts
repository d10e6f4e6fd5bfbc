/**
 * Timeline of a V8 `.cpuprofile`: busy time per window and the top self-time functions in each busy
 * window, to find what runs during a stall. `npx node scripts/bench/profile-timeline.ts <file> [windowMs] [fromS]
 * [toS]`
 */
import fs from 'node:fs';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
const [file, w = '100', from = '0', to = '1e9'] = process.argv.slice(2);
if (!file) {
  process.stderr.write('usage: profile-timeline.ts <file.cpuprofile> [windowMs] [fromS] [toS]\n');
  process.exit(2);
}
const prof = JSON.parse(fs.readFileSync(file, 'utf8')) as {
  nodes: Node[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
};
const byId = new Map(prof.nodes.map((n) => [n.id, n]));
const short = (url: string) => url.replace(/^file:\/\/.*?\/(node_modules|core|plugins|scripts)\//, '$1/');
const label = (n: Node) =>
  `${n.callFrame.functionName || '(anonymous)'} ${short(n.callFrame.url)}:${n.callFrame.lineNumber + 1}`;
const win = Number(w) * 1000;
let t = 0;
const windows = new Map<number, Map<string, number>>();
for (let i = 0; i < prof.samples.length; i++) {
  t += prof.timeDeltas[i] ?? 0;
  if (t / 1e6 < Number(from) || t / 1e6 > Number(to)) continue;
  const n = byId.get(prof.samples[i]!)!;
  if (n.callFrame.functionName === '(idle)') continue;
  const k = Math.floor(t / win);
  const m = windows.get(k) ?? new Map<string, number>();
  m.set(label(n), (m.get(label(n)) ?? 0) + (prof.timeDeltas[i + 1] ?? 0));
  windows.set(k, m);
}
for (const [k, m] of [...windows].sort((a, b) => a[0] - b[0])) {
  const busy = [...m.values()].reduce((a, b) => a + b, 0);
  const topFns = [...m]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 4)
    .map(([l, us]) => `${(us / 1000).toFixed(0)}ms ${l}`)
    .join(' | ');
  process.stdout.write(
    `${((k * win) / 1e6).toFixed(2).padStart(7)} s busy ${(busy / 1000).toFixed(0).padStart(4)} ms  ${topFns}\n`,
  );
}
