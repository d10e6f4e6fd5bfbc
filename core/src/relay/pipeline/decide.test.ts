import t from 'tap';
import { decide, eventStatus, merge } from './decide.ts';

const tr = (o: Partial<Parameters<typeof decide>[0]> = {}) => ({ id: 't', event_types: {}, quiet_hours: null, quiet_policies: {}, ...o });
const quiet = { start: '22:00', end: '07:00', timezone: 'Europe/Berlin' };
const night = new Date('2026-01-10T23:30:00Z'); // 00:30 in Berlin

t.test('disabled type wins over deferral', async (t) => {
  const d = decide(tr({ event_types: { thing_changed: false }, quiet_hours: quiet }), 'thing_changed', { quietHours: 'defer' }, night);
  t.equal(d.status, 'dropped');
});

t.test('quiet-hours policies', async (t) => {
  const d = decide(tr({ quiet_hours: quiet }), 'thing_changed', { quietHours: 'defer' }, night);
  t.equal(d.status, 'deferred');
  t.equal(d.status === 'deferred' && d.releaseAt.toISOString(), '2026-01-11T06:00:00.000Z');
  t.equal(decide(tr({ quiet_hours: quiet }), 'alarm_raised', { quietHours: 'send' }, night).status, 'queued');
  t.equal(decide(tr({ quiet_hours: quiet }), 'stale', { quietHours: 'drop' }, night).status, 'dropped');
  t.equal(decide(tr({ quiet_hours: quiet, quiet_policies: { alarm_raised: 'defer' } }), 'alarm_raised', { quietHours: 'send' }, night).status, 'deferred', 'tracker override');
  t.equal(decide(tr({ quiet_hours: quiet }), 'thing_changed', { quietHours: 'defer' }, new Date('2026-01-10T12:00:00Z')).status, 'queued', 'outside the window');
});

t.test('a critical event bypasses quiet hours unless the tracker names a policy for its type', async (t) => {
  t.equal(decide(tr({ quiet_hours: quiet }), 'alert_raised', { quietHours: 'defer' }, night, 'critical').status, 'queued', 'critical: sent at once');
  t.equal(decide(tr({ quiet_hours: quiet }), 'alert_raised', { quietHours: 'defer' }, night, 'warning').status, 'deferred', 'warning: deferred');
  t.equal(decide(tr({ quiet_hours: quiet, quiet_policies: { alert_raised: 'defer' } }), 'alert_raised', { quietHours: 'send' }, night, 'critical').status, 'deferred', 'the tracker\'s own policy wins');
  t.equal(decide(tr({ quiet_hours: quiet, event_types: { alert_raised: false } }), 'alert_raised', { quietHours: 'defer' }, night, 'critical').status, 'dropped', 'a disabled type stays off');
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
