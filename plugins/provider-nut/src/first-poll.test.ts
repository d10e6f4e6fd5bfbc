/**
 * The first poll records the UPS as it is, silently, whatever state it is in: a UPS already on low
 * battery, or already flagged for a new battery, stays silent on an unchanged second poll, and only
 * a real change afterwards is reported. Through the provider against the fake upsd.
 */

import { createTestHost } from '@herald/plugin-api/testing';
import t, { type Test } from 'tap';
import { startFakeNut } from '../test/fakes/nut.ts';
import { createNutProvider } from './index.ts';

async function upsStartingWith(t: Test, vars: Record<string, string>) {
  const fake = await startFakeNut({ vars });
  t.teardown(() => fake.close());
  const h = await createTestHost().provider(createNutProvider({ replyTimeoutMs: 500 }), {
    host: '127.0.0.1',
    port: fake.port,
    ups_name: 'test',
    low_battery_percent: 20,
  });
  const poll = async () => {
    const before = h.emitted.length;
    await h.instance.poll!({ trackers: [], signal: h.abort.signal });
    return h.emitted.slice(before);
  };
  const baseline = () =>
    ([...h.store.data.values()][0]?.value as { baseline: Record<string, unknown> } | undefined)?.baseline;
  return { fake, poll, baseline };
}

t.test('a UPS already flagging low battery (LB) at the first poll: silent then, silent when unchanged', async (t) => {
  const u = await upsStartingWith(t, { 'ups.status': 'OB DISCHRG LB', 'battery.charge': '35' });
  t.same(await u.poll(), [], 'the first poll only records');
  t.match(u.baseline(), { onBattery: true, low: true, replace: false, status: 'OB DISCHRG LB' }, 'recorded as low');
  t.same(await u.poll(), [], 'an unchanged second poll emits nothing');
  u.fake.vars['ups.status'] = 'OL CHRG';
  u.fake.vars['battery.charge'] = '60';
  t.same(
    (await u.poll()).map((e) => e.type),
    ['ups_online'],
    'power back: only ups_online',
  );
  u.fake.vars['ups.status'] = 'OL CHRG LB';
  t.match(
    await u.poll(),
    [{ type: 'ups_low_battery', payload: { reason: 'ups_flag', threshold_percent: 20 } }],
    'low again after recovering: reported',
  );
});

t.test(
  'a UPS whose charge is under the threshold at the first poll (no LB flag): silent, then only a real change',
  async (t) => {
    const u = await upsStartingWith(t, { 'ups.status': 'OB DISCHRG', 'battery.charge': '19' });
    t.same(await u.poll(), []);
    t.match(u.baseline(), { low: true }, 'below 20 % is low');
    u.fake.vars['battery.charge'] = '18';
    t.same(await u.poll(), [], 'still low: nothing');
    u.fake.vars['battery.charge'] = '24';
    t.same(await u.poll(), [], 'inside the 5-point hysteresis: still low, nothing');
    u.fake.vars['battery.charge'] = '25';
    t.same(await u.poll(), [], 'recovered: re-armed silently');
    u.fake.vars['battery.charge'] = '19';
    t.match(
      await u.poll(),
      [{ type: 'ups_low_battery', payload: { reason: 'charge_below_threshold', battery_charge: 19 } }],
      'low again: reported',
    );
  },
);

t.test('a charge exactly at the threshold at the first poll is not low', async (t) => {
  const u = await upsStartingWith(t, { 'ups.status': 'OB DISCHRG', 'battery.charge': '20' });
  t.same(await u.poll(), []);
  t.match(u.baseline(), { low: false });
  u.fake.vars['battery.charge'] = '19';
  t.same(
    (await u.poll()).map((e) => e.type),
    ['ups_low_battery'],
    'one point lower is reported',
  );
});

t.test(
  'a UPS already asking for a new battery (RB) at the first poll: silent then, silent when unchanged',
  async (t) => {
    const u = await upsStartingWith(t, { 'ups.status': 'OL RB', 'battery.charge': '100' });
    t.same(await u.poll(), []);
    t.match(u.baseline(), { onBattery: false, low: false, replace: true });
    t.same(await u.poll(), [], 'an unchanged second poll emits nothing');
    u.fake.vars['ups.status'] = 'OL';
    t.same(await u.poll(), [], 'the flag cleared (battery replaced): nothing');
    u.fake.vars['ups.status'] = 'OL RB';
    t.same(
      (await u.poll()).map((e) => e.type),
      ['ups_battery_replace'],
      'flagged again: reported',
    );
  },
);

t.test('a healthy UPS at the first poll reports low battery and replacement when they come', async (t) => {
  const u = await upsStartingWith(t, { 'ups.status': 'OL', 'battery.charge': '100' });
  t.same(await u.poll(), []);
  t.match(u.baseline(), { onBattery: false, low: false, replace: false });
  u.fake.vars['ups.status'] = 'OL LB RB';
  t.same(
    (await u.poll()).map((e) => e.type),
    ['ups_low_battery', 'ups_battery_replace'],
  );
});
