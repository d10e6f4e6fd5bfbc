/** The live bus without a service: delivery to the owner's streams only, replay after an id, reset, the ring bound. */
import t from 'tap';
import { type Delivered, KEEP_MS, LiveBus, RING, type Subscriber } from './bus.ts';

const stream = (userId: string) => {
  const got: Delivered[] = [];
  const s: Subscriber & { got: Delivered[] } = { userId, got, send: (d) => got.push(d) };
  return s;
};
const ev = (id: string) => ({ kind: 'event' as const, id, provider_id: null, dispatch_status: 'pending' });

t.test("a hint goes to its owner's streams only, each with a new id", async (t) => {
  const bus = new LiveBus();
  const a1 = stream('a');
  const a2 = stream('a');
  const b = stream('b');
  for (const s of [a1, a2, b]) t.same(bus.subscribe(s), { replay: [] });
  bus.publish('a', ev('1'));
  bus.publish('b', ev('2'));
  bus.publish('a', ev('3'));
  t.same(
    a1.got.map((d) => (d.hint as { id: string }).id),
    ['1', '3'],
  );
  t.same(a2.got, a1.got, 'every stream of the user');
  t.same(
    b.got.map((d) => (d.hint as { id: string }).id),
    ['2'],
  );
  t.equal(new Set([...a1.got, ...b.got].map((d) => d.id)).size, 3, 'ids are unique');
  t.equal(bus.currentId(), `${bus.epoch}-3`);
  t.equal(bus.count('a'), 2);
  bus.unsubscribe(a2);
  t.equal(bus.count('a'), 1);
  bus.publish('a', ev('4'));
  t.equal(a2.got.length, 2, 'a closed stream gets nothing more');
  t.equal(bus.count('nobody'), 0);
});

t.test('a stream that comes back gets what it missed, or a reset', async (t) => {
  const bus = new LiveBus();
  const first = stream('a');
  bus.subscribe(first);
  bus.subscribe(stream('b'));
  bus.publish('a', ev('1'));
  const seen = first.got.at(-1)!.id;
  bus.unsubscribe(first);
  bus.publish('a', ev('2'));
  bus.publish('b', ev('x'));
  bus.publish('a', ev('3'));
  const back = bus.subscribe(stream('a'), seen);
  t.ok('replay' in back);
  t.same(
    'replay' in back ? back.replay.map((d) => (d.hint as { id: string }).id) : [],
    ['2', '3'],
    "the user's hints after the id, not another user's",
  );
  t.same(bus.subscribe(stream('a'), bus.currentId()), { replay: [] }, 'up to date: nothing to replay');
  t.same(bus.subscribe(stream('a'), `ffff${bus.epoch}-1`), { reset: true }, 'an id of another epoch');
  t.same(bus.subscribe(stream('a'), 'nonsense'), { reset: true }, 'an id that is not one');
  t.same(bus.subscribe(stream('a'), `${bus.epoch}-999`), { reset: true }, 'an id from the future');
  t.same(bus.subscribe(stream('c'), `${bus.epoch}-1`), { reset: true }, 'a user with no ring: nothing was recorded');
  t.same(bus.subscribe(stream('d'), bus.currentId()), { replay: [] }, 'unless nothing happened since');
});

t.test('the ring holds the last RING hints; older ids get a reset', async (t) => {
  const bus = new LiveBus();
  const s = stream('a');
  bus.subscribe(s);
  for (let i = 0; i < RING + 10; i++) bus.publish('a', ev(String(i)));
  const ids = s.got.map((d) => d.id);
  t.same(bus.subscribe(stream('a'), ids[8]), { reset: true }, 'the hint after it was dropped');
  const kept = bus.subscribe(stream('a'), ids[9]);
  t.equal('replay' in kept ? kept.replay.length : -1, RING, 'the oldest hint held is right after it');
});

t.test("a user's ring is forgotten KEEP_MS after the last stream closed", async (t) => {
  let now = 0;
  const bus = new LiveBus(() => now);
  const s = stream('a');
  bus.subscribe(s);
  bus.publish('a', ev('1'));
  const seen = s.got[0]!.id;
  bus.unsubscribe(s);
  bus.publish('a', ev('2'));
  now = KEEP_MS;
  bus.sweep();
  const kept = bus.subscribe(stream('a'), seen);
  t.equal('replay' in kept ? kept.replay.length : -1, 1, 'kept until KEEP_MS');
  const other = stream('b');
  bus.subscribe(other);
  bus.publish('b', ev('3'));
  bus.unsubscribe(other);
  bus.publish('b', ev('4'));
  now += KEEP_MS + 1;
  bus.sweep();
  t.same(bus.subscribe(stream('b'), other.got[0]!.id), { reset: true }, 'forgotten after');
  t.equal(bus.count('a'), 1, 'a user with an open stream keeps the ring whatever the time');
});
