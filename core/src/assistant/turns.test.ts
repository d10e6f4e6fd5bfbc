import t from 'tap';
import { GateFull, gate, TurnGate } from './turns.ts';

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
