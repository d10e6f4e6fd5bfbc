/**
 * The service's own health signals (SelfMonitor) against an in-memory SQLite database holding only
 * the columns they use: consecutive poll failures per tracker, consecutive failures per target and
 * the deferred-backlog latch, each raised at its threshold (not one below), once, then re-armed.
 */
import type { Test } from 'tap';
import t from 'tap';
import type { Core } from '../../core.ts';
import type { Database } from '../../db/database.ts';
import { openNativeSqlite } from '../../db/native-connect.ts';
import type { LoadedPlugin } from '../../plugins/loader.ts';
import { SelfMonitor } from './monitor.ts';

const NOW = '2026-11-26T12:00:00.000Z';
const SCHEMA = [
  `CREATE TABLE providers (id TEXT PRIMARY KEY, user_id TEXT, kind TEXT, poll_failure_threshold INTEGER,
    deferred_backlog_threshold INTEGER, target_failure_threshold INTEGER, track_poll_failures INTEGER,
    track_deferred_backlog INTEGER, track_target_failures INTEGER, backlog_latched INTEGER)`,
  `CREATE TABLE trackers (id TEXT PRIMARY KEY, provider_id TEXT, consecutive_poll_failures INTEGER DEFAULT 0,
    last_poll_at TEXT, last_poll_error TEXT)`,
  'CREATE TABLE targets (id TEXT PRIMARY KEY, consecutive_failures INTEGER DEFAULT 0, last_error TEXT)',
  'CREATE TABLE deferred_dispatch (id INTEGER PRIMARY KEY, user_id TEXT)',
];

/** The receiving plugin of the signals, as the loader gives it. */
const receiver = {
  packageName: '@acme/self',
  id: 'acme_self',
  kind: 'provider',
  def: {
    manifest: {
      id: 'acme_self',
      kind: 'provider',
      displayName: 'Acme self',
      coreManaged: true,
      ingest: 'internal',
      selfMonitoring: { events: { pollFailures: 'p', deferredBacklog: 'b', targetFailures: 't' } },
      events: { p: {}, b: {}, t: {} },
    },
  },
} as unknown as LoadedPlugin;

interface Setup {
  monitor: SelfMonitor;
  db: Database;
  signals: [string, string, Record<string, unknown>][];
  metrics: Record<string, unknown>[];
  /** Runs once, just before the next statement that starts with `prefix` (another replica acting meanwhile). */
  before(prefix: string, fn: () => Promise<unknown>): void;
  /** Runs once, just after the next statement that starts with `prefix` (or the next transaction: `tx`). */
  after(prefix: string, fn: () => Promise<unknown>): void;
  /** The user's self-monitoring provider, with thresholds of 3 and every switch on unless `row` says otherwise. */
  self(row?: Record<string, unknown>, userId?: string): Promise<void>;
  col<T = unknown>(sql: string, params?: unknown[]): Promise<T>;
  /** Every write statement run through the monitor's database (its first words). */
  writes: string[];
  /** Moves the clock. */
  setNow(iso: string): void;
  /** What closing the database runs first (the monitor's last write). */
  close(): Promise<void>;
}

async function setup(t: Test, opts: { receiver?: boolean } = {}): Promise<Setup> {
  const { db } = openNativeSqlite(':memory:', { create: true });
  t.teardown(() => db.close());
  for (const sql of SCHEMA) await db.run(sql);
  const hooks: { prefix: string; when: 'before' | 'after'; fn: () => Promise<unknown> }[] = [];
  const hook = async (sql: string, when: 'before' | 'after') => {
    const i = hooks.findIndex((h) => h.when === when && sql.startsWith(h.prefix));
    if (i >= 0) await hooks.splice(i, 1)[0]!.fn();
  };
  const around = async <T>(sql: string, run: () => Promise<T>): Promise<T> => {
    await hook(sql, 'before');
    const result = await run();
    await hook(sql, 'after');
    return result;
  };
  const writes: string[] = [];
  const closers: (() => Promise<void>)[] = [];
  const watched = {
    dialect: db.dialect,
    get: (sql: string, params?: any[]) => around(sql, () => db.get(sql, params)),
    run: (sql: string, params?: any[]) => {
      writes.push(sql.split(' ').slice(0, 4).join(' '));
      return around(sql, () => db.run(sql, params));
    },
    all: (sql: string, params?: any[]) => db.all(sql, params),
    tx: (fn: any) => {
      writes.push('tx');
      return around('tx', () => db.tx(fn));
    },
    onClose: (fn: () => Promise<void>) => closers.push(fn),
  };
  let now = NOW;
  const signals: Setup['signals'] = [];
  const metrics: Setup['metrics'] = [];
  const core = {
    db: watched,
    clock: { now: () => new Date(now) },
    metrics: { pollFailures: { inc: (labels: Record<string, unknown>) => metrics.push(labels) } },
    plugins: { plugins: new Map(opts.receiver === false ? [] : [['acme_self', receiver]]) },
  } as unknown as Core;
  const monitor = new SelfMonitor(core, async (userId, signal, payload) => {
    signals.push([userId, signal, payload as Record<string, unknown>]);
  });
  return {
    monitor,
    db,
    signals,
    metrics,
    before: (prefix, fn) => hooks.push({ prefix, when: 'before', fn }),
    after: (prefix, fn) => hooks.push({ prefix, when: 'after', fn }),
    async self(row = {}, userId = 'u1') {
      const r = {
        id: `self-${userId}`,
        user_id: userId,
        kind: 'acme_self',
        poll_failure_threshold: 3,
        deferred_backlog_threshold: 3,
        target_failure_threshold: 3,
        track_poll_failures: 1,
        track_deferred_backlog: 1,
        track_target_failures: 1,
        backlog_latched: 0,
        ...row,
      };
      const cols = Object.keys(r);
      await db.run(
        `INSERT INTO providers (${cols.join(', ')}) VALUES (${cols.map(() => '?').join(', ')})`,
        Object.values(r) as any[],
      );
    },
    async col(sql, params = []) {
      const row = await db.get(sql, params as any[]);
      return Object.values(row ?? {})[0] as any;
    },
    writes,
    setNow: (iso) => {
      now = iso;
    },
    close: async () => {
      for (const fn of [...closers].reverse()) await fn();
    },
  };
}

const provider = {
  id: 'p1',
  user_id: 'u1',
  kind: 'acme_feed',
  name: 'Feed',
  config: {},
  enabled: true,
  webhook_token: 'x',
  updated_at: NOW,
};
const tracker = { id: 'tr1', name: 'Releases', enabled: true, config: {} };

async function trackerRow(s: Setup, id = 'tr1') {
  return s.db.get(
    'SELECT consecutive_poll_failures AS n, last_poll_at AS at, last_poll_error AS err FROM trackers WHERE id = ?',
    [id],
  );
}

t.test('poll failures: counted per tracker, raised at the threshold (not one below), then counted again', async (t) => {
  const s = await setup(t);
  await s.self();
  await s.db.run("INSERT INTO trackers (id, provider_id) VALUES ('tr1', 'p1'), ('tr2', 'p1')");
  await s.monitor.pollResult(provider, [tracker], new Error('feed down'));
  await s.monitor.pollResult(provider, [tracker], new Error('feed down'));
  t.strictSame(await trackerRow(s), { n: 2, at: NOW, err: 'feed down' }, 'two failures counted');
  t.strictSame(s.signals, [], 'nothing raised below the threshold');
  t.strictSame(
    s.metrics,
    [{ provider_type: 'acme_feed' }, { provider_type: 'acme_feed' }],
    'each failure counted in the metrics',
  );
  t.equal((await trackerRow(s, 'tr2'))?.n, 0, 'a tracker not polled is not counted');

  await s.monitor.pollResult(provider, [tracker], new Error('feed still down'));
  t.strictSame(s.signals, [
    [
      'u1',
      'pollFailures',
      {
        tracker_id: 'tr1',
        tracker_name: 'Releases',
        provider_id: 'p1',
        provider_name: 'Feed',
        provider_kind: 'acme_feed',
        failures: 3,
        threshold: 3,
        last_error: 'feed still down',
      },
    ],
  ]);
  t.strictSame(await trackerRow(s), { n: 0, at: NOW, err: 'feed still down' }, 'the count starts again');
  await s.monitor.pollResult(provider, [tracker], new Error('x'));
  await s.monitor.pollResult(provider, [tracker], new Error('x'));
  t.equal(s.signals.length, 1, 'two more failures raise nothing');
  await s.monitor.pollResult(provider, [tracker], new Error('x'));
  t.equal(s.signals.length, 2, 'the third raises again');
});

t.test("a poll that succeeds clears the counts of the provider's trackers, and only when it polled some", async (t) => {
  const s = await setup(t);
  await s.self();
  await s.db.run(
    'INSERT INTO trackers (id, provider_id, consecutive_poll_failures, last_poll_error) ' +
      "VALUES ('tr1', 'p1', 2, 'e'), " +
      "('tr2', 'p1', 2, 'e'), ('other', 'p2', 2, 'e')",
  );
  await s.monitor.pollResult(provider, []);
  t.strictSame(await trackerRow(s), { n: 2, at: null, err: 'e' }, 'no trackers polled: nothing changes');
  await s.monitor.pollResult(provider, [tracker]);
  t.strictSame(await trackerRow(s), { n: 0, at: NOW, err: null }, 'cleared');
  t.strictSame(await trackerRow(s, 'tr2'), { n: 0, at: NOW, err: null }, 'every tracker of the provider');
  t.strictSame(await trackerRow(s, 'other'), { n: 2, at: null, err: 'e' }, "not another provider's");
  t.strictSame(s.metrics, [], 'no failure in the metrics');
  await s.monitor.pollResult(provider, [tracker], new Error('x'));
  t.equal((await trackerRow(s))?.n, 1, 'the next failure is the first');
  t.strictSame(s.signals, []);
});

t.test('poll failures: the error text is kept to 500 characters; a thrown non-Error is written as text', async (t) => {
  const s = await setup(t);
  await s.self({ poll_failure_threshold: 1 });
  await s.db.run("INSERT INTO trackers (id, provider_id) VALUES ('tr1', 'p1')");
  const long = `${'a'.repeat(500)}bbbb`;
  await s.monitor.pollResult(provider, [tracker], new Error(long));
  t.equal((await trackerRow(s))?.err, 'a'.repeat(500));
  t.equal(s.signals[0]?.[2].last_error, 'a'.repeat(500));
  await s.monitor.pollResult(provider, [tracker], 'refused');
  t.equal((await trackerRow(s))?.err, 'refused');
  t.equal(s.signals[1]?.[2].last_error, 'refused');
  t.equal(s.signals[1]?.[2].failures, 1, 'a threshold of 1 raises on every failure');
});

t.test(
  'poll failures are counted but not raised when switched off, with no receiver, or for an unknown tracker',
  async (t) => {
    const off = await setup(t);
    await off.self({ track_poll_failures: 0, poll_failure_threshold: 1 });
    await off.db.run("INSERT INTO trackers (id, provider_id) VALUES ('tr1', 'p1')");
    await off.monitor.pollResult(provider, [tracker], new Error('x'));
    t.equal((await trackerRow(off))?.n, 1, 'switched off: counted');
    t.strictSame(off.signals, [], 'switched off: not raised');

    const none = await setup(t, { receiver: false });
    await none.self({ poll_failure_threshold: 1 });
    await none.db.run("INSERT INTO trackers (id, provider_id) VALUES ('tr1', 'p1')");
    await none.monitor.pollResult(provider, [tracker], new Error('x'));
    t.equal((await trackerRow(none))?.n, 1, 'no receiving plugin: counted');
    t.strictSame(none.signals, [], 'no receiving plugin: not raised');

    const other = await setup(t);
    await other.self({ poll_failure_threshold: 1 }, 'u2');
    await other.db.run("INSERT INTO trackers (id, provider_id) VALUES ('tr1', 'p1')");
    await other.monitor.pollResult(provider, [tracker], new Error('x'));
    t.strictSame(other.signals, [], 'only another user has a self-monitoring provider');
    await other.db.run(
      'INSERT INTO providers (id, user_id, kind, poll_failure_threshold, track_poll_failures) ' +
        "VALUES ('q', 'u1', 'acme_feed', 1, 1)",
    );
    await other.monitor.pollResult(provider, [tracker], new Error('x'));
    t.strictSame(other.signals, [], 'nor is a provider of another kind one');

    const gone = await setup(t);
    await gone.self({ poll_failure_threshold: 1 });
    await gone.monitor.pollResult(provider, [tracker], new Error('x'));
    t.strictSame(gone.signals, [], 'a tracker deleted meanwhile: nothing raised, nothing thrown');
  },
);

t.test('poll failures: when another replica reset the count first, only it raises the signal', async (t) => {
  const s = await setup(t);
  await s.self({ poll_failure_threshold: 1 });
  await s.db.run("INSERT INTO trackers (id, provider_id) VALUES ('tr1', 'p1')");
  s.before('UPDATE trackers SET consecutive_poll_failures = 0', () =>
    s.db.run('UPDATE trackers SET consecutive_poll_failures = 0'),
  );
  await s.monitor.pollResult(provider, [tracker], new Error('x'));
  t.strictSame(s.signals, []);
});

t.test(
  'poll failures below the threshold raise nothing, even when another replica adds failures meanwhile',
  async (t) => {
    const s = await setup(t);
    await s.self();
    await s.db.run("INSERT INTO trackers (id, provider_id, consecutive_poll_failures) VALUES ('tr1', 'p1', 1)");
    // Right after this replica counted its failure (2) and read the count back, another counts the third.
    s.after('tx', () => s.db.run('UPDATE trackers SET consecutive_poll_failures = 3'));
    await s.monitor.pollResult(provider, [tracker], new Error('x'));
    t.strictSame(s.signals, [], 'this check saw 2 of 3: the replica that counted the third raises it');
    t.equal((await trackerRow(s))?.n, 3, 'and its count is left for it');
  },
);

async function targetRow(s: Setup, id = 'tg1') {
  return s.db.get('SELECT consecutive_failures AS n, last_error AS err FROM targets WHERE id = ?', [id]);
}
const target = { id: 'tg1', name: 'Ops chat', kind: 'acme_chat' };

t.test('target failures: raised at the threshold (not one below), then counted again', async (t) => {
  const s = await setup(t);
  await s.self();
  await s.db.run("INSERT INTO targets (id) VALUES ('tg1'), ('tg2')");
  await s.monitor.targetFailed('u1', target, 'bad gateway', 502);
  await s.monitor.targetFailed('u1', target, 'bad gateway', 502);
  t.strictSame(await targetRow(s), { n: 2, err: 'bad gateway' });
  t.strictSame(s.signals, [], 'nothing raised below the threshold');
  t.equal((await targetRow(s, 'tg2'))?.n, 0, 'another target is not counted');
  await s.monitor.targetFailed('u1', target, 'unavailable', 503);
  t.strictSame(s.signals, [
    [
      'u1',
      'targetFailures',
      {
        target_id: 'tg1',
        target_name: 'Ops chat',
        target_kind: 'acme_chat',
        failures: 3,
        threshold: 3,
        last_error: 'unavailable',
        status_code: 503,
      },
    ],
  ]);
  t.strictSame(await targetRow(s), { n: 0, err: 'unavailable' }, 'the count starts again');
  await s.monitor.targetFailed('u1', target, 'x', 500);
  await s.monitor.targetFailed('u1', target, 'x', 500);
  t.equal(s.signals.length, 1);
  await s.monitor.targetFailed('u1', target, 'x', 500);
  t.equal(s.signals.length, 2, 'the third raises again');
});

t.test("a send that succeeds clears its target's count and error, not another's", async (t) => {
  const s = await setup(t);
  await s.self();
  await s.db.run("INSERT INTO targets (id, consecutive_failures, last_error) VALUES ('tg1', 2, 'e'), ('tg2', 2, 'e')");
  await s.monitor.targetSucceeded('tg1');
  t.strictSame(await targetRow(s), { n: 0, err: null });
  t.strictSame(await targetRow(s, 'tg2'), { n: 2, err: 'e' });
  await s.monitor.targetFailed('u1', target, 'x', 500);
  await s.monitor.targetFailed('u1', target, 'x', 500);
  t.strictSame(s.signals, [], 'two failures after the success raise nothing');
});

t.test(
  'target failures: error kept to 500 characters; counted but not raised when off, with no receiver or no target',
  async (t) => {
    const s = await setup(t);
    await s.self({ target_failure_threshold: 1 });
    await s.db.run("INSERT INTO targets (id) VALUES ('tg1')");
    await s.monitor.targetFailed('u1', target, `${'e'.repeat(500)}ffff`, 500);
    t.equal((await targetRow(s))?.err, 'e'.repeat(500));
    t.equal(s.signals[0]?.[2].last_error, 'e'.repeat(500));
    t.equal(s.signals[0]?.[2].failures, 1, 'a threshold of 1 raises on the first failure');

    const off = await setup(t);
    await off.self({ track_target_failures: 0, target_failure_threshold: 1 });
    await off.db.run("INSERT INTO targets (id) VALUES ('tg1')");
    await off.monitor.targetFailed('u1', target, 'x', 500);
    t.equal((await targetRow(off))?.n, 1, 'switched off: counted');
    t.strictSame(off.signals, [], 'switched off: not raised');

    const none = await setup(t, { receiver: false });
    await none.self({ target_failure_threshold: 1 });
    await none.db.run("INSERT INTO targets (id) VALUES ('tg1')");
    await none.monitor.targetFailed('u1', target, 'x', 500);
    t.equal((await targetRow(none))?.n, 1, 'no receiving plugin: counted');
    t.strictSame(none.signals, [], 'no receiving plugin: not raised');

    const gone = await setup(t);
    await gone.self({ target_failure_threshold: 1 });
    await gone.monitor.targetFailed('u1', target, 'x', 500);
    t.strictSame(gone.signals, [], 'a target deleted meanwhile: nothing raised, nothing thrown');
  },
);

t.test('target failures: when another replica reset the count first, only it raises the signal', async (t) => {
  const s = await setup(t);
  await s.self({ target_failure_threshold: 1 });
  await s.db.run("INSERT INTO targets (id) VALUES ('tg1')");
  s.before('UPDATE targets SET consecutive_failures = 0', () =>
    s.db.run('UPDATE targets SET consecutive_failures = 0'),
  );
  await s.monitor.targetFailed('u1', target, 'x', 500);
  t.strictSame(s.signals, []);
});

t.test(
  'target failures below the threshold raise nothing, even when another replica adds failures meanwhile',
  async (t) => {
    const s = await setup(t);
    await s.self();
    await s.db.run("INSERT INTO targets (id, consecutive_failures) VALUES ('tg1', 1)");
    // Right after this replica read its count back (2), another counts the third.
    s.after('SELECT consecutive_failures', () => s.db.run('UPDATE targets SET consecutive_failures = 3'));
    await s.monitor.targetFailed('u1', target, 'x', 500);
    t.strictSame(s.signals, [], 'this check saw 2 of 3: the replica that counted the third raises it');
    t.equal((await targetRow(s))?.n, 3, 'and its count is left for it');
  },
);

const defer = (s: Setup, n: number, userId = 'u1') =>
  Promise.all(
    Array.from({ length: n }, () => s.db.run('INSERT INTO deferred_dispatch (user_id) VALUES (?)', [userId])),
  );
const latched = (s: Setup) => s.col<number>("SELECT backlog_latched FROM providers WHERE id = 'self-u1'");

t.test('deferred backlog: raised once when it reaches the threshold, re-armed when it falls below', async (t) => {
  const s = await setup(t);
  await s.self();
  await defer(s, 2);
  await defer(s, 5, 'u2');
  await s.monitor.checkBacklog('u1');
  t.strictSame(s.signals, [], "one below the threshold (another user's not counted)");
  t.equal(await latched(s), 0);
  await defer(s, 1);
  await s.monitor.checkBacklog('u1');
  t.strictSame(s.signals, [['u1', 'deferredBacklog', { pending: 3, threshold: 3 }]], 'at the threshold');
  t.equal(await latched(s), 1, 'latched');
  await defer(s, 1);
  await s.monitor.checkBacklog('u1');
  await s.monitor.checkBacklog('u1');
  t.equal(s.signals.length, 1, 'raised once while it stays at or above');
  t.equal(await latched(s), 1);

  await s.db.run(
    "DELETE FROM deferred_dispatch WHERE id IN (SELECT id FROM deferred_dispatch WHERE user_id = 'u1' LIMIT 1)",
  );
  await s.monitor.checkBacklog('u1');
  t.equal(await latched(s), 1, 'at the threshold again (4 → 3): still latched');
  await s.db.run(
    "DELETE FROM deferred_dispatch WHERE id IN (SELECT id FROM deferred_dispatch WHERE user_id = 'u1' LIMIT 1)",
  );
  await s.monitor.checkBacklog('u1');
  t.equal(await latched(s), 0, 'one below: re-armed');
  t.equal(s.signals.length, 1);
  await defer(s, 1);
  await s.monitor.checkBacklog('u1');
  t.strictSame(s.signals[1], ['u1', 'deferredBacklog', { pending: 3, threshold: 3 }], 'raised again');
});

t.test('deferred backlog: latched but not raised when switched off; nothing without a receiver', async (t) => {
  const off = await setup(t);
  await off.self({ track_deferred_backlog: 0, deferred_backlog_threshold: 1 });
  await defer(off, 1);
  await off.monitor.checkBacklog('u1');
  t.strictSame(off.signals, []);
  t.equal(await latched(off), 1, 'the latch is kept even when off');

  const none = await setup(t, { receiver: false });
  await none.self({ deferred_backlog_threshold: 1 });
  await defer(none, 1);
  await none.monitor.checkBacklog('u1');
  t.strictSame(none.signals, []);
  t.equal(await latched(none), 0);

  const zero = await setup(t);
  await zero.self({ deferred_backlog_threshold: 0 });
  await zero.monitor.checkBacklog('u1');
  t.strictSame(zero.signals, [['u1', 'deferredBacklog', { pending: 0, threshold: 0 }]], 'an empty backlog counts as 0');
});

t.test(
  'deferred backlog: a check that found the latch set raises nothing, even if it is re-armed meanwhile',
  async (t) => {
    const s = await setup(t);
    await s.self({ deferred_backlog_threshold: 1, backlog_latched: 1 });
    await defer(s, 1);
    // Right after this check read the latch (set), another re-arms it.
    s.after('SELECT COUNT(*)', () => s.db.run('UPDATE providers SET backlog_latched = 0'));
    await s.monitor.checkBacklog('u1');
    t.strictSame(s.signals, [], 'the next check raises it, not this one');
    t.equal(await latched(s), 0);
  },
);

t.test('deferred backlog: when another replica latched it first, only it raises the signal', async (t) => {
  const s = await setup(t);
  await s.self({ deferred_backlog_threshold: 1 });
  await defer(s, 1);
  s.before('UPDATE providers SET backlog_latched', () => s.db.run('UPDATE providers SET backlog_latched = 1'));
  await s.monitor.checkBacklog('u1');
  t.strictSame(s.signals, []);
  t.equal(await latched(s), 1);
});

t.test('deferred backlog: a check below the threshold that found the latch open leaves it alone', async (t) => {
  const s = await setup(t);
  await s.self();
  await defer(s, 1);
  // Right after this check read the latch (open), another replica sees a backlog and latches it.
  s.after('SELECT COUNT(*)', () => s.db.run('UPDATE providers SET backlog_latched = 1'));
  await s.monitor.checkBacklog('u1');
  t.equal(await latched(s), 1, 'still latched: this check does not re-arm it');
  t.strictSame(s.signals, []);
});

t.test(
  'a poll that changes nothing else is not a write: its time is held, read through, and written once a minute',
  async (t) => {
    const s = await setup(t);
    const p2 = { ...provider, id: 'p2' };
    await s.db.run("INSERT INTO trackers (id, provider_id) VALUES ('tr1', 'p1'), ('tr2', 'p1'), ('tr3', 'p2')");
    await s.monitor.pollResult(provider, [tracker]);
    await s.monitor.pollResult(p2, [tracker]);
    t.strictSame(
      await trackerRow(s, 'tr2'),
      { n: 0, at: NOW, err: null },
      'the first poll of never-polled trackers: written',
    );
    t.equal(s.writes.length, 2, 'one statement each');
    t.equal(s.monitor.lastPollAt('p1'), undefined, 'and nothing held');

    s.writes.length = 0;
    const later = '2026-11-26T12:01:00.000Z';
    s.setNow(later);
    await s.monitor.pollResult(provider, [tracker]);
    await s.monitor.pollResult(p2, [tracker]);
    t.strictSame(s.writes, [], 'the next successful polls write nothing');
    t.equal(s.monitor.lastPollAt('p1'), later, 'their time is read through from memory');
    t.equal((await trackerRow(s))?.at, NOW, 'the row still has the time written before');

    const latest = '2026-11-26T12:02:00.000Z';
    s.setNow(latest);
    await s.monitor.pollResult(provider, [tracker]);
    await s.monitor.flushPollTimes();
    t.strictSame(s.writes, ['UPDATE trackers SET last_poll_at'], 'one statement writes every held time');
    t.equal((await trackerRow(s))?.at, latest, 'the newest of each provider');
    t.equal((await trackerRow(s, 'tr2'))?.at, latest, 'on every tracker of the provider');
    t.equal((await trackerRow(s, 'tr3'))?.at, later);
    t.equal(s.monitor.lastPollAt('p1'), undefined, 'nothing held once written');
    s.writes.length = 0;
    await s.monitor.flushPollTimes();
    t.strictSame(s.writes, [], 'nothing held, nothing written');

    const atClose = '2026-11-26T12:03:00.000Z';
    s.setNow(atClose);
    await s.monitor.pollResult(p2, [tracker]);
    await s.close();
    t.equal((await trackerRow(s, 'tr3'))?.at, atClose, 'closing the database writes what is held first');
  },
);

t.test('a failure after a held poll time is written at once, and the held time does not overwrite it', async (t) => {
  const s = await setup(t);
  await s.db.run("INSERT INTO trackers (id, provider_id) VALUES ('tr1', 'p1')");
  await s.monitor.pollResult(provider, [tracker]);
  const later = '2026-11-26T12:01:00.000Z';
  s.setNow(later);
  await s.monitor.pollResult(provider, [tracker]);
  t.equal(s.monitor.lastPollAt('p1'), later);
  const failed = '2026-11-26T12:02:00.000Z';
  s.setNow(failed);
  await s.monitor.pollResult(provider, [tracker], new Error('down'));
  t.strictSame(await trackerRow(s), { n: 1, at: failed, err: 'down' }, 'the failure is written at once');
  t.equal(s.monitor.lastPollAt('p1'), undefined, 'the held success is dropped');
  await s.monitor.flushPollTimes();
  t.equal((await trackerRow(s))?.at, failed, 'and not written over the failure');
  s.writes.length = 0;
  const recovered = '2026-11-26T12:03:00.000Z';
  s.setNow(recovered);
  await s.monitor.pollResult(provider, [tracker]);
  t.strictSame(await trackerRow(s), { n: 0, at: recovered, err: null }, 'recovering is a change: written at once');
  t.equal(s.writes.length, 1);
});
