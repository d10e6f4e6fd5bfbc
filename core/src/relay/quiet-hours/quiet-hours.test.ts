import t from 'tap';
import { isQuiet, quietEnd, quietWindowProblem } from './quiet-hours.ts';

t.test('window crossing midnight in a non-UTC zone', async (t) => {
  const w = { start: '22:00', end: '07:00', timezone: 'Europe/Moscow' }; // UTC+3
  t.equal(isQuiet(w, new Date('2026-03-10T18:59:00Z')), false, '21:59 local is not quiet');
  t.equal(isQuiet(w, new Date('2026-03-10T19:00:00Z')), true, '22:00 local is quiet');
  t.equal(isQuiet(w, new Date('2026-03-10T23:30:00Z')), true, '02:30 local is quiet');
  t.equal(isQuiet(w, new Date('2026-03-11T03:59:00Z')), true, '06:59 local is quiet');
  t.equal(isQuiet(w, new Date('2026-03-11T04:00:00Z')), false, '07:00 local is not quiet');
  t.equal(
    quietEnd(w, new Date('2026-03-10T19:30:00Z')).toISOString(),
    '2026-03-11T04:00:00.000Z',
    'ends next morning 07:00 local',
  );
  t.equal(
    quietEnd(w, new Date('2026-03-11T01:00:00Z')).toISOString(),
    '2026-03-11T04:00:00.000Z',
    'after midnight ends the same morning',
  );
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

/** Local wall-clock times in Asia/Tokyo (UTC+9, no DST) as instants. */
const tokyo = (d: string, hms: string) => new Date(`${d}T${hms}+09:00`);

t.test('a window that does not cross midnight: its last quiet minute and its first free one', async (t) => {
  const w = { start: '12:30', end: '14:15', timezone: 'Asia/Tokyo' };
  t.equal(isQuiet(w, tokyo('2026-06-01', '12:29:59')), false, '12:29:59 is before the window');
  t.equal(isQuiet(w, tokyo('2026-06-01', '12:30:00')), true, 'the start minute is quiet');
  t.equal(isQuiet(w, tokyo('2026-06-01', '14:14:00')), true, '14:14, the last quiet minute');
  t.equal(isQuiet(w, tokyo('2026-06-01', '14:14:59')), true, 'to its last second');
  t.equal(isQuiet(w, tokyo('2026-06-01', '14:15:00')), false, '14:15, the end minute, is free');
  t.equal(isQuiet(w, tokyo('2026-06-01', '23:59:00')), false, 'late evening is free');
  t.equal(isQuiet(w, tokyo('2026-06-01', '00:00:00')), false, 'and so is midnight');
  t.equal(
    quietEnd(w, tokyo('2026-06-01', '14:14:59')).toISOString(),
    tokyo('2026-06-01', '14:15:00').toISOString(),
    'the window ends at 14:15 the same day',
  );
  t.equal(
    quietEnd(w, tokyo('2026-06-01', '14:15:00')).toISOString(),
    tokyo('2026-06-02', '14:15:00').toISOString(),
    "from the end instant itself, the next end is the next day's",
  );
});

t.test('a window that crosses midnight: its last quiet minute and its first free one, on both days', async (t) => {
  const w = { start: '22:45', end: '07:10', timezone: 'Asia/Tokyo' };
  t.equal(isQuiet(w, tokyo('2026-06-01', '22:44:59')), false, '22:44:59 is free');
  t.equal(isQuiet(w, tokyo('2026-06-01', '22:45:00')), true, '22:45 is quiet');
  t.equal(isQuiet(w, tokyo('2026-06-01', '23:59:59')), true, 'the last second before midnight is quiet');
  t.equal(isQuiet(w, tokyo('2026-06-02', '00:00:00')), true, 'midnight is quiet');
  t.equal(isQuiet(w, tokyo('2026-06-02', '07:09:00')), true, '07:09, the last quiet minute');
  t.equal(isQuiet(w, tokyo('2026-06-02', '07:09:59')), true, 'to its last second');
  t.equal(isQuiet(w, tokyo('2026-06-02', '07:10:00')), false, '07:10, the end minute, is free');
  t.equal(isQuiet(w, tokyo('2026-06-02', '12:00:00')), false, 'midday is free');
  t.equal(
    quietEnd(w, tokyo('2026-06-01', '22:45:00')).toISOString(),
    tokyo('2026-06-02', '07:10:00').toISOString(),
    'from the evening: the next morning',
  );
  t.equal(
    quietEnd(w, tokyo('2026-06-02', '07:09:59')).toISOString(),
    tokyo('2026-06-02', '07:10:00').toISOString(),
    'from the last quiet second: one second later',
  );
});

t.test('windows that end or start at midnight', async (t) => {
  const toMidnight = { start: '21:00', end: '00:00', timezone: 'Asia/Tokyo' };
  t.equal(isQuiet(toMidnight, tokyo('2026-06-01', '23:59:59')), true, '23:59 is the last quiet minute');
  t.equal(isQuiet(toMidnight, tokyo('2026-06-02', '00:00:00')), false, 'midnight is free');
  t.equal(isQuiet(toMidnight, tokyo('2026-06-01', '20:59:59')), false);
  t.equal(
    quietEnd(toMidnight, tokyo('2026-06-01', '21:30:00')).toISOString(),
    tokyo('2026-06-02', '00:00:00').toISOString(),
  );
  const fromMidnight = { start: '00:00', end: '06:00', timezone: 'Asia/Tokyo' };
  t.equal(isQuiet(fromMidnight, tokyo('2026-06-01', '23:59:59')), false, '23:59 is free');
  t.equal(isQuiet(fromMidnight, tokyo('2026-06-02', '00:00:00')), true, 'midnight is quiet');
  t.equal(isQuiet(fromMidnight, tokyo('2026-06-02', '05:59:59')), true);
  t.equal(isQuiet(fromMidnight, tokyo('2026-06-02', '06:00:00')), false);
});

t.test('validation names the field and needs the whole HH:MM', async (t) => {
  t.equal(
    quietWindowProblem({ start: '22:00', end: '24:00', timezone: 'UTC' }),
    'quiet_hours.end "24:00" must be HH:MM (00:00-23:59)',
  );
  t.equal(
    quietWindowProblem({ start: '7:00', end: '08:00', timezone: 'UTC' }),
    'quiet_hours.start "7:00" must be HH:MM (00:00-23:59)',
  );
  t.match(
    quietWindowProblem({ start: 'x07:00', end: '08:00', timezone: 'UTC' }),
    /quiet_hours.start/,
    'nothing before HH',
  );
  t.match(
    quietWindowProblem({ start: '07:00', end: '08:001', timezone: 'UTC' }),
    /quiet_hours.end/,
    'nothing after MM',
  );
  t.match(quietWindowProblem({ start: '07:60', end: '08:00', timezone: 'UTC' }), /quiet_hours.start/);
  t.equal(quietWindowProblem({ start: '23:59', end: '00:00', timezone: 'UTC' }), undefined, 'the extremes are valid');
  t.equal(quietWindowProblem({ start: '00:00', end: '23:59', timezone: 'UTC' }), undefined);
});
