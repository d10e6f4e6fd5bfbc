/**
 * `herald events stats` and `herald events prune --before <date>` on a running service's event log:
 * counts by status, provider and type; the retention job's deletion at the date given (finished
 * events strictly before it, pending ones kept), and dates refused with their message.
 */
import t from 'tap';
import { newId } from '../../core/src/http/ids.ts';
import { startService } from '../helpers/service.ts';
import { herald, serviceEnv } from './support.ts';

const DAY = 86_400_000;

t.test('events stats and prune', async (t) => {
  const s = await startService();
  t.teardown(() => s.stop());
  const env = await serviceEnv(s.dataDir);
  const p = await s.request('POST', '/api/providers', {
    token: s.admin.token,
    body: { kind: 'example', name: 'Garden', config: { shared_token: 'shared-token-1' } },
  });
  t.equal(p.status, 201, p.text);
  const db = s.service.core.db;
  const add = async (createdAt: string, type: string, status: string, providerId: string | null = p.body.id) => {
    const id = newId();
    await db.run(
      'INSERT INTO event_log (id, user_id, provider_id, provider_kind, event_type, payload, dispatch_status, ' +
        `occurred_at, created_at) VALUES (?, ?, ?, 'example', ?, '{}', ?, ?, ?)`,
      [id, s.admin.id, providerId, type, status, createdAt, createdAt],
    );
    return id;
  };
  const at = (msAgo: number) => new Date(Date.now() - msAgo).toISOString();
  const boundary = '2021-03-01T00:00:00.000Z';
  const justBefore = await add('2021-02-28T23:59:59.999Z', 'thing_happened', 'dispatched');
  const atBoundary = await add(boundary, 'thing_happened', 'dispatched');
  for (let i = 0; i < 2; i++) await add(at(40 * DAY + i), 'thing_happened', 'dispatched');
  await add(at(40 * DAY), 'alarm', 'failed');
  const oldPending = await add(at(40 * DAY), 'thing_happened', 'pending');
  await add(at(DAY), 'alarm', 'dispatched');
  await add(at(DAY), 'alarm', 'dispatched', null);
  const exists = async (id: string) => Boolean(await db.get('SELECT 1 AS x FROM event_log WHERE id = ?', [id]));

  const stats = await herald(['events', 'stats', '--json'], env);
  t.equal(stats.code, 0, stats.stderr);
  const j = JSON.parse(stats.stdout);
  t.equal(j.total, 8);
  t.equal(j.first_at, '2021-02-28T23:59:59.999Z');
  t.same(j.by_status, [
    { status: 'dispatched', count: 6 },
    { status: 'failed', count: 1 },
    { status: 'pending', count: 1 },
  ]);
  t.same(j.by_type, [
    { kind: 'example', event_type: 'thing_happened', count: 5 },
    { kind: 'example', event_type: 'alarm', count: 3 },
  ]);
  t.same(j.by_provider, [
    { provider_id: p.body.id, kind: 'example', name: 'Garden', owner: s.admin.email, count: 7 },
    { provider_id: null, kind: 'example', name: null, owner: null, count: 1 },
  ]);
  const text = await herald(['events', 'stats'], { ...env, LANG: 'ru_RU.UTF-8' });
  t.match(
    text.stdout,
    new RegExp(
      /^8 событий, с .* по .*\.\nЗавершённые события хранятся 30 дней /.source +
        /\(SERVICE_EVENT_LOG_RETENTION_DAYS\)\.\n\nСостояние +Событий\ndispatched +6\n/.source,
    ),
  );
  t.match(text.stdout, /\nGarden +example +admin@example\.test +7\n\(удалён\) +example +1\n/);

  const byDate = await herald(['events', 'prune', '--before', '2021-03-01'], env);
  t.equal(byDate.code, 0, byDate.stderr);
  t.equal(byDate.stdout, 'Deleted 1 finished event created before 1 Mar 2021, 00:00:00 UTC.\n');
  t.notOk(await exists(justBefore), 'a millisecond before the date: deleted');
  t.ok(await exists(atBoundary), 'at the date: kept');

  const byDays = await herald(['events', 'prune', '--before', '30d'], env);
  t.equal(byDays.code, 0, byDays.stderr);
  t.match(
    byDays.stdout,
    /^Deleted 4 finished events created before .*\.\n1 older event is still pending or deferred and was kept\.\n$/,
  );
  t.ok(await exists(oldPending), 'a pending event is kept');
  t.equal(
    Number((await db.get<{ n: number }>('SELECT COUNT(*) AS n FROM event_log'))?.n),
    3,
    'the pending one and the two recent ones are left',
  );

  const future = await herald(
    ['events', 'prune', '--before', new Date(Date.now() + DAY).toISOString().slice(0, 10)],
    env,
  );
  t.equal(future.code, 2);
  t.match(future.stderr, /^herald: \d{4}-\d{2}-\d{2} is in the future; the cutoff must be now or earlier\.\n$/);
  const bad = await herald(['events', 'prune', '--before', 'last tuesday'], env);
  t.equal(bad.code, 2);
  t.equal(
    bad.stderr,
    'herald: last tuesday is not a date: write 2024-05-01, 2024-05-01T12:00:00Z, or 30d for thirty days ago.\n',
  );
  t.equal(
    Number((await db.get<{ n: number }>('SELECT COUNT(*) AS n FROM event_log'))?.n),
    3,
    'refused dates delete nothing',
  );
});
