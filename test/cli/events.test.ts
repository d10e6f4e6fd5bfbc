/**
 * `herald events stats` and `herald events prune --before <date>` on a running service's event log:
 * counts by status, provider and type; the retention job's deletion at the date given (finished
 * events strictly before it, pending ones kept), run by the service when one answers at SERVICE_PORT,
 * by the command itself when nothing listens there or with `--local`; a service that refuses the
 * command's token is not written beside; dates refused with their message.
 */
import net from 'node:net';
import t from 'tap';
import { newId } from '../../core/src/http/ids.ts';
import { startService } from '../helpers/service.ts';
import { herald, serviceEnv } from './support.ts';

const DAY = 86_400_000;

t.test('events stats and prune', async (t) => {
  const s = await startService();
  t.teardown(() => s.stop());
  // The service's own address, as its SERVICE_PORT gives it: the prune is asked of it.
  const env = await serviceEnv(s.dataDir, { SERVICE_PORT: new URL(s.url).port });
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
  t.equal(
    byDate.stderr,
    `The service at ${s.url} runs the prune, as its daily retention job does; waiting for it to end.\n`,
    'asked of the running service',
  );
  t.ok(
    s.logs().some((l) => l.msg === 'an administrator started a prune' && l.admin_id === s.admin.id),
    'which ran it, as the administrator',
  );
  t.ok(
    s.logs().some((l) => l.msg === 'event log prune ended' && l.deleted === 1 && l.state === 'done'),
    'and logged its end',
  );
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

/** A loopback port nothing listens on (taken, then let go). */
async function closedPort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise((resolve) => srv.close(resolve));
  return port;
}

t.test('events prune deletes itself only when no service answers, or with --local', async (t) => {
  const s = await startService();
  t.teardown(() => s.stop());
  const db = s.service.core.db;
  const add = async (createdAt: string) =>
    db.run(
      'INSERT INTO event_log (id, user_id, provider_id, provider_kind, event_type, payload, dispatch_status, ' +
        `occurred_at, created_at) VALUES (?, ?, NULL, 'example', 'thing', '{}', 'dispatched', ?, ?)`,
      [newId(), s.admin.id, createdAt, createdAt],
    );
  const count = async () => Number((await db.get<{ n: number }>('SELECT COUNT(*) AS n FROM event_log'))?.n);
  const started = () => s.logs().filter((l) => l.msg === 'an administrator started a prune').length;
  await add('2020-01-01T00:00:00.000Z');
  await add('2020-02-01T00:00:00.000Z');
  await add('2020-03-01T00:00:00.000Z');

  // Nothing listens at the address: the command deletes from its own process.
  const port = await closedPort();
  const alone = await herald(
    ['events', 'prune', '--before', '2020-01-15'],
    await serviceEnv(s.dataDir, { SERVICE_PORT: String(port) }),
  );
  t.equal(alone.code, 0, alone.stderr);
  t.equal(alone.stdout, 'Deleted 1 finished event created before 15 Jan 2020, 00:00:00 UTC.\n');
  t.equal(alone.stderr, `No service answers at http://127.0.0.1:${port}: deleting from this process.\n`);
  t.equal(await count(), 2);
  t.equal(started(), 0, 'the service was not asked');

  // --local: never asks, though a service answers.
  const env = await serviceEnv(s.dataDir, { SERVICE_PORT: new URL(s.url).port });
  const local = await herald(['events', 'prune', '--before', '2020-02-15', '--local'], env);
  t.equal(local.code, 0, local.stderr);
  t.equal(local.stdout, 'Deleted 1 finished event created before 15 Feb 2020, 00:00:00 UTC.\n');
  t.equal(local.stderr, '');
  t.equal(started(), 0, 'the service was not asked');

  // A service that refuses the command's token (another SERVICE_SECRET_KEY): nothing is written beside it.
  const otherKey = await serviceEnv(s.dataDir, {
    SERVICE_PORT: '1',
    SERVICE_SECRET_KEY: 'an-entirely-different-secret-key-of-enough-length-0123456789',
  });
  const refused = await herald(['events', 'prune', '--before', '2020-03-15', '--url', s.url], otherKey);
  t.equal(refused.code, 1);
  t.match(
    refused.stderr,
    new RegExp(
      `^herald: The service at ${s.url.replace(/\./g, '\\.')} refused the prune: .+ It must run with this ` +
        'SERVICE_SECRET_KEY on this database; to delete from this process anyway, add --local\\.\\n$',
    ),
  );
  t.equal(await count(), 1, 'nothing deleted');

  // In Russian, asked of the service with --url.
  const ru = await herald(['events', 'prune', '--before', '2020-03-15', '--url', `${s.url}/`], {
    ...env,
    SERVICE_PORT: '1',
    LANG: 'ru_RU.UTF-8',
  });
  t.equal(ru.code, 0, ru.stderr);
  t.match(ru.stdout, /^Удалено 1 завершённое событие, созданное до /);
  t.equal(ru.stderr, `Очистку выполняет сервис по адресу ${s.url}, как ежедневную; ждём её окончания.\n`);
  t.equal(await count(), 0);
  t.equal(started(), 1);
});
