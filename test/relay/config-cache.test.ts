/**
 * The webhook path keeps the provider rows and routing links it read while `config_version` holds
 * (core/src/relay/config-cache.ts, migration 0036): every write to the routing tables, made through
 * the API or straight in the database (as the command line, a restore or another replica writes),
 * is seen by the next request; bookkeeping writes (a poll's time, a failure streak with nothing to
 * reset) do not empty the cache.
 */
import t from 'tap';
import { ConfigCache } from '../../core/src/relay/config-cache.ts';
import { TRACKER_RULES } from '../../migrations/0036_config_version.ts';
import { TARGET_BOOKKEEPING, TARGET_ROUTING } from '../../migrations/0037_config_version_target_streak.ts';
import { EXAMPLE_HOOK_HEADERS, exampleChain, startService, startSink, type TestService } from '../helpers/service.ts';

const hookHeaders = EXAMPLE_HOOK_HEADERS;

const version = async (s: TestService) =>
  Number((await s.service.core.db.get<{ v: number }>('SELECT v FROM config_version WHERE id = ?', [1]))!.v);

t.test('every routing table has its triggers', async (t) => {
  const s = await startService();
  t.teardown(() => s.stop());
  const db = s.service.core.db;
  const rows =
    db.dialect === 'sqlite'
      ? await db.all<{ name: string }>(
          "SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'config_version_%' ORDER BY name",
        )
      : await db.all<{ name: string }>(
          "SELECT DISTINCT tgname AS name FROM pg_trigger WHERE tgname LIKE 'config_version_%' ORDER BY tgname",
        );
  const want: string[] = [];
  for (const table of ['providers', 'targets', 'tracker_targets', 'templates', 'trackers'])
    for (const op of ['delete', 'insert', 'update']) want.push(`config_version_${table}_${op}`);
  t.same(
    rows.map((r) => r.name),
    want.sort(),
  );
});

t.test('every column of targets and trackers either moves the version or is named bookkeeping', async (t) => {
  const s = await startService();
  t.teardown(() => s.stop());
  const db = s.service.core.db;
  const columns = async (table: string) =>
    (db.dialect === 'sqlite'
      ? await db.all<{ name: string }>(`SELECT name FROM pragma_table_info('${table}')`)
      : await db.all<{ name: string }>(
          'SELECT column_name AS name FROM information_schema.columns WHERE table_schema = current_schema() ' +
            'AND table_name = ?',
          [table],
        )
    )
      .map((r) => r.name)
      .sort();
  t.same(await columns('targets'), [...TARGET_ROUTING, ...TARGET_BOOKKEEPING].sort(), 'targets');
  // A tracker's poll state and its description decide nothing about where an event goes.
  const trackerBookkeeping = [
    'id',
    'created_at',
    'description',
    'last_poll_at',
    'last_poll_error',
    'consecutive_poll_failures',
  ];
  const rules = TRACKER_RULES.split(',').map((c) => c.trim());
  t.same(await columns('trackers'), [...rules, ...trackerBookkeeping].sort(), 'trackers');
});

t.test('a burst reads the provider and its links once, and the version every request', async (t) => {
  const s = await startService({ SERVICE_DISPATCH_THREAD: 'false' });
  const sink = await startSink();
  t.teardown(async () => {
    await s.stop();
    await sink.close();
  });
  const c = await exampleChain(s, sink.url);
  const db = s.service.core.db;
  const seen: string[] = [];
  const all = db.all.bind(db);
  const get = db.get.bind(db);
  db.all = ((sql: string, p?: never[]) => (seen.push(sql), all(sql, p))) as typeof db.all;
  db.get = ((sql: string, p?: never[]) => (seen.push(sql), get(sql, p))) as typeof db.get;
  t.teardown(() => Object.assign(db, { all, get }));
  for (let i = 0; i < 5; i++) {
    const r = await s.request('POST', c.hook, {
      headers: hookHeaders,
      body: { type: 'thing_happened', payload: { name: `door ${i}` } },
    });
    t.equal(r.status, 202);
  }
  await sink.waitFor(5);
  const count = (re: RegExp) => seen.filter((q) => re.test(q)).length;
  t.equal(count(/FROM providers WHERE webhook_token/), 1, 'the provider read once');
  t.equal(count(/FROM trackers tr JOIN tracker_targets/), 1, 'the links read once');
  t.equal(count(/FROM config_version/), 5, 'the version read by every request');
});

t.test('a change made in the database is seen by the next request', async (t) => {
  const s = await startService({ SERVICE_DISPATCH_THREAD: 'false' });
  const sink = await startSink();
  t.teardown(async () => {
    await s.stop();
    await sink.close();
  });
  const c = await exampleChain(s, sink.url);
  const db = s.service.core.db;
  const send = (name: string) =>
    s.request('POST', c.hook, { headers: hookHeaders, body: { type: 'thing_happened', payload: { name } } });
  t.equal((await send('warm')).status, 202);
  await sink.waitFor(1);

  await db.run('UPDATE providers SET enabled = ? WHERE id = ?', [false, c.provider.id]);
  const off = await send('while disabled');
  t.equal(off.status, 409, 'disabled behind the API: refused at once');
  t.equal(off.body.code, 'provider_disabled');
  await db.run('UPDATE providers SET enabled = ? WHERE id = ?', [true, c.provider.id]);
  t.equal((await send('enabled again')).status, 202);
  await sink.waitFor(2);

  await db.run('DELETE FROM tracker_targets WHERE tracker_id = ?', [c.tracker.id]);
  const unlinked = await send('unlinked');
  t.equal(unlinked.status, 202);
  const ev = await db.get<{ dispatch_status: string }>('SELECT dispatch_status FROM event_log WHERE id = ?', [
    unlinked.body.event_ids[0],
  ]);
  t.equal(ev?.dispatch_status, 'dropped', 'no link any more: nothing to deliver');
  t.equal(
    Number(
      (await db.get<{ n: number }>('SELECT COUNT(*) AS n FROM deliveries WHERE event_id = ?', [
        unlinked.body.event_ids[0],
      ]))!.n,
    ),
    0,
  );

  // Relinked through the API: delivered again.
  await s.request('PUT', `/api/trackers/${c.tracker.id}/targets/${c.target.id}`, { token: s.admin.token });
  t.equal((await send('relinked')).status, 202);
  const got = await sink.waitFor(3);
  t.equal(got.length, 3, 'the relinked target receives it');
});

t.test('bookkeeping writes leave the version alone; rule changes move it', async (t) => {
  const s = await startService();
  const sink = await startSink();
  t.teardown(async () => {
    await s.stop();
    await sink.close();
  });
  const c = await exampleChain(s, sink.url);
  const db = s.service.core.db;
  const v0 = await version(s);
  await db.run('UPDATE trackers SET last_poll_at = ?, consecutive_poll_failures = ? WHERE id = ?', [
    new Date().toISOString(),
    2,
    c.tracker.id,
  ]);
  await db.run('UPDATE targets SET consecutive_failures = 0 WHERE id = ? AND consecutive_failures <> 0', [c.target.id]);
  t.equal(await version(s), v0, 'a poll time and a reset with nothing to reset');
  await db.run('UPDATE trackers SET event_types = ? WHERE id = ?', ['{"thing_happened":false}', c.tracker.id]);
  t.ok((await version(s)) > v0, 'a tracker rule');
  const v1 = await version(s);
  await db.run('UPDATE targets SET consecutive_failures = consecutive_failures + 1, last_error = ? WHERE id = ?', [
    'HTTP 500',
    c.target.id,
  ]);
  t.equal(await version(s), v1, "a failed send's streak and error");
  await db.run('UPDATE targets SET consecutive_failures = 0, last_error = NULL WHERE id = ?', [c.target.id]);
  t.equal(await version(s), v1, "a send's success ending the streak");
  await db.run('UPDATE targets SET enabled = ? WHERE id = ?', [false, c.target.id]);
  t.ok((await version(s)) > v1, "a target's routing column");
  const v2 = await version(s);
  await db.run('DELETE FROM templates WHERE user_id = ?', [c.provider.user_id]);
  t.equal(await version(s), v2, 'a delete of no row');
});

t.test('a load that began before the cache was emptied is not kept', async (t) => {
  let v = 1;
  const q = { get: async () => ({ v }) } as never;
  const cache = new ConfigCache();
  await cache.sync(q);
  let release!: (rows: string[]) => void;
  let loads = 0;
  const slow = cache.get('k', () => {
    loads++;
    return new Promise<string[]>((r) => {
      release = r;
    });
  });
  v = 2;
  await cache.sync(q);
  release(['old']);
  t.same(await slow, ['old'], 'the request that loaded it uses it');
  t.same(await cache.get('k', async () => (loads++, ['new'])), ['new'], 'the next one loads again');
  t.equal(loads, 2);
  t.same(await cache.get('k', async () => (loads++, ['newer'])), ['new'], 'and that one is kept');
  t.ok(Object.isFrozen(await cache.get('k', async () => [])), 'kept values are frozen');
  v = 3;
  await cache.sync(q);
  t.same(await cache.get('k', async () => ['after a change']), ['after a change']);
});

t.test('calls of one turn share one read of the version; a call after it was issued reads again', async (t) => {
  let v = 1;
  let reads = 0;
  let hold: Promise<void> | undefined;
  const connection = () =>
    ({
      get: async () => {
        reads++;
        const seen = v;
        await hold;
        return { v: seen };
      },
    }) as never;
  const q = connection();
  const cache = new ConfigCache();
  await Promise.all([cache.sync(q), cache.sync(q), cache.sync(q)]);
  t.equal(reads, 1, 'three calls in one turn: one read');
  t.same(await cache.get('k', async () => 'one'), 'one');

  // A read already issued (and still running) is not joined: it may have read before the change the later call
  // must see.
  let release!: () => void;
  hold = new Promise((r) => {
    release = r;
  });
  const first = cache.sync(q);
  await new Promise((r) => setImmediate(r));
  t.equal(reads, 2, 'the first read is issued');
  v = 2;
  const later = cache.sync(q);
  release();
  hold = undefined;
  await Promise.all([first, later]);
  t.equal(reads, 3, 'the later call read again');
  t.same(await cache.get('k', async () => 'two'), 'two', 'and saw the change');

  // Calls on another connection (a transaction's) never wait for this one's read.
  const other = connection();
  await Promise.all([cache.sync(q), cache.sync(other)]);
  t.equal(reads, 5, 'one read on each connection');
});
