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
