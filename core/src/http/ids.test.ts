import t from 'tap';
import { newId } from './ids.ts';

const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

t.test('ids are UUIDv7 carrying the current time', async (t) => {
  const before = Date.now();
  const id = newId();
  const after = Date.now();
  t.match(id, V7);
  const ms = parseInt(id.slice(0, 8) + id.slice(9, 13), 16);
  t.ok(ms >= before && ms <= after + 1, `timestamp ${ms} within [${before}, ${after}]`);
});

t.test('ids made one after another are unique and strictly increasing, within a millisecond too', async (t) => {
  const ids = Array.from({ length: 200_000 }, () => newId());
  let bad = 0;
  for (let i = 1; i < ids.length; i++) if (!(ids[i - 1]! < ids[i]!)) bad++;
  t.equal(bad, 0, 'each id sorts after the previous one');
  t.equal(new Set(ids).size, ids.length, 'no repeats');
  t.equal(ids.filter((x) => !V7.test(x)).length, 0, 'all well formed');
  const perMs = new Map<string, number>();
  for (const id of ids) perMs.set(id.slice(0, 13), (perMs.get(id.slice(0, 13)) ?? 0) + 1);
  t.ok(Math.max(...perMs.values()) > 1, 'several ids shared a millisecond');
});

t.test('the random part differs between ids of one millisecond', async (t) => {
  const a = newId();
  const b = newId();
  t.not(a.slice(-10), b.slice(-10));
});
