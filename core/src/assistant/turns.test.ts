import t from 'tap';
import { turn } from './turns.ts';

const nextTurn = () => new Promise((r) => setImmediate(r));

t.test('a burst is admitted a few per event-loop turn, in arrival order', async (t) => {
  await nextTurn();
  await nextTurn();
  const order: number[] = [];
  const immediate: number[] = [];
  const waits: Promise<void>[] = [];
  for (let i = 0; i < 7; i++) {
    const w = turn();
    if (w === undefined) {
      immediate.push(i);
      order.push(i);
    } else
      waits.push(
        w.then(() => {
          order.push(i);
        }),
      );
  }
  t.same(immediate, [0, 1], 'the first steps of a turn start at once');
  // Let the microtasks run: nobody else is admitted within the same turn.
  await Promise.resolve();
  await Promise.resolve();
  t.same(order, [0, 1]);
  const perTurn: number[] = [];
  let before = order.length;
  while (order.length < 7) {
    await nextTurn();
    await Promise.resolve();
    perTurn.push(order.length - before);
    before = order.length;
  }
  await Promise.all(waits);
  t.same(order, [0, 1, 2, 3, 4, 5, 6], 'in arrival order');
  t.ok(
    perTurn.every((n) => n <= 2),
    `at most two per turn (${perTurn.join(', ')})`,
  );
});

t.test('an idle service admits at once', async (t) => {
  await nextTurn();
  await nextTurn();
  t.equal(turn(), undefined);
});
