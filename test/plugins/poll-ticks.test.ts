/**
 * Scheduled polls are grouped into ticks (a sixtieth of the interval, at most a second): every poll due at one tick
 * boundary starts from one timer, in one turn of the event loop, so many instances wake an idle process once per tick
 * rather than once per poll (issue 27, idle CPU per poll). A first poll is not before its offset; a cancelled one
 * leaves no timer. Runs on SQLite and PostgreSQL (the host test).
 */

import crypto from 'node:crypto';
import t from 'tap';
import { defineProvider, Type } from '../../core/src/plugin-api/index.ts';
import { firstPollDelayMs } from '../../core/src/plugins/host.ts';
import { wrapDefinition } from '../../core/src/plugins/loader.ts';
import { PollTicks, pollTickMs, tickDelayMs } from '../../core/src/plugins/poll-ticks.ts';
import { startService } from '../helpers/service.ts';

t.test('the tick of an interval and the delay to a boundary', async (t) => {
  t.equal(pollTickMs(60_000), 1000, 'a minute: a second');
  t.equal(pollTickMs(3_600_000), 1000, 'an hour: still a second');
  t.equal(pollTickMs(3000), 50, 'three seconds: 50 ms');
  t.equal(pollTickMs(10), 1, 'never under a millisecond');
  t.equal(tickDelayMs(10_250, 60_000, 1000), 59_750, 'the nearest boundary (down)');
  t.equal(tickDelayMs(10_700, 60_000, 1000), 60_300, 'the nearest boundary (up)');
  t.equal(tickDelayMs(10_250, 60_000, 1000, true), 60_750, 'not before: the next boundary');
  t.equal(tickDelayMs(10_000, 60_000, 1000, true), 60_000, 'a due time on a boundary stays');
  t.equal(tickDelayMs(10_250, 100, 1000), 750, 'never now or in the past');
  const wrong: string[] = [];
  for (let i = 0; i < 1000; i++) {
    const now = Math.random() * 1e6;
    const delay = 1000 + Math.random() * 120_000;
    const d = tickDelayMs(now, delay, 1000);
    const at = now + d;
    if (!(d > 0 && Math.abs(d - delay) <= 500 + 1e-6 && Math.abs(at - Math.round(at / 1000) * 1000) < 1e-6))
      wrong.push(`nearest: ${d} for ${delay} at ${now}`);
    const n = tickDelayMs(now, delay, 1000, true);
    if (!(n >= delay - 1e-6 && n < delay + 1000)) wrong.push(`not before: ${n} for ${delay} at ${now}`);
  }
  t.same(wrong, [], 'a boundary within half a tick of the due time, or the first at or after it');
});

t.test('polls due at one boundary run from one timer, in one turn of the event loop', async (t) => {
  let clock = 0;
  const ticks = new PollTicks(() => clock);
  // One turn of the event loop to the next: a counter moved by setImmediate.
  let turn = 0;
  let spinning = true;
  const spin = () => {
    turn++;
    if (spinning) setImmediate(spin);
  };
  spin();
  t.teardown(() => {
    spinning = false;
  });
  const ran: { name: string; turn: number }[] = [];
  const runner = (name: string) => () => ran.push({ name, turn });
  const done = new Promise<void>((resolve) => setTimeout(resolve, 250));
  ticks.schedule(40, 50, runner('a'));
  ticks.schedule(60, 50, runner('b'));
  ticks.schedule(74, 50, runner('c'));
  ticks.schedule(30, 50, runner('not-before'), true);
  const cancelled = ticks.schedule(160, 50, runner('cancelled'));
  ticks.schedule(140, 50, runner('later'));
  t.equal(ticks.pending, 2, 'two timers for six polls: at 50 ms (four), at 150 ms (two)');
  cancelled();
  t.equal(ticks.pending, 2, 'cancelling one of two in a tick keeps its timer');
  const alone = ticks.schedule(500, 50, runner('alone'));
  t.equal(ticks.pending, 3, 'one more in a tick of its own');
  alone();
  t.equal(ticks.pending, 2, 'cancelling the only one in a tick clears its timer');
  clock = 1; // the clock read later does not move the boundaries already chosen
  await done;
  t.same(
    ran.map((r) => r.name),
    ['a', 'b', 'c', 'not-before', 'later'],
    'each ran once, none cancelled',
  );
  const first = ran.filter((r) => r.name !== 'later');
  t.equal(new Set(first.map((r) => r.turn)).size, 1, 'the four of the first tick ran in one turn');
  t.equal(ticks.pending, 0, 'no timer left');

  const at = performance.now();
  let ranAt = 0;
  await new Promise<void>((resolve) =>
    new PollTicks().schedule(0, 1000, () => {
      ranAt = performance.now();
      resolve();
    }),
  );
  t.ok(ranAt - at < 500, 'a delay of 0 runs at once, not at a boundary');
});

t.test('instances whose polls fall due in one tick are polled in one turn of the event loop', async (t) => {
  const s = await startService();
  t.teardown(() => s.stop());
  const core = s.service.core;
  // A minute: ticks of a second, so instances that start up to 600 ms apart (a loaded machine) still meet one tick.
  const interval = 60_000;
  const tick = pollTickMs(interval);
  // Ids whose first polls (at their offsets from their own starts) fall in one tick: three due early in the same tick
  // if they started now (they start a little later, one after another: up to 0.6 of a tick still keeps them in it),
  // within the first seconds. Ticks are multiples of the tick on the clock (poll-ticks.ts), so the choice is made
  // against that clock, not against offsets alone.
  const base = performance.now();
  const byTick = new Map<number, string[]>();
  let group: string[] | undefined;
  while (!group) {
    const id = crypto.randomUUID();
    const offset = firstPollDelayMs(id, interval);
    const due = base + offset;
    const at = Math.ceil(due / tick);
    if (offset < 2 * tick || offset > 6 * tick || at * tick - due < 0.6 * tick) continue;
    const ids = [...(byTick.get(at) ?? []), id];
    byTick.set(at, ids);
    if (ids.length === 3) group = ids;
  }
  const polled = new Map<string, number>();
  let turn = 0;
  let spinning = true;
  const spin = () => {
    turn++;
    if (spinning) setImmediate(spin);
  };
  spin();
  t.teardown(() => {
    spinning = false;
  });
  const poller = defineProvider({
    manifest: {
      id: 'tick_poller',
      kind: 'provider',
      apiVersion: 1,
      displayName: 'Tick poller',
      ingest: 'poll',
      pollIntervalSeconds: interval / 1000,
      configSchema: Type.Object({}),
      events: {},
    },
    create: () => ({ async poll() {} }),
  });
  // The turn each scheduled poll starts in (its plugin's poll() comes after the trackers are read: on PostgreSQL, a
  // round trip later).
  const host = core.plugins;
  const pollOnce = host.pollOnce.bind(host);
  host.pollOnce = (entry) => {
    const id = typeof entry === 'string' ? entry : entry.row.id;
    if (!polled.has(id)) polled.set(id, turn);
    return pollOnce(entry);
  };
  t.teardown(() => {
    host.pollOnce = pollOnce;
  });
  core.plugins.add(wrapDefinition('tick-poller-plugin', poller));
  const now = new Date().toISOString();
  for (const id of group) {
    await core.db.run(
      'INSERT INTO providers (id, user_id, kind, name, config, enabled, webhook_token, created_at, updated_at) ' +
        `VALUES (?, ?, 'tick_poller', ?, ?, ?, ?, ?, ?)`,
      [id, s.admin.id, `P ${id.slice(0, 8)}`, {}, true, crypto.randomUUID(), now, now],
    );
    await core.db.run(
      'INSERT INTO trackers (id, user_id, provider_id, name, enabled, config, created_at, updated_at) VALUES (?, ?, ' +
        `?, 'T', ?, ?, ?, ?)`,
      [crypto.randomUUID(), s.admin.id, id, true, {}, now, now],
    );
  }
  await core.plugins.startProviders();
  const end = Date.now() + 10_000;
  while (group.some((id) => !polled.has(id)) && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
  t.equal(group.filter((id) => polled.has(id)).length, 3, 'all three polled');
  t.equal(new Set(group.map((id) => polled.get(id))).size, 1, 'in one turn of the event loop');
});
