import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import t from 'tap';
import { SERVICE_NODE_FLAGS } from '../../scripts/node-flags.ts';

const root = new URL('../..', import.meta.url).pathname;
/** The number a `--name=<n>` flag of SERVICE_NODE_FLAGS sets (NaN when it is not set). */
const flagValue = (name: string): number =>
  Number(new RegExp(`^--${name}=(\\d+)$`).exec(SERVICE_NODE_FLAGS.find((f) => f.startsWith(`--${name}=`)) ?? '')?.[1]);

t.test('npm start and the image run the service with the flags of scripts/node-flags.ts', async (t) => {
  const pkg = JSON.parse(fs.readFileSync(`${root}package.json`, 'utf8')) as { scripts: Record<string, string> };
  t.equal(pkg.scripts.start, ['node', ...SERVICE_NODE_FLAGS, 'core/dist/main.js'].join(' '), 'package.json start');
  const cmd = /^CMD (\[.*\])$/m.exec(fs.readFileSync(`${root}Dockerfile`, 'utf8'))?.[1];
  t.ok(cmd, 'the Dockerfile has an exec-form CMD');
  t.same(JSON.parse(cmd!), ['node', ...SERVICE_NODE_FLAGS, 'core/dist/main.js'], 'Dockerfile CMD');
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
  'the old generation limit takes effect and keeps the old space smaller under a stream of promoted garbage',
  async (t) => {
    const mb = flagValue('max-old-space-size');
    t.ok(mb >= 512, `a limit of at least 512 MB is set (${mb})`);
    // Keeps ~20 MB live while objects that survive two scavenges (a sliding window, as events in
    // flight) die later in the old generation; reports the heap limit and the largest old space seen.
    const probe =
      `const v8 = require('node:v8'); const win = new Array(60000); let peak = 0;
    for (let i = 0; i < 1.2e6; i++) { win[i % 60000] = { i, s: 'payload-' + i, a: [i, i + 1, i + 2] };
      if (i % 20000 === 0) peak = Math.max(peak, v8.getHeapSpaceStatistics().find((s) => s.space_name === ` +
      `'old_space').space_size); }
    process.stdout.write(JSON.stringify({ limit: v8.getHeapStatistics().heap_size_limit, peak }));`;
    const run = (flags: readonly string[]) => {
      const r = spawnSync(process.execPath, [...flags, '-e', probe], { encoding: 'utf8' });
      t.equal(r.status, 0, r.stderr);
      return JSON.parse(r.stdout) as { limit: number; peak: number };
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
    t.ok(
      limited.peak < unlimited.peak,
      `old space peaks at ${Math.round(limited.peak / 1048576)} MB with the limit, ` +
        `${Math.round(unlimited.peak / 1048576)} MB without it`,
    );
  },
);
