import t from 'tap';
import { errCode, NutConnectionError, parseVarLine, quoteArg, tokenize } from './protocol.ts';
import type { UpsBaseline } from './status.ts';
import { isLow, readingFrom, seedBaseline, transitions } from './status.ts';

t.test('tokenizer honours quotes and backslash escapes', async (t) => {
  t.same(tokenize('VAR su700 ups.mfr "American Power Conversion"'), [
    'VAR',
    'su700',
    'ups.mfr',
    'American Power Conversion',
  ]);
  t.same(tokenize('VAR u x "say \\"hi\\" \\\\ ok"'), ['VAR', 'u', 'x', 'say "hi" \\ ok']);
  t.same(tokenize('VAR u x ""'), ['VAR', 'u', 'x', '']);
  t.throws(() => tokenize('VAR u x "open'), NutConnectionError);
  t.same(parseVarLine('VAR test ups.status "OB DISCHRG"', 'test'), ['ups.status', 'OB DISCHRG']);
  t.equal(parseVarLine('VAR other ups.status "OL"', 'test'), undefined);
  t.equal(errCode('ERR ACCESS-DENIED'), 'ACCESS-DENIED');
  t.equal(errCode('OK'), undefined);
});

t.test('arguments are quoted when needed and line breaks are refused', async (t) => {
  t.equal(quoteArg('monuser'), 'monuser');
  t.equal(quoteArg('pass word'), '"pass word"');
  t.equal(quoteArg('a"b\\c'), '"a\\"b\\\\c"');
  t.equal(quoteArg(''), '""');
  t.throws(() => quoteArg('x\nLOGOUT'), NutConnectionError);
});

const reading = (status: string, charge?: number) =>
  readingFrom(
    new Map([
      ['ups.status', status],
      ...(charge !== undefined ? [['battery.charge', String(charge)] as [string, string]] : []),
      ['battery.runtime', '600'],
    ]),
  )!;
const at = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s));

t.test('readings parse flags and numbers', async (t) => {
  t.match(reading('OB DISCHRG', 80), {
    status: 'OB DISCHRG',
    flags: ['OB', 'DISCHRG'],
    charge: 80,
    runtimeSeconds: 600,
  });
  t.equal(readingFrom(new Map([['battery.charge', '5']])), undefined, 'no ups.status, no reading');
});

t.test('transitions: power loss, return, low battery with hysteresis, replacement', async (t) => {
  let base: UpsBaseline = seedBaseline(reading('OB DISCHRG', 90), 20, at(0));
  t.equal(base.onBattery, true, 'the seed remembers being on battery (and emits nothing: no events at seed)');
  let step = transitions(base, reading('OL CHRG', 90), 20, at(30));
  t.same(step.events, [{ type: 'ups_online', extra: { on_battery_seconds: 30 } }]);
  base = step.next;
  step = transitions(base, reading('OL', 95), 20, at(40));
  t.same(step.events, [], 'nothing changes, nothing is sent');
  step = transitions(step.next, reading('OB DISCHRG', 50), 20, at(50));
  t.same(
    step.events.map((e) => e.type),
    ['ups_on_battery'],
  );
  step = transitions(step.next, reading('OB DISCHRG', 19), 20, at(60));
  t.same(step.events, [
    { type: 'ups_low_battery', extra: { threshold_percent: 20, reason: 'charge_below_threshold' } },
  ]);
  step = transitions(step.next, reading('OB DISCHRG', 21), 20, at(70));
  t.same(step.events, [], 'still low inside the hysteresis band');
  step = transitions(step.next, reading('OB DISCHRG LB', 18), 20, at(80));
  t.same(step.events, [], 'LB on an already low battery is not repeated');
  step = transitions(step.next, reading('OFF', 0), 20, at(90));
  t.same(step.events, [], 'the UPS switched off: still counted as on battery');
  step = transitions(step.next, reading('OL CHRG RB', 30), 20, at(120));
  t.same(
    step.events.map((e) => e.type),
    ['ups_online', 'ups_battery_replace'],
  );
  t.same(step.events[0]!.extra, { on_battery_seconds: 70 });
  step = transitions(step.next, reading('OL RB', 40), 20, at(130));
  t.same(step.events, [], 'RB is reported once');
  step = transitions(step.next, reading('OL LB', 40), 20, at(140));
  t.same(step.events, [{ type: 'ups_low_battery', extra: { threshold_percent: 20, reason: 'ups_flag' } }]);
  t.equal(isLow(reading('OL', 24), 20, true), true);
  t.equal(isLow(reading('OL', 25), 20, true), false);
});
