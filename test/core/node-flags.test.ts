import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import t, { type Test } from 'tap';
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

/**
 * Runs a probe that keeps a sliding window of objects alive long enough to be promoted (as events in flight), so that
 * the old space fills with garbage and V8 runs full collections, under `flags`. After each one V8's heap controller
 * lets the old space grow to a factor times what survived (plus a minimum step); `--trace-gc-verbose` prints it. The
 * old space's peak within one short run is not compared: when the collections fall depends on the machine's load,
 * and CI once saw both peak alike.
 */
function oldSpaceGrowth(t: Test, flags: readonly string[]): { limit: number; factors: number[] } {
  const probe = `const win = new Array(60000);
    for (let i = 0; i < 1.2e6; i++) win[i % 60000] = { i, s: 'payload-' + i, a: [i, i + 1, i + 2] };
    process.stderr.write('heap limit ' + require('node:v8').getHeapStatistics().heap_size_limit);`;
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
  return { limit, factors };
}

t.test('the old generation limit takes effect', async (t) => {
  const mb = flagValue('max-old-space-size');
  t.ok(mb >= 512, `a limit of at least 512 MB is set (${mb})`);
  const limited = oldSpaceGrowth(t, SERVICE_NODE_FLAGS).limit;
  // The same flags but this one: what it alone changes.
  const unlimited = oldSpaceGrowth(
    t,
    SERVICE_NODE_FLAGS.filter((f) => !f.startsWith('--max-old-space-size=')),
  ).limit;
  t.ok(limited < (mb + 256) * 1024 * 1024, `heap limit ${Math.round(limited / 1048576)} MB follows the flag`);
  t.ok(unlimited > limited, `without the flag the limit is larger (${Math.round(unlimited / 1048576)} MB)`);
});

t.test('the old space grows to twice what survived each full collection, whatever the limit', async (t) => {
  const percent = flagValue('heap-growing-percent');
  t.equal(percent, 100, 'the growing factor is set to 2');
  const set = oldSpaceGrowth(t, SERVICE_NODE_FLAGS).factors;
  t.ok(
    set.every((f) => f === 2),
    `with the service's flags the old space grows to 2× after every full collection (${set.join(', ')})`,
  );
  // Without it V8 picks the factor from the heap's limit: about 1.6 at 1 GB (which lets a full collection fall while
  // many assistant replies open at once), 4 at 2 GB or more (a burst of webhooks 50–100 MB higher).
  const byLimit = oldSpaceGrowth(
    t,
    SERVICE_NODE_FLAGS.filter((f) => !f.startsWith('--heap-growing-percent=')),
  ).factors;
  t.ok(Math.max(...byLimit) < 2, `without it, at a 1 GB limit, at most ${Math.max(...byLimit)}×`);
  const byDefault = oldSpaceGrowth(t, []).factors;
  t.ok(Math.max(...byDefault) >= 3, `with none of the flags up to ${Math.max(...byDefault)}×`);
});
