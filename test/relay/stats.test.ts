/**
 * `GET /api/stats` on a seeded set: events per day and status in the caller's time zone (both edges of the 30-day
 * window), per target the success rate and the p95 latency, another user's rows left out, and a bad zone refused.
 */
import { randomUUID } from 'node:crypto';
import t from 'tap';
import { startService } from '../helpers/service.ts';

t.test('stats: events per day by status, success rate and p95 per target, own rows only', async (t) => {
  const s = await startService();
  t.teardown(() => s.stop());
  s.clock.set('2026-03-10T12:00:00Z');
  const a = s.admin;
  const b = await s.user('other@example.com');
  const db = s.service.core.db;
  const target = async (token: string, name: string) =>
    (
      await s.request('POST', '/api/targets', {
        token,
        body: { kind: 'recorder', name, config: { url: 'http://127.0.0.1:9/' }, locale: 'en' },
      })
    ).body.id as string;
  const t1 = await target(a.token, 'Alpha');
  const t2 = await target(a.token, 'Beta');
  const tb = await target(b.token, 'Theirs');

  const event = async (userId: string, at: string, status: string) => {
    const id = randomUUID();
    await db.run(
      'INSERT INTO event_log (id, user_id, provider_kind, event_type, dispatch_status, occurred_at, created_at) ' +
        "VALUES (?, ?, 'example', 'push', ?, ?, ?)",
      [id, userId, status, at, at],
    );
    return id;
  };
  const delivery = async (
    userId: string,
    eventId: string,
    targetId: string,
    status: string,
    at: string,
    ms: number,
  ) => {
    const sent = status === 'sent' ? new Date(Date.parse(at) + ms).toISOString() : null;
    await db.run(
      'INSERT INTO deliveries (id, event_id, user_id, target_id, status, next_attempt_at, sent_at, created_at, ' +
        'updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
      [randomUUID(), eventId, userId, targetId, status, at, sent, at, at],
    );
  };

  // The window in UTC: 2026-02-09 00:00 to now. One minute before it is out, its first minute in.
  await event(a.id, '2026-02-08T23:59:59.000Z', 'dispatched');
  await event(a.id, '2026-02-09T00:00:00.000Z', 'dispatched');
  // 9 March: 18:15 UTC is 23:45 in Kolkata (+05:30), 18:45 UTC is 00:15 on the 10th there.
  await event(a.id, '2026-03-09T18:15:00.000Z', 'dispatched');
  await event(a.id, '2026-03-09T18:45:00.000Z', 'failed');
  await event(a.id, '2026-03-09T18:45:30.000Z', 'failed');
  await event(a.id, '2026-03-10T11:00:00.000Z', 'partial');
  // Twenty deliveries sent to Alpha taking 100, 200 … 2000 ms, five failed; none to Beta.
  for (let i = 1; i <= 25; i++) {
    const at = `2026-03-0${1 + (i % 8)}T10:00:00.000Z`;
    const e = await event(a.id, at, i <= 20 ? 'dispatched' : 'failed');
    await delivery(a.id, e, t1, i <= 20 ? 'sent' : 'failed', at, i * 100);
  }
  // The other user's events and deliveries, on the same days.
  for (let i = 0; i < 7; i++) {
    const e = await event(b.id, '2026-03-09T18:45:00.000Z', 'failed');
    await delivery(b.id, e, tb, 'failed', '2026-03-09T18:45:00.000Z', 0);
  }

  const stats = async (token: string, tz?: string) =>
    s.request('GET', `/api/stats${tz === undefined ? '' : `?tz=${encodeURIComponent(tz)}`}`, { token });

  const utc = await stats(a.token);
  t.equal(utc.status, 200, 'UTC answers');
  t.equal(utc.body.tz, 'UTC', 'UTC by default');
  t.equal(utc.body.since, '2026-02-09T00:00:00.000Z');
  t.equal(utc.body.days.length, 30, 'thirty days');
  t.equal(utc.body.days[0].date, '2026-02-09', 'the first day');
  t.equal(utc.body.days[29].date, '2026-03-10', 'today last');
  const day = (body: any, date: string) => body.days.find((d: any) => d.date === date);
  t.same(day(utc.body, '2026-02-09'), { date: '2026-02-09', total: 1, counts: { dispatched: 1 } }, 'first minute in');
  t.equal(
    utc.body.days.reduce((n: number, d: any) => n + d.total, 0),
    5 + 25,
    'the minute before the window is left out, and no other user’s event counts',
  );
  // 9 March in UTC: the three evening events; 8 March: the seeded events of i = 7, 15 (sent) and 23 (failed).
  t.same(day(utc.body, '2026-03-09'), { date: '2026-03-09', total: 3, counts: { dispatched: 1, failed: 2 } });
  t.same(day(utc.body, '2026-03-08'), { date: '2026-03-08', total: 3, counts: { dispatched: 2, failed: 1 } });
  t.same(day(utc.body, '2026-03-10'), { date: '2026-03-10', total: 1, counts: { partial: 1 } });
  t.same(day(utc.body, '2026-02-20'), { date: '2026-02-20', total: 0, counts: {} }, 'a day without events counts zero');
  t.same(utc.body.statuses, ['dispatched', 'failed', 'partial']);

  const kolkata = await stats(a.token, 'Asia/Kolkata');
  t.equal(kolkata.status, 200, 'Kolkata answers');
  t.equal(kolkata.body.since, '2026-02-08T18:30:00.000Z', 'midnight in Kolkata');
  t.same(day(kolkata.body, '2026-02-09'), { date: '2026-02-09', total: 2, counts: { dispatched: 2 } });
  t.same(
    day(kolkata.body, '2026-03-09'),
    { date: '2026-03-09', total: 1, counts: { dispatched: 1 } },
    '23:45 there is still the 9th',
  );
  t.same(
    day(kolkata.body, '2026-03-10'),
    { date: '2026-03-10', total: 3, counts: { failed: 2, partial: 1 } },
    '00:15 there is the 10th',
  );

  const [alpha, beta] = utc.body.targets;
  t.equal(utc.body.targets.length, 2, 'only the caller’s targets');
  t.same(alpha, { id: t1, name: 'Alpha', kind: 'recorder', sent: 20, failed: 5, success_rate: 0.8, p95_ms: 1900 });
  t.same(beta, { id: t2, name: 'Beta', kind: 'recorder', sent: 0, failed: 0, success_rate: null, p95_ms: null });

  const theirs = await stats(b.token);
  t.equal(theirs.status, 200);
  t.same(
    theirs.body.targets.map((x: any) => [x.name, x.sent, x.failed]),
    [['Theirs', 0, 7]],
    'the other user sees only their own',
  );
  t.equal(day(theirs.body, '2026-03-09').total, 7);

  for (const bad of ['Moon/Crater', 'Europe/Nowhere', 'x'.repeat(65)]) {
    const r = await stats(a.token, bad);
    t.equal(r.status, 422, `${bad.slice(0, 20)}: 422`);
    t.type(r.body.detail, 'string');
  }
  t.match((await stats(a.token, 'Moon/Crater')).body, {
    code: 'invalid_timezone',
    params: { timezone: 'Moon/Crater' },
  });
  t.equal((await stats(a.token, 'Europe/Berlin')).status, 200, 'a real zone');
  t.equal((await s.request('GET', '/api/stats', { token: null })).status, 401, 'signed in only');
});
