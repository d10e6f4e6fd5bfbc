import t from 'tap';
import { decide, eventStatus, merge } from './decide.ts';

const tr = (o: Partial<Parameters<typeof decide>[0]> = {}) => ({
  id: 't',
  event_types: {},
  quiet_hours: null,
  quiet_policies: {},
  ...o,
});
const quiet = { start: '22:00', end: '07:00', timezone: 'Europe/Berlin' };
const night = new Date('2026-01-10T23:30:00Z'); // 00:30 in Berlin

t.test('disabled type wins over deferral', async (t) => {
  const d = decide(
    tr({ event_types: { thing_changed: false }, quiet_hours: quiet }),
    'thing_changed',
    { quietHours: 'defer' },
    night,
  );
  t.equal(d.status, 'dropped');
});

t.test('quiet-hours policies', async (t) => {
  const d = decide(tr({ quiet_hours: quiet }), 'thing_changed', { quietHours: 'defer' }, night);
  t.equal(d.status, 'deferred');
  t.equal(d.status === 'deferred' && d.releaseAt.toISOString(), '2026-01-11T06:00:00.000Z');
  t.equal(decide(tr({ quiet_hours: quiet }), 'alarm_raised', { quietHours: 'send' }, night).status, 'queued');
  t.equal(decide(tr({ quiet_hours: quiet }), 'stale', { quietHours: 'drop' }, night).status, 'dropped');
  t.equal(
    decide(
      tr({ quiet_hours: quiet, quiet_policies: { alarm_raised: 'defer' } }),
      'alarm_raised',
      { quietHours: 'send' },
      night,
    ).status,
    'deferred',
    'tracker override',
  );
  t.equal(
    decide(tr({ quiet_hours: quiet }), 'thing_changed', { quietHours: 'defer' }, new Date('2026-01-10T12:00:00Z'))
      .status,
    'queued',
    'outside the window',
  );
});

t.test('a critical event bypasses quiet hours unless the tracker names a policy for its type', async (t) => {
  t.equal(
    decide(tr({ quiet_hours: quiet }), 'alert_raised', { quietHours: 'defer' }, night, 'critical').status,
    'queued',
    'critical: sent at once',
  );
  t.equal(
    decide(tr({ quiet_hours: quiet }), 'alert_raised', { quietHours: 'defer' }, night, 'warning').status,
    'deferred',
    'warning: deferred',
  );
  t.equal(
    decide(
      tr({ quiet_hours: quiet, quiet_policies: { alert_raised: 'defer' } }),
      'alert_raised',
      { quietHours: 'send' },
      night,
      'critical',
    ).status,
    'deferred',
    "the tracker's own policy wins",
  );
  t.equal(
    decide(
      tr({ quiet_hours: quiet, event_types: { alert_raised: false } }),
      'alert_raised',
      { quietHours: 'defer' },
      night,
      'critical',
    ).status,
    'dropped',
    'a disabled type stays off',
  );
});

t.test('merge and event status', async (t) => {
  t.equal(merge({ status: 'dropped', reason: 'x' }, { status: 'queued' }).status, 'queued');
  t.equal(eventStatus([]), 'dropped');
  t.equal(eventStatus(['sent', 'failed']), 'partial');
  t.equal(eventStatus(['sent', 'dropped']), 'dispatched');
  t.equal(eventStatus(['deferred', 'sent']), 'deferred');
  t.equal(eventStatus(['queued', 'deferred']), 'pending');
  t.equal(eventStatus(['failed']), 'failed');
  t.equal(eventStatus(['in_digest', 'sent']), 'pending', 'waiting for its digest');
});

t.test(
  'the decision at the last quiet minute and the first free one, for windows that do and do not cross midnight',
  async (t) => {
    const overnight = { start: '22:00', end: '07:00', timezone: 'Europe/Berlin' }; // UTC+1 in January
    const daytime = { start: '09:30', end: '17:45', timezone: 'Europe/Berlin' };
    const at = (utc: string) => new Date(utc);
    const d = (w: typeof overnight, when: string) =>
      decide(tr({ quiet_hours: w }), 'thing_changed', { quietHours: 'defer' }, at(when));
    t.same(
      d(overnight, '2026-01-11T05:59:59Z'),
      { status: 'deferred', releaseAt: at('2026-01-11T06:00:00Z') },
      '06:59:59 local: deferred to 07:00',
    );
    t.same(d(overnight, '2026-01-11T06:00:00Z'), { status: 'queued' }, '07:00 local: sent');
    t.same(d(overnight, '2026-01-10T20:59:59Z'), { status: 'queued' }, '21:59:59 local: sent');
    t.same(
      d(overnight, '2026-01-10T21:00:00Z'),
      { status: 'deferred', releaseAt: at('2026-01-11T06:00:00Z') },
      '22:00 local: deferred to the next morning',
    );
    t.same(
      d(daytime, '2026-01-10T16:44:59Z'),
      { status: 'deferred', releaseAt: at('2026-01-10T16:45:00Z') },
      '17:44:59 local: deferred to 17:45',
    );
    t.same(d(daytime, '2026-01-10T16:45:00Z'), { status: 'queued' }, '17:45 local: sent');
    t.same(d(daytime, '2026-01-10T08:29:59Z'), { status: 'queued' }, '09:29:59 local: sent');
    t.same(
      d(daytime, '2026-01-10T08:30:00Z'),
      { status: 'deferred', releaseAt: at('2026-01-10T16:45:00Z') },
      '09:30 local: deferred',
    );
  },
);

t.test('reasons, defaults without a spec, and no quiet hours at all', async (t) => {
  t.same(decide(tr({ event_types: { thing_changed: false } }), 'thing_changed', undefined, night), {
    status: 'dropped',
    reason: 'event type thing_changed is disabled on this tracker',
  });
  t.same(decide(tr({ quiet_hours: quiet }), 'stale', { quietHours: 'drop' }, night), {
    status: 'dropped',
    reason: 'quiet hours (22:00-07:00 Europe/Berlin): stale is dropped when stale',
  });
  t.equal(
    decide(tr({ quiet_hours: quiet }), 'unknown_type', undefined, night).status,
    'deferred',
    'a type without a spec is deferred',
  );
  t.equal(
    decide(tr({ quiet_hours: quiet }), 'unknown_type', undefined, night, 'critical').status,
    'queued',
    'unless critical',
  );
  t.equal(decide(tr(), 'thing_changed', { quietHours: 'defer' }, night).status, 'queued', 'no quiet hours: sent');
  t.equal(
    decide(tr({ event_types: { thing_changed: true } }), 'thing_changed', { quietHours: 'defer' }, night).status,
    'queued',
    'an enabled type is sent',
  );
});

t.test('merge: the most eager decision wins whichever comes first; of two deferrals the earlier release', async (t) => {
  const q = { status: 'queued' } as const;
  const x = { status: 'dropped', reason: 'x' } as const;
  const early = { status: 'deferred', releaseAt: new Date('2026-01-11T06:00:00Z') } as const;
  const late = { status: 'deferred', releaseAt: new Date('2026-01-11T07:00:00Z') } as const;
  const same = { status: 'deferred', releaseAt: new Date('2026-01-11T06:00:00Z') } as const;
  t.equal(merge(undefined, x), x, 'the first decision');
  t.equal(merge(q, x), q);
  t.equal(merge(x, q), q);
  t.equal(merge(q, early), q);
  t.equal(merge(early, q), q);
  t.equal(merge(early, x), early);
  t.equal(merge(x, early), early);
  t.equal(merge(early, late), early);
  t.equal(merge(late, early), early);
  t.equal(merge(early, same), early, 'a tie keeps the first');
  t.equal(merge(same, early), same);
  const y = { status: 'dropped', reason: 'y' } as const;
  t.equal(merge(x, y), x, 'two drops keep the first');
  t.equal(merge(q, { status: 'queued' }), q, 'two queued keep the first');
});

t.test('event status from every kind of delivery status', async (t) => {
  t.equal(eventStatus(['sending']), 'pending');
  t.equal(eventStatus(['queued']), 'pending');
  t.equal(eventStatus(['in_digest']), 'pending');
  t.equal(eventStatus(['deferred']), 'deferred');
  t.equal(eventStatus(['deferred', 'failed']), 'deferred');
  t.equal(eventStatus(['sent']), 'dispatched');
  t.equal(eventStatus(['sent', 'sent']), 'dispatched');
  t.equal(eventStatus(['failed', 'dropped']), 'failed');
  t.equal(eventStatus(['dropped']), 'dropped');
  t.equal(eventStatus(['dropped', 'dropped']), 'dropped');
});
