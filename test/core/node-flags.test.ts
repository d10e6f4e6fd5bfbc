import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { SERVICE_ENV, SERVICE_NODE_FLAGS, serviceEnvPrefix } from '../../scripts/node-flags.ts';

const root = new URL('../..', import.meta.url).pathname;
/** The number a `--name=<n>` flag of SERVICE_NODE_FLAGS sets (NaN when it is not set). */
const flagValue = (name: string): number =>
  Number(new RegExp(`^--${name}=(\\d+)$`).exec(SERVICE_NODE_FLAGS.find((f) => f.startsWith(`--${name}=`)) ?? '')?.[1]);

const pkg = JSON.parse(fs.readFileSync(`${root}package.json`, 'utf8')) as { scripts: Record<string, string> };

t.test('npm start and the image run the service with the flags and environment of scripts/node-flags.ts', async (t) => {
  t.equal(
    pkg.scripts.start,
    [serviceEnvPrefix(), 'node', ...SERVICE_NODE_FLAGS, 'core/dist/main.js'].join(' '),
    'package.json start',
  );
  t.equal(
    pkg.scripts['start:source'],
    [serviceEnvPrefix(), 'node', ...SERVICE_NODE_FLAGS, 'core/src/main.ts'].join(' '),
    'package.json start:source',
  );
  const dockerfile = fs.readFileSync(`${root}Dockerfile`, 'utf8');
  const cmd = /^CMD (\[.*\])$/m.exec(dockerfile)?.[1];
  t.ok(cmd, 'the Dockerfile has an exec-form CMD');
  t.same(JSON.parse(cmd!), ['node', ...SERVICE_NODE_FLAGS, 'core/dist/main.js'], 'Dockerfile CMD');
  // The final stage's ENV (its lines joined where they continue).
  const env = dockerfile
    .split(/^FROM /m)
    .at(-1)!
    .replace(/\\\n\s*/g, ' ');
  for (const [k, v] of Object.entries(SERVICE_ENV))
    t.match(env, new RegExp(`^ENV .*\\b${k}=${v}(\\s|$)`, 'm'), `the image sets ${k}=${v}`);
});

/**
 * The malloc arenas of a process whose worker threads allocate at once (ArrayBuffer backing stores come from malloc):
 * glibc's arenas other than the main one are mappings of 64 MiB at addresses aligned to 64 MiB, the part in use
 * readable and writable, the rest reserved without access. The threads allocate a few MB each: an arena that outgrew
 * its 64 MiB would add a second such mapping and be counted twice.
 */
const ARENA_PROBE = `const { Worker } = require('node:worker_threads');
const fs = require('node:fs');
const src = "const keep = []; for (let i = 0; i < 2000; i++) { keep.push(new ArrayBuffer(1500 + (i % 7) * 100));" +
  " if (keep.length > 500) keep.shift(); } require('node:worker_threads').parentPort.postMessage(1);";
const workers = Array.from({ length: 6 }, () => new Worker(src, { eval: true }));
let done = 0;
for (const w of workers) w.once('message', () => {
  if (++done < workers.length) return;
  const ARENA = 64n << 20n;
  const maps = fs.readFileSync('/proc/self/maps', 'utf8').trim().split('\\n').map((l) => {
    const [range, perms, , , inode, file] = l.split(/\\s+/);
    const [a, b] = range.split('-').map((h) => BigInt('0x' + h));
    return { a, b, perms, anon: inode === '0' && !file };
  });
  let arenas = 0;
  for (let i = 0; i < maps.length; i++) {
    const m = maps[i];
    if (!m.anon || m.perms !== 'rw-p' || m.a % ARENA !== 0n) continue;
    let end = m.b;
    for (let j = i + 1; j < maps.length && maps[j].anon && maps[j].perms === '---p' && maps[j].a === end; j++)
      end = maps[j].b;
    if (end - m.a === ARENA) arenas++;
  }
  process.stdout.write(String(arenas));
  for (const x of workers) x.terminate();
});`;

t.test("npm start's environment caps malloc's arenas, and an operator's own value wins", async (t) => {
  const probe = `${fs.mkdtempSync(`${os.tmpdir()}/herald-arenas-`)}/probe.cjs`;
  fs.writeFileSync(probe, ARENA_PROBE);
  t.teardown(() => fs.rmSync(path.dirname(probe), { recursive: true, force: true }));
  // The start script's command with the probe in place of the service, through the shell npm runs scripts with.
  const command = pkg.scripts.start!.replace(/^(.*)\bnode .*$/, `$1"${process.execPath}" "${probe}"`);
  const arenas = (env: Record<string, string>) => {
    const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('MALLOC_')));
    const r = spawnSync('/bin/sh', ['-c', command], { env: { ...clean, ...env }, encoding: 'utf8' });
    t.equal(r.status, 0, r.stderr);
    return Number(r.stdout);
  };
  const capped = arenas({});
  t.ok(capped <= 1, `with npm start's environment at most one arena besides the main one (${capped})`);
  const own = arenas({ MALLOC_ARENA_MAX: '8' });
  t.ok(own > 2, `the operator's MALLOC_ARENA_MAX=8 is kept: ${own} arenas`);
  const bare = spawnSync(process.execPath, [probe], {
    env: Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('MALLOC_'))),
    encoding: 'utf8',
  });
  t.ok(Number(bare.stdout) > capped, `without it the threads take more arenas (${bare.stdout})`);
});

t.test('the young generation flag takes effect on this Node', async (t) => {
  const semi = flagValue('max-semi-space-size');
  t.ok(semi > 0, 'a semi-space size is set');
  // Allocates enough short-lived objects to grow the young generation to its limit, then reports the new space's size.
  const probe =
    `const keep = new Array(40000); for (let i = 0; i < 2e6; i++) { const o = { a: i, b: 'x' + i }; if (i % 8 === ` +
    `0) keep[(i / 8) % 40000] = o; }
    process.stdout.write(String(require('node:v8').getHeapSpaceStatistics().find((s) => s.space_name === ` +
    `'new_space').space_size));`;
  const run = (flags: readonly string[]) => {
    const r = spawnSync(process.execPath, [...flags, '-e', probe], { encoding: 'utf8' });
    t.equal(r.status, 0, r.stderr);
    return Number(r.stdout);
  };
  const limited = run(SERVICE_NODE_FLAGS);
  const unlimited = run([]);
  t.ok(limited <= 2 * semi * 1024 * 1024, `new space ${limited} bytes within 2 × ${semi} MB`);
  t.ok(unlimited > limited, `without the flag the young generation grows further (${unlimited} bytes)`);
});

t.test(
  'the old generation limit takes effect and lets the old space grow less after each full collection',
  async (t) => {
    const mb = flagValue('max-old-space-size');
    t.ok(mb >= 512, `a limit of at least 512 MB is set (${mb})`);
    // Keeps a sliding window of objects alive long enough to be promoted (as events in flight), so that
    // the old space fills with garbage and V8 runs full collections. After each one V8's heap controller
    // lets the old space grow to a factor times what survived (plus a minimum step), and
    // `--trace-gc-verbose` prints the factor. The factor is capped by the heap's limit (4 at 2 GB or more,
    // 1.3–2 below); that cap is what the flag is for. The old space's peak within one short run is not
    // compared: when the collections fall depends on the machine's load, and CI once saw both peak alike.
    const probe = `const win = new Array(60000);
    for (let i = 0; i < 1.2e6; i++) win[i % 60000] = { i, s: 'payload-' + i, a: [i, i + 1, i + 2] };
    process.stderr.write('heap limit ' + require('node:v8').getHeapStatistics().heap_size_limit);`;
    const run = (flags: readonly string[]) => {
      const r = spawnSync(process.execPath, [...flags, '--trace-gc-verbose', '-e', probe], {
        encoding: 'utf8',
        maxBuffer: 16 << 20,
      });
      t.equal(r.status, 0, r.stderr);
      const limit = Number(/heap limit (\d+)/.exec(r.stderr)?.[1]);
      // "[HeapController] factor 4.0 based on mu=0.970, …": the old generation's controller, once per full collection.
      const factors = [...r.stdout.matchAll(/\[HeapController\] factor (\d+(?:\.\d+)?) based on/g)].map((m) =>
        Number(m[1]),
      );
      t.ok(factors.length > 0, 'V8 reports at least one full collection');
      return { limit, factor: Math.max(...factors) };
    };
    const limited = run(SERVICE_NODE_FLAGS);
    // The same flags but this one: what it alone changes.
    const unlimited = run(SERVICE_NODE_FLAGS.filter((f) => !f.startsWith('--max-old-space-size=')));
    t.ok(
      limited.limit < (mb + 256) * 1024 * 1024,
      `heap limit ${Math.round(limited.limit / 1048576)} MB follows the flag`,
    );
    t.ok(
      unlimited.limit > limited.limit,
      `without the flag the limit is larger (${Math.round(unlimited.limit / 1048576)} MB)`,
    );
    t.ok(limited.factor <= 2, `with the flag the old space grows to at most ${limited.factor}× what survived`);
    t.ok(unlimited.factor >= 3, `without it to ${unlimited.factor}×, which the flag prevents`);
  },
);
