import t from 'tap';
import { nextRun } from '../../core/src/relay/actions/runner.ts';
import { cronOf } from '../../core/src/relay/routes/schedule.ts';
import { startService } from '../helpers/service.ts';

t.test(
  'schedule preview: the next five runs as the scheduler computes them, or why the schedule is refused',
  async (t) => {
    const s = await startService();
    t.teardown(() => s.stop());
    const token = s.admin.token;
    s.clock.set('2026-03-27T10:00:00Z');
    const preview = (schedule: string, timezone?: string) =>
      s.request(
        'GET',
        `/api/actions/schedule-preview?${new URLSearchParams({ schedule, ...(timezone ? { timezone } : {}) })}`,
        { token },
      );

    const ok = await preview('30 2 * * *', 'Europe/Berlin');
    t.equal(ok.status, 200, ok.text);
    // Across the spring change in Berlin (29 March): 02:30 does not exist that night.
    t.same(
      ok.body.next,
      cronOf('30 2 * * *', 'Europe/Berlin')
        .nextRuns(5, new Date('2026-03-27T10:00:00Z'))
        .map((d) => d.toISOString()),
      'the same cron library and options',
    );
    t.equal(ok.body.next.length, 5);
    // The runner moves next_run_at on with the same computation: chaining it gives the same five.
    const chain: string[] = [];
    let from = new Date('2026-03-27T10:00:00Z');
    for (let i = 0; i < 5; i++) {
      const n = nextRun('30 2 * * *', 'Europe/Berlin', from)!;
      chain.push(n.toISOString());
      from = n;
    }
    t.same(ok.body.next, chain, 'preview and runner agree');
    t.equal(ok.body.next[0], '2026-03-28T01:30:00.000Z', 'in the action zone (CET)');

    const utc = await preview('*/15 * * * *');
    t.same(
      utc.body.next,
      [
        '2026-03-27T10:15:00.000Z',
        '2026-03-27T10:30:00.000Z',
        '2026-03-27T10:45:00.000Z',
        '2026-03-27T11:00:00.000Z',
        '2026-03-27T11:15:00.000Z',
      ],
      'UTC by default',
    );
    t.equal((await preview('@daily')).body.next[0], '2026-03-28T00:00:00.000Z', 'nicknames');

    const refused = async (schedule: string, code: string, params: Record<string, unknown>, timezone?: string) => {
      const r = await preview(schedule, timezone);
      t.equal(r.status, 422, `${schedule}: 422`);
      t.match(r.body, { code, params }, `${schedule}: ${code}`);
      t.type(r.body.detail, 'string');
      return r;
    };
    const sub = await refused('*/30 * * * * *', 'schedule_sub_minute', { schedule: '*/30 * * * * *' });
    t.match(sub.body.detail, /more often than once a minute/);
    t.match(sub.body.errors, [{ path: 'querystring/schedule', code: 'schedule_sub_minute' }]);
    await refused('* * * * * *', 'schedule_sub_minute', {});
    await refused('0,30 * * * * *', 'schedule_sub_minute', {});
    await refused('* *', 'schedule_field_count', { count: 2 });
    await refused('61 * * * *', 'schedule_malformed', { schedule: '61 * * * *', reason: String });
    await refused('0 0 31 2 *', 'schedule_never_fires', {});
    await refused('0 9 * * *', 'invalid_timezone', { timezone: 'Moon/Crater' }, 'Moon/Crater');

    // The same codes when saving an action.
    const tg = (
      await s.request('POST', '/api/targets', {
        token,
        body: { kind: 'recorder', name: 'R', config: { url: 'http://127.0.0.1:9/' }, locale: 'en' },
      })
    ).body;
    const create = await s.request('POST', '/api/actions', {
      token,
      body: {
        name: 'X',
        kind: 'message',
        schedule: '*/10 * * * * *',
        config: { target_ids: [tg.id], title: 'a', body: 'b' },
      },
    });
    t.equal(create.status, 422);
    t.match(create.body, {
      code: 'schedule_sub_minute',
      errors: [{ path: 'body/schedule', code: 'schedule_sub_minute' }],
    });

    t.equal(
      (await s.request('GET', '/api/actions/schedule-preview?schedule=*%20*%20*%20*%20*')).status,
      401,
      'needs a login',
    );
    t.equal((await s.request('GET', '/api/actions/schedule-preview', { token })).status, 422, 'schedule is required');
  },
);
