import t from 'tap';
import { isQuiet, quietEnd, quietWindowProblem } from './quiet-hours.ts';

t.test('window crossing midnight in a non-UTC zone', async (t) => {
  const w = { start: '22:00', end: '07:00', timezone: 'Europe/Moscow' }; // UTC+3
  t.equal(isQuiet(w, new Date('2026-03-10T18:59:00Z')), false, '21:59 local is not quiet');
  t.equal(isQuiet(w, new Date('2026-03-10T19:00:00Z')), true, '22:00 local is quiet');
  t.equal(isQuiet(w, new Date('2026-03-10T23:30:00Z')), true, '02:30 local is quiet');
  t.equal(isQuiet(w, new Date('2026-03-11T03:59:00Z')), true, '06:59 local is quiet');
  t.equal(isQuiet(w, new Date('2026-03-11T04:00:00Z')), false, '07:00 local is not quiet');
  t.equal(quietEnd(w, new Date('2026-03-10T19:30:00Z')).toISOString(), '2026-03-11T04:00:00.000Z', 'ends next morning 07:00 local');
  t.equal(quietEnd(w, new Date('2026-03-11T01:00:00Z')).toISOString(), '2026-03-11T04:00:00.000Z', 'after midnight ends the same morning');
});

t.test('same-day window and DST', async (t) => {
  const w = { start: '12:00', end: '14:00', timezone: 'America/New_York' };
  t.equal(isQuiet(w, new Date('2026-07-01T16:30:00Z')), true, '12:30 EDT');
  t.equal(isQuiet(w, new Date('2026-01-01T16:30:00Z')), false, '11:30 EST');
  t.equal(quietEnd(w, new Date('2026-07-01T16:30:00Z')).toISOString(), '2026-07-01T18:00:00.000Z');
  const night = { start: '23:00', end: '03:00', timezone: 'America/New_York' };
  // DST starts 2026-03-08 at 02:00 local; 03:00 EDT = 07:00Z
  t.equal(quietEnd(night, new Date('2026-03-08T05:00:00Z')).toISOString(), '2026-03-08T07:00:00.000Z');
});

t.test('validation', async (t) => {
  t.match(quietWindowProblem({ start: '25:00', end: '07:00', timezone: 'UTC' }), /HH:MM/);
  t.match(quietWindowProblem({ start: '07:00', end: '07:00', timezone: 'UTC' }), /differ/);
  t.match(quietWindowProblem({ start: '22:00', end: '07:00', timezone: 'Mars/Olympus' }), /IANA/);
  t.equal(quietWindowProblem({ start: '22:00', end: '07:00', timezone: 'Asia/Tokyo' }), undefined);
});
