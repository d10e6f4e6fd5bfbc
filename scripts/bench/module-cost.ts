/**
 * What each module costs resident (issue 27). Three steps, each in fresh processes:
 *
 * 1. Boots the service with every first-party plugin and a loader hook (lib/load-tracker.ts) that
 *    records every module it loads, through `import` or `require`, until it has idled; the modules
 *    are grouped by unit: an npm package (`fastify`, `@mikro-orm/core`), a plugin package
 *    (`plugins/target-mqtt`), a directory of the core (`core/src/relay`), or the migrations. Its
 *    entry points are its modules other units import.
 * 2. Marginal cost: one process (the service's Node flags and compile cache, --expose-gc) imports
 *    the units one after the other, dependencies first (from the imports the hook saw), with a
 *    memory-reducing full collection after each, and takes the growth of its private resident
 *    memory (RssAnon: V8's heap and code, malloc), of its resident file pages (RssFile: mostly the
 *    node binary's code, paid once per code path by whichever unit runs it first, and shared with
 *    every Node process) and of V8's used heap. Each unit is charged for what it brings that was not
 *    loaded yet, so the columns add up to what the code costs, without the data.
 * 3. Alone: for each npm package with at least 20 KB of source loaded, a process that imports only
 *    it (with what it depends on): what loading it lazily would save if nothing else at boot used it.
 *
 * Every child first loads one TypeScript module importing 80 small ones: Node's type stripper (~17
 * MB resident) comes with the first .ts file that is not in the compile cache, and Node's loader and
 * compiler code with the first modules, in the service and in the baseline process alike, so no
 * unit is charged for them. The private column still moves by a MB or two with the order (V8 grows
 * its heap in steps, freed malloc memory is kept); the heap column is the steadiest.
 *
 * Prints both tables (largest first) and the idle RSS of the boot. The units the service should not
 * load at boot (LAZY below) are checked: a line says MISSED when the boot loaded one of them.
 *
 * `npx node scripts/bench/module-cost.ts` (BENCH_TOP=<n> rows, default 40; BENCH_ALONE=0 skips step 3).
 * BENCH_ENTRY=built boots the built service (core/dist, what `npm start` runs; rebuilt first) and measures its files:
 * a unit is a file of the build (each plugin's directory one unit), imported dependencies first as above; service.js
 * (the core's code, most of it) comes last, imported with process.exit stubbed so that its start, refused for want
 * of configuration, leaves its code loaded without a service. The last row is what the running service holds
 * beyond its code (its data: the database connection, the plugins' instances, caches), the idle boot's private
 * memory less the child's. Step 3 is the same as from source (an npm package alone).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { FIRST_PARTY_PLUGINS } from '../../core/src/config/config.ts';
import { SERVICE_NODE_FLAGS } from '../node-flags.ts';
import { buildService, freePort, heraldOptions, ROOT, spawnHerald, tempDir } from './lib/herald.ts';
import { envInt, fmt, heading, line, record, sleep } from './lib/stats.ts';

const TOP = envInt('BENCH_TOP', 40);
const ALONE = process.env.BENCH_ALONE !== '0';
const IDLE_MS = envInt('BENCH_IDLE_MS', 10_000);
const BUILT = process.env.BENCH_ENTRY === 'built';

/** Packages that load on first use, never at boot: the assistant's, and the plugins' heavy dependencies. */
export const LAZY = [
  'pdfkit',
  'unpdf',
  'openai',
  'mqtt',
  'mailparser',
  'web-push',
  'matrix-js-sdk',
  'smtp-server',
  'nodemailer',
  'grammy',
  'ws',
  'undici',
  'pino-pretty',
  '@mikro-orm/core',
  'kysely',
];

/** The unit a module URL belongs to. */
export function unitOf(url: string): string {
  if (url.startsWith('node:')) return 'node: (built-in)';
  const m = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  if (m) return m[1]!;
  let rel = url.startsWith('file:') ? path.relative(ROOT, new URL(url).pathname) : url;
  if (rel.startsWith('..')) rel = url;
  const parts = rel.split('/');
  // The build: a plugin's directory (its file and its own chunks), else each file (its hash left out).
  if (parts[0] === 'core' && parts[1]?.startsWith('dist'))
    return parts[2] === 'plugins'
      ? parts.slice(0, 4).join('/')
      : `${parts.slice(0, 2).join('/')}/${parts.at(-1)!.replace(/-[\w-]{8}\.js$|\.js$/, '')}`;
  if (parts[0] === 'core' && parts[1] === 'src')
    return parts.length > 3 ? parts.slice(0, 3).join('/') : 'core/src (top)';
  if (parts[0] === 'plugins' || parts[0] === 'packages') return parts.slice(0, 2).join('/');
  return parts[0]!;
}

interface Loaded {
  url: string;
  rssKb: number;
  ms: number;
}
interface Edge {
  from: string;
  to: string;
}

/** Step 1: the modules a booted, idle service has loaded, in order. */
async function trackedBoot(): Promise<{
  loaded: Loaded[];
  edges: Edge[];
  idleKb: { rss: number; anon: number; file: number };
}> {
  const track = path.join(tempDir('mc-track'), 'loaded.jsonl');
  const prev = process.env.BENCH_NODE_ARGS;
  const tracker = pathToFileURL(path.join(ROOT, 'scripts/bench/lib/load-tracker.ts')).href;
  process.env.BENCH_NODE_ARGS = `${prev ?? ''} --import=${tracker}`;
  // As bench:footprint boots it: every first-party plugin, the assistant configured (and never called).
  const o = heraldOptions(
    tempDir('mc'),
    await freePort(),
    FIRST_PARTY_PLUGINS.join(','),
    { HERALD_LOAD_TRACK: track, AI_BASE_URL: 'http://127.0.0.1:9/v1', AI_API_KEY: 'bench-never-used' },
    BUILT ? 'built' : 'source',
  );
  const h = spawnHerald(o);
  if (prev === undefined) delete process.env.BENCH_NODE_ARGS;
  else process.env.BENCH_NODE_ARGS = prev;
  try {
    await h.ready(120_000);
    await sleep(IDLE_MS);
    const status = fs.readFileSync(`/proc/${h.pid}/status`, 'utf8');
    const field = (f: string) => Number(new RegExp(`^${f}:\\s+(\\d+) kB`, 'm').exec(status)?.[1]);
    const idleKb = { rss: field('VmRSS'), anon: field('RssAnon'), file: field('RssFile') };
    h.proc.kill('SIGUSR2');
    // The hook writes synchronously in its signal handler; wait until the file stops growing.
    let size = -1;
    for (let i = 0; i < 50; i++) {
      await sleep(100);
      const s = fs.existsSync(track) ? fs.statSync(track).size : 0;
      if (s > 0 && s === size) break;
      size = s;
    }
    const rows = fs
      .readFileSync(track, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Loaded | Edge);
    return {
      loaded: rows.filter((r): r is Loaded => 'url' in r),
      edges: rows.filter((r): r is Edge => 'from' in r),
      idleKb,
    };
  } finally {
    await h.stop();
    fs.rmSync(o.dataDir, { recursive: true, force: true });
    fs.rmSync(path.dirname(track), { recursive: true, force: true });
  }
}

/** The child of steps 2 and 3: imports the units given on stdin (JSON), prints one JSON line per unit. */
const CHILD =
  `
import fs from 'node:fs';
import module from 'node:module';
// As main.ts does: compiled code (and TypeScript stripped of its types) is read from Node's on-disk
// cache, which the tracked boot has just filled, instead of being produced again.
module.enableCompileCache?.();
const kb = (status, field) => Number(new RegExp(field + ':\\\\s+(\\\\d+)').exec(status)[1]);
const mem = () => { const s = fs.readFileSync('/proc/self/status', 'utf8'); return { anon: kb(s, 'RssAnon'), ` +
  `file: kb(s, 'RssFile') }; };
const settle = async () => {
  for (let i = 0; i < 2; i++) { globalThis.gc({ type: 'major', execution: 'sync', flavor: 'last-resort' }); ` +
  `await new Promise((r) => setTimeout(r, 20)); }
};
const { warm, units, stubExit } = JSON.parse(fs.readFileSync(0, 'utf8'));
const exit = process.exit.bind(process);
// The built service's chunk starts the service when imported; without its configuration the start is refused with
// process.exit, and what follows the refusal rejects: both stubbed, its code stays loaded and nothing runs.
if (stubExit) { process.exit = () => undefined; process.on('unhandledRejection', () => undefined); }
// Node's TypeScript stripper loads with the first .ts module, in the service and in the baseline alike, and ` +
  `Node's loader
// and compiler code is paged in by the first modules: neither is a unit's cost.
await import(warm);
await settle();
let m = mem(); let heap = process.memoryUsage().heapUsed;
process.stdout.write(JSON.stringify({ unit: '(start)', anonKb: m.anon, fileKb: m.file, heap }) + '\\n');
for (const u of units) {
  let error;
  for (const url of u.urls) { try { await import(url); } catch (e) { error = String(e?.message ?? e).slice(0, ` +
  `120); } }
  await settle();
  const n = mem(); const h = process.memoryUsage().heapUsed;
  process.stdout.write(JSON.stringify({ unit: u.unit, anonKb: n.anon - m.anon, fileKb: n.file - m.file, heap: h ` +
  `- heap, error }) + '\\n');
  m = n; heap = h;
}
exit(0);
`;

interface Cost {
  unit: string;
  anonKb: number;
  fileKb: number;
  heap: number;
  error?: string;
}

function runChild(units: { unit: string; urls: string[] }[], stubExit = false): Cost[] {
  const dir = tempDir('mc-child');
  const file = path.join(dir, 'child.mjs');
  // The built service loads no TypeScript: its warm-up is JavaScript, so that the type stripper is nobody's cost.
  const warm = path.join(dir, BUILT ? 'warm.mjs' : 'warm.ts');
  fs.writeFileSync(file, CHILD);
  // The warm-up: one TypeScript module (the type stripper) importing 40 small ES modules and 40
  // CommonJS ones, so that Node's own loader and compiler code is paged in before anything is
  // charged (it is the first unit's RSS otherwise, ~8 MB of the node binary).
  const body = (i: number) =>
    `function f${i}(a) { return { a, i: ${i}, s: 'x${i}'.repeat(2) }; }\nclass C${i} { async m() { return ` +
    `[${i}].map((x) => x * 2); } }\n`;
  for (let i = 0; i < 40; i++) {
    fs.writeFileSync(path.join(dir, `w${i}.mjs`), `${body(i)}export { f${i}, C${i} };\n`);
    fs.writeFileSync(path.join(dir, `w${i}.cjs`), `${body(i)}module.exports = { f${i}, C${i} };\n`);
  }
  fs.writeFileSync(
    warm,
    `${Array.from({ length: 40 }, (_, i) => `import './w${i}.mjs';\nimport './w${i}.cjs';\n`).join('')}export ` +
      `const warm${BUILT ? '' : ': boolean'} = true;\n`,
  );
  try {
    const r = spawnSync(process.execPath, [...SERVICE_NODE_FLAGS, '--expose-gc', file], {
      cwd: path.join(ROOT, 'core'),
      input: JSON.stringify({ warm: pathToFileURL(warm).href, units, stubExit }),
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
      // Imported modules may start timers or read the environment: keep them away from real data.
      env: { PATH: process.env.PATH, SERVICE_DATA_DIR: dir, HERALD_MEMORY_REDUCER_IDLE_MS: 'off' },
    });
    if (r.status !== 0) throw new Error(`module-cost child failed: ${r.stderr}`);
    return r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Cost);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const mb = (kb: number) => fmt(kb / 1024, 1);

if (BUILT) buildService();
heading(
  `module cost (every first-party plugin; idle ${fmt(IDLE_MS / 1000, 0)} s; ${BUILT ? 'core/dist' : 'core/src'})`,
);
const { loaded, edges, idleKb } = await trackedBoot();

// Group the modules by unit; a unit's entry points are its modules that other units import.
const units = new Map<string, { first: number; urls: string[]; bytes: number; n: number; deps: Set<string> }>();
loaded.forEach((l, i) => {
  const unit = unitOf(l.url);
  let u = units.get(unit);
  if (!u) {
    u = { first: i, urls: [], bytes: 0, n: 0, deps: new Set() };
    units.set(unit, u);
  }
  u.n++;
  try {
    if (l.url.startsWith('file:')) u.bytes += fs.statSync(new URL(l.url)).size;
  } catch {
    /* gone */
  }
});
const isEntry = (url: string) =>
  !url.endsWith('.json') &&
  !/core\/src\/(main|run)\.ts$/.test(url) &&
  // The build's launcher (it imports the service) and its worker entries (each starts its worker's code).
  !/core\/dist[^/]*\/(main|worker-[\w-]+)\.js$/.test(url) &&
  !url.includes('/scripts/bench/');
for (const e of edges) {
  const from = unitOf(e.from);
  const to = unitOf(e.to);
  const u = units.get(to);
  if (from === to || !u || !units.has(from)) continue;
  units.get(from)!.deps.add(to);
  if (isEntry(e.to) && !u.urls.includes(e.to) && (u.urls.length < 16 || to === 'node: (built-in)')) u.urls.push(e.to);
}
for (const [unit, u] of units)
  if (!u.urls.length) {
    const l = loaded.find((x) => unitOf(x.url) === unit && isEntry(x.url));
    if (l) u.urls.push(l.url);
  }
// Dependencies first: depth-first, post-order, from the units in the order the boot reached them (a cycle is cut where
// it closes).
const order: { unit: string; urls: string[] }[] = [];
const visited = new Set<string>();
const visit = (unit: string) => {
  if (visited.has(unit)) return;
  visited.add(unit);
  const u = units.get(unit)!;
  for (const d of [...u.deps].sort((a, b) => units.get(a)!.first - units.get(b)!.first)) visit(d);
  if (u.urls.length) order.push({ unit, urls: u.urls });
};
for (const unit of [...units.keys()].sort((a, b) => units.get(a)!.first - units.get(b)!.first)) visit(unit);
const bootedLazy = LAZY.filter((p) => units.has(p));
line(
  'modules loaded by the boot',
  `${loaded.length} in ${units.size} units, ` +
    `${fmt([...units.values()].reduce((s, u) => s + u.bytes, 0) / 1048576, 1)} MB of source`,
);
line(
  'idle RSS of that boot (with the hook)',
  `${mb(idleKb.rss)} MB: ${mb(idleKb.anon)} MB private, ${mb(idleKb.file)} MB of mapped files`,
);
line('lazy packages loaded at boot', bootedLazy.length ? bootedLazy.join(', ') : 'none', {
  text: 'none',
  ok: bootedLazy.length === 0,
});

// Step 2: dependencies first. In the build, the service's chunk last: it is what the boot runs, the rest its imports.
const SERVICE_UNIT = 'core/dist/service';
const serviceAt = order.findIndex((o) => o.unit === SERVICE_UNIT);
if (BUILT && serviceAt >= 0) order.push(...order.splice(serviceAt, 1));
const costs = runChild(order, BUILT);
const start = costs.shift()!;
const sum = (f: (c: Cost) => number) => costs.reduce((s, c) => s + f(c), 0);
line(
  `process before any unit (Node${BUILT ? '' : ', its type stripper'})`,
  `${mb(start.anonKb)} MB private + ${mb(start.fileKb)} MB of mapped files`,
);
line(
  'every unit imported (sum of the marginal costs)',
  `${mb(sum((c) => c.anonKb))} MB private, ${mb(sum((c) => c.fileKb))} MB of mapped files, ` +
    `${fmt(sum((c) => c.heap) / 1048576, 1)} MB of V8 heap`,
);
// Private: anonymous resident memory (V8's heap and code, malloc). Files: the pages of the node
// binary and native addons first touched, shared with every Node process and paid once per code
// path, so they fall to whichever unit first runs that path.
const header = (first: string) =>
  process.stdout.write(
    `\n  ${first.padEnd(38)} ${'modules'.padStart(7)} ${'source KB'.padStart(9)} ${'private MB'.padStart(10)} ` +
      `${'files MB'.padStart(8)} ${'heap MB'.padStart(8)}\n`,
  );
const row = (c: Cost) => {
  const u = units.get(c.unit)!;
  process.stdout.write(
    `  ${c.unit.padEnd(38)} ${String(u.n).padStart(7)} ${fmt(u.bytes / 1024, 0).padStart(9)} ` +
      `${mb(c.anonKb).padStart(10)} ${mb(c.fileKb).padStart(8)} ` +
      `${fmt(c.heap / 1048576, 2).padStart(8)}${c.error ? `  (${c.error})` : ''}\n`,
  );
};
header('unit (marginal, dependencies first)');
for (const c of [...costs].sort((a, b) => b.anonKb - a.anonKb).slice(0, TOP)) row(c);
if (BUILT) {
  // What the running service holds beyond its code: the idle boot's private memory less the child's with every file.
  const data = idleKb.anon - (start.anonKb + sum((c) => c.anonKb));
  line('the running service beyond its code (idle boot less the child)', `${mb(data)} MB private`);
  const plugins = costs.filter((c) => c.unit.startsWith('core/dist/plugins/'));
  line(
    `the ${plugins.length} built plugins (sum)`,
    `${mb(plugins.reduce((s, c) => s + c.anonKb, 0))} MB private, ` +
      `${fmt(plugins.reduce((s, c) => s + c.heap, 0) / 1048576, 1)} MB of V8 heap`,
  );
}

let alone: Cost[] = [];
if (ALONE) {
  // Step 3: each npm package in a process of its own, those with at least 20 KB of source loaded
  // (the small ones cost less than the noise).
  const packages = order.filter(
    (o) =>
      !o.unit.includes(' ') &&
      !o.unit.includes('/src') &&
      !o.unit.startsWith('core/') &&
      !o.unit.startsWith('plugins/') &&
      !o.unit.startsWith('packages/') &&
      o.unit !== 'migrations' &&
      units.get(o.unit)!.bytes >= 20 * 1024,
  );
  alone = packages.map((p) => runChild([p])[1]!);
  header('npm package, imported alone');
  for (const a of [...alone].sort((x, y) => y.anonKb - x.anonKb).slice(0, TOP)) row(a);
}
record('module-cost', { idle_kb: idleKb, modules: loaded.length, booted_lazy: bootedLazy, marginal: costs, alone });
