/**
 * Poll instances started together (at boot, or when a replica takes the lead) do not poll together:
 * each waits for its own offset into its interval, drawn from its id, before its first poll. One
 * started alone (created or changed) polls at once. Runs on SQLite and PostgreSQL.
 */

import crypto from 'node:crypto';
import type { Test } from 'tap';
import t from 'tap';
import { defineProvider, Type } from '../../core/src/plugin-api/index.ts';
import { firstPollDelayMs, providerRowFrom } from '../../core/src/plugins/host.ts';
import { wrapDefinition } from '../../core/src/plugins/loader.ts';
import type { ProviderDbRow } from '../../core/src/relay/definitions/provider.ts';
import { startService } from '../helpers/service.ts';

t.test('the offset of a first poll: within the interval, the same for an id, spread evenly over ids', async (t) => {
  const interval = 60_000;
  const id = crypto.randomUUID();
  t.equal(firstPollDelayMs(id, interval), firstPollDelayMs(id, interval), 'the same at every start');
  const buckets = new Array<number>(10).fill(0);
  let outside = 0;
  for (let i = 0; i < 1000; i++) {
    const d = firstPollDelayMs(crypto.randomUUID(), interval);
    if (!(Number.isInteger(d) && d >= 0 && d < interval)) outside++;
    else buckets[Math.floor(d / (interval / 10))]!++;
  }
  t.equal(outside, 0, 'every offset a whole number of milliseconds within the interval');
  t.ok(
    buckets.every((n) => n >= 50 && n <= 150),
    `each tenth of the interval holds about a tenth of 1,000 instances (${buckets.join(', ')})`,
  );
  t.equal(firstPollDelayMs('', 1000), firstPollDelayMs('', 1000));
});

t.test('instances started together poll first at their offsets; one started alone polls at once', async (t) => {
  const s = await startService();
  t.teardown(() => s.stop());
  const core = s.service.core;
  const firstPoll = new Map<string, number>();
  const poller = defineProvider({
    manifest: {
      id: 'spread_poller',
      kind: 'provider',
      apiVersion: 1,
      displayName: 'Spread poller',
      ingest: 'poll',
      pollIntervalSeconds: 3,
      configSchema: Type.Object({ poll_interval_seconds: Type.Optional(Type.Number()) }),
      events: {},
    },
    create: (ctx) => ({
      async poll() {
        if (!firstPoll.has(ctx.instanceId)) firstPoll.set(ctx.instanceId, performance.now());
      },
    }),
  });
  core.plugins.add(wrapDefinition('spread-poller-plugin', poller));
  const add = async (config: Record<string, unknown>) => {
    const id = crypto.randomUUID();
    const now = new Date().toISOString();
    await core.db.run(
      'INSERT INTO providers (id, user_id, kind, name, config, enabled, webhook_token, created_at, updated_at) ' +
        `VALUES (?, ?, 'spread_poller', ?, ?, ?, ?, ?, ?)`,
      [id, s.admin.id, `P ${id.slice(0, 8)}`, config, true, crypto.randomUUID(), now, now],
    );
    await core.db.run(
      'INSERT INTO trackers (id, user_id, provider_id, name, enabled, config, created_at, updated_at) VALUES (?, ?, ' +
        `?, 'T', ?, ?, ?, ?)`,
      [crypto.randomUUID(), s.admin.id, id, true, {}, now, now],
    );
    return id;
  };
  const ids: string[] = [];
  for (let i = 0; i < 12; i++) ids.push(await add({}));

  const started = performance.now();
  await core.plugins.startProviders();
  const end = Date.now() + 10_000;
  while (ids.some((id) => !firstPoll.has(id)) && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
  t.equal(ids.filter((id) => firstPoll.has(id)).length, ids.length, 'every instance polled within its interval');
  const delays = ids.map((id) => (firstPoll.get(id) ?? Number.NaN) - started);
  for (const [i, id] of ids.entries()) {
    const expected = firstPollDelayMs(id, 3000);
    t.ok(delays[i]! >= expected - 5, `not before its offset (${delays[i]!.toFixed(0)} ms, offset ${expected} ms)`);
  }
  const expected = ids.map((id) => firstPollDelayMs(id, 3000)).sort((a, b) => a - b);
  t.ok(expected.at(-1)! - expected[0]! >= 1000, `the offsets spread over the interval (${expected.join(', ')} ms)`);

  // Alone, with an hour's interval: it polls at once, not up to an hour later.
  const alone = await add({ poll_interval_seconds: 3600 });
  const row = await core.db.get<ProviderDbRow>('SELECT * FROM providers WHERE id = ?', [alone]);
  const t0 = performance.now();
  await core.plugins.startProvider(providerRowFrom(row!));
  const until = Date.now() + 5_000;
  while (!firstPoll.has(alone) && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
  t.ok(firstPoll.has(alone), 'a provider started alone polls at once');
  t.ok((firstPoll.get(alone) ?? Number.POSITIVE_INFINITY) - t0 < 4000, 'within moments');
});

/** A service with 40 providers of a kind whose start waits a moment, the first one's (by id) until `slow` resolves. */
async function slowStarters(t: Test) {
  const s = await startService();
  const core = s.service.core;
  const st = {
    starting: 0,
    most: 0,
    done: new Set<string>(),
    slow: Promise.withResolvers<void>(),
    slowId: '',
    stopped: new Set<string>(),
    slowStop: Promise.withResolvers<void>(),
    stopping: 0,
    mostStopping: 0,
  };
  t.teardown(() => {
    st.slowStop.resolve();
    return s.stop();
  });
  const starter = defineProvider({
    manifest: {
      id: 'slow_starter',
      kind: 'provider',
      apiVersion: 1,
      displayName: 'Slow starter',
      ingest: 'poll',
      pollIntervalSeconds: 3600,
      configSchema: Type.Object({}),
      events: {},
    },
    create: (ctx) => ({
      async start() {
        st.starting++;
        st.most = Math.max(st.most, st.starting);
        // Every start waits on its service a moment; the first one's service does not answer until told.
        await (ctx.instanceId === st.slowId ? st.slow.promise : new Promise((r) => setTimeout(r, 5)));
        st.starting--;
        st.done.add(ctx.instanceId);
      },
      async poll() {},
      async stop() {
        // The first one's stop waits on its service until told, the others a moment.
        st.stopping++;
        st.mostStopping = Math.max(st.mostStopping, st.stopping);
        await (ctx.instanceId === st.slowId ? st.slowStop.promise : new Promise((r) => setTimeout(r, 5)));
        st.stopping--;
        st.stopped.add(ctx.instanceId);
      },
    }),
  });
  core.plugins.add(wrapDefinition('slow-starter-plugin', starter));
  const now = new Date().toISOString();
  const ids = Array.from({ length: 40 }, () => crypto.randomUUID()).sort();
  st.slowId = ids[0]!;
  for (const id of ids)
    await core.db.run(
      'INSERT INTO providers (id, user_id, kind, name, config, enabled, webhook_token, created_at, updated_at) ' +
        `VALUES (?, ?, 'slow_starter', ?, ?, ?, ?, ?, ?)`,
      [id, s.admin.id, `P ${id.slice(0, 8)}`, {}, true, crypto.randomUUID(), now, now],
    );
  return { core, ids, st };
}

t.test('instances start a few at a time: one slow start holds back no other', async (t) => {
  const { core, ids, st } = await slowStarters(t);
  let ended = false;
  const all = core.plugins.startProviders().then(() => {
    ended = true;
  });
  // Each instance's status is written once its start has returned: wait for the rows, not only the starts.
  const running = async () =>
    (await core.db.all<{ id: string }>("SELECT id FROM providers WHERE kind = 'slow_starter' AND status = 'running'"))
      .length;
  const end = Date.now() + 10_000;
  while ((await running()) < ids.length - 1 && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
  t.equal(st.done.size, ids.length - 1, 'every other instance started while the first one waited on its service');
  t.equal(await running(), ids.length - 1, 'each recorded as running');
  t.notOk(st.done.has(st.slowId));
  t.notOk(ended, 'the boot waits for the slow one');
  t.ok(st.most > 1 && st.most <= 16, `a few at a time, at most 16 (${st.most})`);
  st.slow.resolve();
  await all;
  t.ok(st.done.has(st.slowId), 'the slow one started too');
});

t.test('the boot waits for a slow start only so long; the start goes on after it', async (t) => {
  const { core, ids, st } = await slowStarters(t);
  const t0 = performance.now();
  await core.plugins.startProviders({ waitMs: 500 });
  const took = performance.now() - t0;
  t.ok(took >= 450 && took < 5000, `went on after its wait (${took.toFixed(0)} ms)`);
  t.equal(st.done.size, ids.length - 1, 'the others had started');
  t.notOk(st.done.has(st.slowId), 'the slow one was still starting');
  st.slow.resolve();
  const status = async () =>
    (await core.db.get<{ status: string }>('SELECT status FROM providers WHERE id = ?', [st.slowId]))?.status;
  const end = Date.now() + 5000;
  while ((await status()) !== 'running' && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
  t.ok(st.done.has(st.slowId), 'and started in the background');
  t.equal(await status(), 'running', 'recorded as running');
});

t.test('taking the lead starts the instances a few at a time, and losing it stops them so', async (t) => {
  const { core, ids, st } = await slowStarters(t);
  // The changed instances' rows are read in full together, not one statement each.
  const rowReads: string[] = [];
  for (const m of ['all', 'get'] as const) {
    const read = core.db[m].bind(core.db) as (sql: string, params?: unknown[]) => Promise<unknown>;
    (core.db as unknown as Record<string, unknown>)[m] = (sql: string, params?: unknown[]) => {
      if (/^SELECT \* FROM providers/.test(sql)) rowReads.push(sql);
      return read(sql, params);
    };
  }
  let taken = false;
  const taking = core.plugins.leadershipChanged(true).then(() => {
    taken = true;
  });
  const end = Date.now() + 10_000;
  while (st.done.size < ids.length - 1 && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
  t.equal(st.done.size, ids.length - 1, 'every other instance started while the first one waited on its service');
  t.notOk(taken, 'taking the lead waits for the slow one');
  t.ok(st.most > 1 && st.most <= 16, `a few at a time, at most 16 (${st.most})`);
  st.slow.resolve();
  await taking;
  t.ok(st.done.has(st.slowId), 'the slow one started too');
  t.equal(rowReads.length, 1, `the 40 rows in one read (${rowReads.length})`);

  let lost = false;
  const losing = core.plugins.leadershipChanged(false).then(() => {
    lost = true;
  });
  const until = Date.now() + 10_000;
  while (st.stopped.size < ids.length - 1 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
  t.equal(st.stopped.size, ids.length - 1, 'every other instance stopped while the first one waited on its service');
  t.notOk(lost);
  st.slowStop.resolve();
  await losing;
  t.ok(st.stopped.has(st.slowId), 'the slow one stopped too');
  t.equal(core.plugins.runningProvider(st.slowId), undefined, 'no instance left on a replica that does not lead');
});

t.test('at shutdown a slow stop holds back no other instance', async (t) => {
  const { core, ids, st } = await slowStarters(t);
  st.slow.resolve();
  await core.plugins.startProviders();
  const stopping = core.plugins.stopAll(60_000);
  const end = Date.now() + 10_000;
  while (st.stopped.size < ids.length - 1 && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
  t.equal(st.stopped.size, ids.length - 1, 'every other instance stopped while the first one waited on its service');
  st.slowStop.resolve();
  await stopping;
  t.ok(st.stopped.has(st.slowId), 'the slow one stopped too');
  t.ok(st.mostStopping > 1 && st.mostStopping <= 16, `a few at a time, at most 16 (${st.mostStopping})`);
});
