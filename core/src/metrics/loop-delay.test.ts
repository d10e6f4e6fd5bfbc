import { setTimeout as sleep } from 'node:timers/promises';
import t, { type Test } from 'tap';
import { LoopDelay, type LoopDelayOptions } from './loop-delay.ts';

// Short paces so that each phase takes a fraction of a second: 10 ms busy (the service's), 100 ms idle, the idle pace
// deciding every 200 ms, the busy pace held 400 ms. A machine loaded by other tests delays timers by tens of
// milliseconds, so where a test does not look at late ticks, only a stall of a second counts as one. A window is busy
// from 20 % of the time on the processor: in a test process V8's own collection steps can fill 5 % of 200 ms.
const options = { busyMs: 10, idleMs: 100, windowMs: 200, holdMs: 400, lateMs: 1_000, busyShare: 0.2 };

/** Keeps the loop busy for `ms` (a 2 ms spin every 3 ms or so); says whether the pace was seen busy meanwhile. */
async function work(loop: LoopDelay, ms: number): Promise<boolean> {
  let seen = false;
  const end = performance.now() + ms;
  while (performance.now() < end) {
    const spinEnd = performance.now() + 2;
    while (performance.now() < spinEnd) {
      /* the loop is busy */
    }
    await sleep(1);
    seen ||= loop.busy;
  }
  return seen;
}

/** Keeps the thread on the processor for `ms` of its own time, however long a loaded machine makes that last. */
function stall(ms: number): void {
  const end = process.threadCpuUsage();
  const until = end.user + end.system + ms * 1_000;
  for (;;) {
    const u = process.threadCpuUsage();
    if (u.user + u.system >= until) return;
  }
}

function block(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    /* one long stall */
  }
}

/** Holds the thread for `ms` without using the processor, as a host with no processor to spare would. */
function wait(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** A started monitor, once its pace is idle (the test process's own start may keep the loop busy at first). */
async function idleLoop(t: Test, o: LoopDelayOptions): Promise<LoopDelay> {
  const loop = new LoopDelay(o);
  t.teardown(() => loop.stop());
  loop.start();
  await sleep(300);
  for (let i = 0; i < 100 && loop.busy; i++) await sleep(50);
  return loop;
}

t.test('an idle loop is sampled at the idle pace, a working one at the busy pace, then idle again', async (t) => {
  const loop = await idleLoop(t, options);
  loop.take();
  const idleFrom = loop.ticks;
  await sleep(600);
  t.equal(loop.busy, false, 'idle');
  const idleTicks = loop.ticks - idleFrom;
  // ~6 at 100 ms; at the busy pace it would be ~60 (a loaded machine delays timers, never adds any).
  t.ok(idleTicks >= 2 && idleTicks <= 12, `idle: ${idleTicks} ticks in 600 ms`);
  t.equal(loop.take().samples, idleTicks, 'each tick is one sample');

  const before = loop.ticks;
  t.equal(await work(loop, 600), true, 'busy while the loop works');
  const busyTicks = loop.ticks - before;
  t.ok(busyTicks >= 20, `busy: ${busyTicks} ticks in 600 ms`);

  await sleep(900);
  t.equal(loop.busy, false, 'idle again once the hold is over');
});

t.test('a stall met at the idle pace is recorded and makes the pace busy at once, for the hold', async (t) => {
  // No window is decided in this test: only the late tick can make the pace busy. At a 5 % share, as the service's:
  // a loaded machine that gives the thread a quarter of a core spreads the stall's 250 ms over a second.
  const loop = await idleLoop(t, { ...options, lateMs: 100, windowMs: 60_000, busyShare: 0.05 });
  loop.take();
  t.equal(loop.busy, false);
  // Longer than the idle interval, so a tick falls due inside it.
  stall(250);
  await sleep(1);
  await sleep(1);
  t.equal(loop.busy, true, 'the late tick switched to the busy pace, before any window was decided');
  const f = loop.take();
  t.ok(f.samples >= 1, 'sampled');
  t.ok(f.max >= 0.14 && f.max < 5, `the stall's delay recorded: max ${f.max} s`);
  t.ok(f.p99 >= f.p50 && f.min <= f.mean && f.mean <= f.max, 'the figures are consistent');
  await sleep(150);
  t.equal(loop.busy, true, 'still busy within the hold');
  await sleep(500);
  t.equal(loop.busy, false, 'idle after the hold');
});

t.test('a thread kept from the processor: its late ticks are recorded, the pace stays idle', async (t) => {
  // The thread waits without working: its ticks are late and its loop's callbacks long, but it does nothing more.
  const loop = await idleLoop(t, { ...options, lateMs: 100 });
  loop.take();
  const ticks = loop.ticks;
  for (let i = 0; i < 4; i++) {
    wait(250);
    await sleep(1);
    await sleep(1);
    t.equal(loop.busy, false, `idle after wait ${i + 1}`);
  }
  const f = loop.take();
  t.ok(f.max >= 0.14 && f.max < 1, `the waits' delay recorded: max ${f.max} s`);
  // Four waits of 250 ms at the 100 ms idle pace: a tick each, and a few between; the busy pace would give ~100.
  t.ok(loop.ticks - ticks <= 12, `${loop.ticks - ticks} ticks`);
});

t.test("a late tick counts only when the thread's work since the last tick reaches the busy share", async (t) => {
  // 10 ms or more worked, but a small share of the time since the last tick: at a 25 % share, not a stall. (That a
  // stall makes the pace busy is the test above.)
  const loop = await idleLoop(t, { ...options, lateMs: 10, windowMs: 60_000, busyShare: 0.25 });
  for (let i = 0; i < 3; i++) {
    const ticks = loop.ticks;
    while (loop.ticks === ticks) await sleep(1);
    stall(15);
    wait(110);
    await sleep(1);
    await sleep(1);
    t.equal(loop.busy, false, `15 ms of work in ~125 ms, late by ~25 ms: idle (${i + 1})`);
  }
});

t.test('at the busy pace, ticks made late by a thread kept from the processor do not hold the pace', async (t) => {
  // A busy pace held for 400 ms, then 800 ms of 2 ms of work and 25 ms of waiting: the busy ticks come 10 ms late or
  // more, the thread working less than 10 ms in each, though more than 5 % of the time (as a collection or two
  // would). The pace turns idle when the hold is over. (At the idle pace, the work that adds up over its longer
  // intervals may make it busy again, rightly: it is 7 % of the time.)
  const loop = await idleLoop(t, { ...options, lateMs: 10, windowMs: 60_000, busyShare: 0.05 });
  loop.hold(performance.now());
  const holdEnds = performance.now() + 400;
  loop.take();
  let idleAfterHold = false;
  while (performance.now() < holdEnds + 400) {
    block(2);
    wait(25);
    await sleep(1);
    if (performance.now() > holdEnds + 50) idleAfterHold ||= !loop.busy;
  }
  const f = loop.take();
  t.ok(f.p50 >= 0.01, `late ticks: p50 ${f.p50} s, max ${f.max} s`);
  t.equal(idleAfterHold, true, 'idle once the hold is over');
});

t.test("at the busy pace the ticks' own cost does not keep the pace busy", async (t) => {
  // Every millisecond: the ticks alone keep the loop several per cent busy.
  const loop = await idleLoop(t, { ...options, busyMs: 1, busyShare: 0.01 });
  t.equal(await work(loop, 300), true, 'busy while the loop works');
  const ticks = loop.ticks;
  await sleep(1_000);
  // The hold's last 400 ms at 1 ms: a few hundred ticks, ~90 on a loaded machine; the idle pace gives at most 10.
  t.ok(loop.ticks - ticks >= 40, `the busy pace ticked ${loop.ticks - ticks} times`);
  t.equal(loop.busy, false, 'idle once the hold is over');
});

t.test('an empty window reports zeros; take starts a new window; stop stops the ticks', async (t) => {
  const loop = new LoopDelay(options);
  t.strictSame(
    loop.take(),
    { samples: 0, min: 0, max: 0, mean: 0, stddev: 0, p50: 0, p90: 0, p99: 0 },
    'no sample, no figure (not the empty histogram’s sentinels)',
  );
  loop.start();
  await sleep(250);
  const f = loop.take();
  t.ok(f.samples >= 1, `${f.samples} samples`);
  t.ok(f.max < 1, `ticks are late by less than a stall: max ${f.max} s`);
  t.equal(loop.take().samples, 0, 'the next window starts empty');
  loop.stop();
  const ticks = loop.ticks;
  await sleep(250);
  t.equal(loop.ticks, ticks, 'no tick after stop');
});
