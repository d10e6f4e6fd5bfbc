import { performance } from 'node:perf_hooks';
import t from 'tap';
import { GateFull, type GateOptions, gate, loopLoad, TurnGate } from './turns.ts';

const nextTurn = () => new Promise((r) => setImmediate(r));
/** Lets an idle gate forget the step it started at once in this turn. */
const settle = async () => {
  await nextTurn();
  await nextTurn();
};
/** Runs microtasks only (an admitted step's continuation), no new turn. */
const microtasks = async () => {
  for (let i = 0; i < 10; i++) await Promise.resolve();
};

/** Enters `n` steps of `stage`; `order` gets each one's label when it starts. */
function burst(g: TurnGate, labels: string[], stage: 'open' | 'setup' | 'save', order: string[]): Promise<void>[] {
  return labels.map((label) => {
    const w = g.enter(stage);
    if (!w) {
      order.push(label);
      return Promise.resolve();
    }
    return w.then(() => {
      order.push(label);
    });
  });
}

t.test('an idle gate admits at once', async (t) => {
  const g = new TurnGate({ budgetMs: 1, maxPerTurn: 4, maxWaiting: 10 });
  t.equal(g.enter('open'), undefined);
  await settle();
  t.equal(g.enter('setup'), undefined);
  await settle();
  t.equal(gate.enter('open'), undefined, 'the service-wide gate too');
});

t.test('a burst starts one step at once, then a few a turn, in arrival order', async (t) => {
  const g = new TurnGate({ budgetMs: 1000, maxPerTurn: 3, maxWaiting: 100 });
  await settle();
  const order: string[] = [];
  const all = burst(g, ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'], 'open', order);
  t.same(order, ['a'], 'only the first starts at once');
  await microtasks();
  t.same(order, ['a'], 'nobody else starts in the same turn');
  t.equal(g.waiting, 7);
  const perTurn: number[] = [];
  while (order.length < 8) {
    const before = order.length;
    await nextTurn();
    await microtasks();
    perTurn.push(order.length - before);
  }
  await Promise.all(all);
  t.same(order, ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'], 'in arrival order');
  t.ok(
    perTurn.every((n) => n <= 3),
    `at most maxPerTurn a turn (${perTurn.join(', ')})`,
  );
  t.equal(g.waiting, 0);
});

/**
 * Enters each item at the gate's opening stage; its step, when its turn comes, records the item and advances the
 * test's clock (the time the step "takes").
 */
function enterTimed<T>(g: TurnGate, items: T[], done: T[], advance: () => void): Promise<void>[] {
  return items.map((item) => {
    const w = g.enter('open');
    const step = () => {
      done.push(item);
      advance();
    };
    if (!w) {
      step();
      return Promise.resolve();
    }
    return w.then(step);
  });
}

t.test('steps start in a turn only while those started in it stay within the time budget', async (t) => {
  let clock = 0;
  const g = new TurnGate({ budgetMs: 1, maxPerTurn: 8, maxWaiting: 100, now: () => clock });
  await settle();
  const order: string[] = [];
  // Each step "takes" 0.6 ms of the clock: two fit in a 1 ms budget (the second starts at 0.6 ms).
  const labels = ['a', 'b', 'c', 'd', 'e', 'f', 'g'];
  const all = enterTimed(g, labels, order, () => {
    clock += 0.6;
  });
  const perTurn: number[] = [];
  while (order.length < labels.length) {
    const before = order.length;
    await nextTurn();
    await microtasks();
    perTurn.push(order.length - before);
  }
  await Promise.all(all);
  t.same(order, labels);
  t.same(perTurn, [2, 2, 2], 'two steps of 0.6 ms a turn under a 1 ms budget');
});

t.test('a loop busy with other work gives the steps a share of it, within the budget bounds', async (t) => {
  let clock = 0;
  const g = new TurnGate({ budgetMs: 1, maxBudgetMs: 4, share: 0.5, maxPerTurn: 8, maxWaiting: 100, now: () => clock });
  await settle();
  const order: number[] = [];
  const n = 40;
  const all = enterTimed(
    g,
    Array.from({ length: n }, (_, i) => i),
    order,
    () => {
      clock += 0.6;
    },
  );
  const perTurn: number[] = [];
  for (const other of [6, 6, 20, 0]) {
    // What the rest of the loop took between two of the gate's turns.
    clock += other;
    const before = order.length;
    await nextTurn();
    await microtasks();
    perTurn.push(order.length - before);
  }
  // 6 ms of other work: a 3 ms budget, steps start at 0, 0.6 … 2.4 ms (the first turn: 6.6 ms with the step started
  // at once, 3.3 ms, one more); 20 ms: the 4 ms cap; none: the 1 ms floor.
  t.same(perTurn, [6, 5, 7, 2]);
  while (order.length < n) await nextTurn();
  await Promise.all(all);
  t.same(
    order,
    Array.from({ length: n }, (_, i) => i),
  );
});

t.test('a later stage goes first; within a stage, arrival order', async (t) => {
  const g = new TurnGate({ budgetMs: 1000, maxPerTurn: 1, maxWaiting: 100 });
  await settle();
  const order: string[] = [];
  const all = [
    ...burst(g, ['open1', 'open2', 'open3'], 'open', order),
    ...burst(g, ['setup1', 'setup2'], 'setup', order),
    ...burst(g, ['save1'], 'save', order),
  ];
  while (g.waiting > 0) await nextTurn();
  await Promise.all(all);
  t.same(order, ['open1', 'save1', 'setup1', 'setup2', 'open2', 'open3']);
});

t.test('a step that fails does not hold up the next', async (t) => {
  const g = new TurnGate({ budgetMs: 1000, maxPerTurn: 2, maxWaiting: 100 });
  await settle();
  const results = await Promise.allSettled(
    ['a', 'b', 'c', 'd'].map(async (label) => {
      await g.enter('open');
      if (label === 'b') throw new Error('b failed');
      return label;
    }),
  );
  t.same(
    results.map((r) => (r.status === 'fulfilled' ? r.value : (r.reason as Error).message)),
    ['a', 'b failed', 'c', 'd'],
  );
  t.equal(g.waiting, 0);
});

t.test('a waiting step whose signal aborts leaves the queue at once, and the rest go on', async (t) => {
  const g = new TurnGate({ budgetMs: 1000, maxPerTurn: 1, maxWaiting: 100 });
  await settle();
  const order: string[] = [];
  t.equal(g.enter('open'), undefined);
  const left = new AbortController();
  const waiting = g.enter('open', left.signal)!;
  const after = burst(g, ['c', 'd'], 'open', order);
  t.equal(g.waiting, 3);
  left.abort(new Error('client left'));
  await t.rejects(waiting, { message: 'client left' }, 'it rejects with the reason');
  t.equal(g.waiting, 2, 'it no longer counts as waiting');
  await nextTurn();
  await microtasks();
  t.same(order, ['c'], 'the next in line takes its turn');
  await Promise.all(after);
  t.same(order, ['c', 'd']);
  // An abort after the step started changes nothing.
  const late = new AbortController();
  const w = g.enter('open', late.signal);
  await w;
  late.abort();
  t.equal(g.waiting, 0);
  // A signal aborted before entering, when it would have to wait, is refused at once.
  await settle();
  t.equal(g.enter('open'), undefined);
  const gone = new AbortController();
  gone.abort(new Error('already left'));
  await t.rejects(g.enter('open', gone.signal)!, { message: 'already left' });
  t.equal(g.waiting, 0);
});

t.test('the queue of new openings is bounded; the later stages are not', async (t) => {
  const g = new TurnGate({ budgetMs: 1000, maxPerTurn: 1, maxWaiting: 2 });
  await settle();
  t.equal(g.enter('open'), undefined);
  const waits = [g.enter('open'), g.enter('open')];
  t.throws(() => g.enter('open'), GateFull, 'a third new opening is refused');
  const more = [g.enter('setup'), g.enter('setup'), g.enter('save')];
  t.equal(g.waiting, 5, 'a stored question always gets its turn');
  await Promise.all([...waits, ...more]);
  t.equal(g.waiting, 0);
  await settle();
  t.equal(g.enter('open'), undefined, 'room again');
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** A gate whose time budget never limits a turn, holding new openings for the load as `hold` says. */
const holdingGate = (hold: Pick<GateOptions, 'maxLoad' | 'maxHoldMs' | 'load' | 'now'>) =>
  new TurnGate({ budgetMs: 1000, maxPerTurn: 8, maxWaiting: 100, ...hold });

t.test('new openings wait while the loop is busier than maxLoad, one at least every maxHoldMs', async (t) => {
  let clock = 0;
  let load = 0.9;
  const g = holdingGate({ maxLoad: 0.65, maxHoldMs: 100, load: () => load, now: () => clock });
  await settle();
  const order: string[] = [];
  const opens = burst(g, ['a', 'b', 'c', 'd'], 'open', order);
  t.same(order, ['a'], 'the first opening since long ago starts at once, busy or not');
  await sleep(20);
  t.same(order, ['a'], 'a busy loop holds the next');
  const stored: string[] = [];
  const later = [...burst(g, ['s1'], 'setup', stored), ...burst(g, ['v1'], 'save', stored)];
  await Promise.all(later);
  t.same(stored, ['v1', 's1'], 'the later stages of openings already started do not wait for the load');
  clock += 99;
  await sleep(10);
  t.same(order, ['a'], 'still held 99 ms after the last one started');
  clock += 1;
  await sleep(10);
  t.same(order, ['a', 'b'], 'one starts once maxHoldMs has passed since the last');
  await sleep(10);
  t.same(order, ['a', 'b'], 'and the hold starts again from it');
  load = 0.6;
  await Promise.all(opens);
  t.same(order, ['a', 'b', 'c', 'd'], 'the rest start once the load is under maxLoad, in arrival order');
  await settle();
  load = 0.9;
  clock += 50;
  t.not(g.enter('open'), undefined, 'an idle gate holds a new opening too while the loop is busy');
  load = 0;
  await settle();
});

t.test('a gate holding openings for the load waits on a timer, so that the loop may idle', async (t) => {
  let reads = 0;
  const g = holdingGate({
    maxLoad: 0.5,
    maxHoldMs: 60_000,
    load: () => {
      reads++;
      return 1;
    },
  });
  await settle();
  t.equal(g.enter('open'), undefined);
  const left = new AbortController();
  const held = g.enter('open', left.signal)!.catch(() => 'left');
  let turns = 0;
  const until = performance.now() + 50;
  while (performance.now() < until) {
    await nextTurn();
    turns++;
  }
  // Polling every turn would read the load in each of the `turns` turns (eight times each).
  t.ok(reads < turns, `the load read ${reads} times in ${turns} turns`);
  t.ok(reads <= 8 * 60, `at most about once a millisecond's turn (${reads} reads in 50 ms)`);
  left.abort();
  t.equal(await held, 'left');
  t.equal(g.waiting, 0);
});

t.test("loopLoad follows the loop's busy share", async (t) => {
  const load = loopLoad(50);
  load();
  const end = performance.now() + 100;
  while (performance.now() < end);
  const busy = load();
  t.ok(busy > 0.8, `after 100 ms of work: ${busy.toFixed(2)}`);
  // Idling is the loop's, not the machine's: on a loaded machine (a CI run's start) another 200 ms window is slept
  // while the loop's own measure of the last one says it was not idle (at most ten).
  let idle = 0;
  for (let i = 0; i < 10; i++) {
    const before = performance.eventLoopUtilization();
    await sleep(200);
    idle = load();
    if (performance.eventLoopUtilization(performance.eventLoopUtilization(), before).utilization < 0.1) break;
  }
  t.ok(idle < 0.2, `after 200 ms of idling: ${idle.toFixed(2)}`);
});
