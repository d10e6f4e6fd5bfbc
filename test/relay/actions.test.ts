import { Cron } from 'croner';
import t from 'tap';
import { checkSchedule } from '../../core/src/relay/routes/schedule.ts';
import { exampleChain, startService, startSink } from '../helpers/service.ts';

t.test('schedule rules', async (t) => {
  const ok = (expr: string, tz = 'UTC') => checkSchedule(expr, tz, new Date('2026-03-01T00:00:00Z'));
  t.equal(ok('* * * * *').ok, true, 'every minute is the limit');
  t.equal(ok('0 9 * * 1-5', 'Europe/Berlin').ok, true);
  t.equal(ok('30 0 9 * * *').ok, true, 'six fields with one second');
  t.equal(ok('@daily').ok, true, 'nicknames');
  for (const expr of ['*/30 * * * * *', '* * * * * *', '0,30 * * * * *', '0-5 0 0 * * *', '*/10 */2 * * * *']) {
    const r = ok(expr);
    t.equal(r.ok, false, `${expr} refused`);
    if (!r.ok) t.match(r.problem, /more often than once a minute/);
  }
  for (const expr of ['not a cron', '61 * * * *', '* * *', '0 0 0 * * * *', '0 0 31 2 *', ''])
    t.equal(ok(expr).ok, false, `${JSON.stringify(expr)} refused`);
});

t.test('actions: CRUD, cron validation, config ownership, run now', async (t) => {
  const s = await startService();
  const sink = await startSink();
  t.teardown(async () => {
    await s.stop();
    await sink.close();
  });
  const token = s.admin.token;
  const { tracker: tr, target: tg } = await exampleChain(s, sink.url);

  const digest = await s.request('POST', '/api/actions', {
    token,
    body: {
      name: 'Morning',
      kind: 'digest',
      schedule: '0 9 * * 1-5',
      timezone: 'Europe/Berlin',
      config: { tracker_id: tr.id },
    },
  });
  t.equal(digest.status, 201, 'created');
  t.match(digest.body, {
    name: 'Morning',
    kind: 'digest',
    schedule: '0 9 * * 1-5',
    timezone: 'Europe/Berlin',
    enabled: true,
    config: { tracker_id: tr.id },
    last_run_at: null,
  });
  const expected = new Cron('0 9 * * 1-5', { timezone: 'Europe/Berlin', paused: true }).nextRun()!;
  t.equal(digest.body.next_run_at, expected.toISOString(), 'next run computed in the action zone');

  const msg = await s.request('POST', '/api/actions', {
    token,
    body: {
      name: 'Hello',
      kind: 'message',
      schedule: '*/5 * * * *',
      config: { target_ids: [tg.id], title: 'Hi', body: 'Hello on {{date}}' },
    },
  });
  t.equal(msg.status, 201);
  t.equal(msg.body.timezone, 'UTC', 'UTC by default');

  const bad = async (body: Record<string, unknown>, re: RegExp, what: string) => {
    const r = await s.request('POST', '/api/actions', {
      token,
      body: { name: 'X', kind: 'digest', schedule: '0 * * * *', config: { tracker_id: tr.id }, ...body },
    });
    t.equal(r.status, 422, what);
    t.match(r.body.detail, re, `${what}: detail`);
  };
  await bad({ schedule: '*/30 * * * * *' }, /more often than once a minute/, 'every 30 seconds');
  await bad({ schedule: '* * * * * *' }, /more often than once a minute/, 'every second');
  await bad({ schedule: 'every minute' }, /schedule/, 'malformed cron');
  await bad({ schedule: '99 * * * *' }, /not a valid cron/, 'minute out of range');
  await bad({ schedule: '0 0 31 2 *' }, /never fires/, 'never fires');
  await bad({ timezone: 'Moon/Crater' }, /IANA/, 'unknown zone');
  await bad({ kind: 'reboot' }, /kind/, 'unknown kind');
  await bad({ config: {} }, /digest/, 'digest without tracker');
  await bad({ config: { tracker_id: tr.id, extra: 1 } }, /digest/, 'digest with an unknown field');
  await bad(
    { config: { tracker_id: '01900000-0000-7000-8000-000000000000' } },
    /not name one of your trackers/,
    'unknown tracker',
  );
  await bad({ kind: 'message', config: { target_ids: [], title: 'a', body: 'b' } }, /message/, 'no targets');
  await bad(
    { kind: 'message', config: { target_ids: Array.from({ length: 21 }, () => tg.id), title: 'a', body: 'b' } },
    /message/,
    'over 20 targets',
  );
  await bad(
    { kind: 'message', config: { target_ids: ['01900000-0000-7000-8000-000000000000'], title: 'a', body: 'b' } },
    /not yours/,
    'unknown target',
  );
  for (const field of ['id', 'user_id', 'last_run_at', 'next_run_at', 'last_status', 'created_at'])
    await bad({ [field]: 'x' }, new RegExp(field), `${field} refused`);

  const list = await s.request('GET', '/api/actions', { token });
  t.same(
    list.body.actions.map((a: any) => a.name),
    ['Hello', 'Morning'],
  );

  const off = await s.request('PATCH', `/api/actions/${digest.body.id}`, { token, body: { enabled: false } });
  t.equal(off.status, 200);
  t.equal(off.body.next_run_at, null, 'a disabled action has no next run');
  const on = await s.request('PATCH', `/api/actions/${digest.body.id}`, {
    token,
    body: { enabled: true, schedule: '15 6 * * *', timezone: 'UTC' },
  });
  t.equal(on.body.next_run_at, new Cron('15 6 * * *', { timezone: 'UTC', paused: true }).nextRun()!.toISOString());
  t.equal(
    (await s.request('PATCH', `/api/actions/${digest.body.id}`, { token, body: { schedule: '*/20 * * * * *' } }))
      .status,
    422,
    'sub-minute on update',
  );
  t.equal(
    (await s.request('PATCH', `/api/actions/${digest.body.id}`, { token, body: { kind: 'message' } })).status,
    422,
    'kind change needs a matching config',
  );
  t.equal(
    (await s.request('PATCH', `/api/actions/${digest.body.id}`, { token, body: { last_status: 'ok' } })).status,
    422,
  );
  t.equal(
    (await s.request('GET', `/api/actions/${digest.body.id}`, { token })).body.schedule,
    '15 6 * * *',
    'refused updates changed nothing',
  );

  const run = await s.request('POST', `/api/actions/${msg.body.id}/run`, { token });
  t.equal(run.status, 200);
  t.equal(run.body.id, msg.body.id);
  t.equal(run.body.last_status, 'ok', run.body.last_error ?? 'ran');
  t.type(run.body.last_run_at, 'string');
  const got = await sink.waitFor(1);
  t.equal(got[0]?.body.title, 'Hi', 'the message went out');

  t.equal((await s.request('DELETE', `/api/actions/${msg.body.id}`, { token })).status, 204);
  t.equal((await s.request('GET', `/api/actions/${msg.body.id}`, { token })).status, 404);
  t.equal((await s.request('POST', `/api/actions/${msg.body.id}/run`, { token })).status, 404);
});
