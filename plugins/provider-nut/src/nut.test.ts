/**
 * Against a real upsd with the dummy-ups driver (Debian's nut-server, started by test/peers/nut.ts).
 * The subtests share one server and one provider instance and run in order, like a power story.
 */

import type { ProviderHarness } from '@herald/plugin-api/testing';
import { createTestHost } from '@herald/plugin-api/testing';
import t from 'tap';
import { startNut } from '../test/peers/nut.ts';
import { createNutProvider } from './index.ts';

const nut = await startNut({ 'ups.status': 'OB DISCHRG', 'battery.charge': '90', 'battery.runtime': '1500' });
t.teardown(() => nut.stop());

const plugin = createNutProvider({ connectTimeoutMs: 1000, replyTimeoutMs: 2000 });
const host = createTestHost();
const config = {
  host: '127.0.0.1',
  port: nut.port,
  ups_name: nut.ups,
  username: nut.username,
  password: nut.password,
  low_battery_percent: 20,
};
const h: ProviderHarness = await host.provider(plugin, config);
const poll = (x: ProviderHarness = h) => x.instance.poll!({ trackers: [], signal: x.abort.signal });
/** Types emitted since the last call. */
let seen = 0;
const fresh = () => {
  const out = h.emitted.slice(seen);
  seen = h.emitted.length;
  return out;
};

t.test('start checks the credentials; the first poll on battery seeds silently', async (t) => {
  await h.instance.start!();
  await poll();
  t.same(fresh(), [], 'no ups_on_battery on the first poll');
  const stored = [...h.store.data.values()].map((e) => e.value);
  t.match(
    stored,
    [{ baseline: { onBattery: true, status: 'OB DISCHRG' }, commLost: false }],
    'baseline kept in the instance store',
  );
});

t.test('OB → OL emits ups_online', async (t) => {
  host.clock.advance(90_000);
  await nut.setStatus({ 'ups.status': 'OL CHRG', 'battery.charge': '92' });
  await poll();
  const events = fresh();
  t.same(
    events.map((e) => e.type),
    ['ups_online'],
  );
  t.match(events[0]!.payload, {
    ups: 'test',
    server: `127.0.0.1:${nut.port}`,
    status: 'OL CHRG',
    status_flags: ['OL', 'CHRG'],
    battery_charge: 92,
    on_battery_seconds: 90,
  });
  await poll();
  t.same(fresh(), [], 'an unchanged status emits nothing');
});

t.test('OL → OB emits ups_on_battery', async (t) => {
  await nut.setStatus({ 'ups.status': 'OB DISCHRG', 'battery.charge': '80', 'battery.runtime': '1200' });
  await poll();
  const events = fresh();
  t.same(
    events.map((e) => e.type),
    ['ups_on_battery'],
  );
  t.match(events[0]!.payload, {
    status: 'OB DISCHRG',
    battery_charge: 80,
    battery_runtime_seconds: 1200,
    battery_runtime_minutes: 20,
  });
});

t.test('LB emits ups_low_battery', async (t) => {
  await nut.setStatus({ 'ups.status': 'OB DISCHRG LB', 'battery.charge': '35' });
  await poll();
  const events = fresh();
  t.same(
    events.map((e) => e.type),
    ['ups_low_battery'],
  );
  t.match(events[0]!.payload, { reason: 'ups_flag', threshold_percent: 20, battery_charge: 35 });
});

t.test('RB emits ups_battery_replace (with the power return)', async (t) => {
  await nut.setStatus({ 'ups.status': 'OL CHRG RB', 'battery.charge': '40' });
  await poll();
  t.same(
    fresh().map((e) => e.type),
    ['ups_online', 'ups_battery_replace'],
  );
  await poll();
  t.same(fresh(), [], 'reported once');
});

t.test('a wrong password is ERR ACCESS-DENIED → AuthFailedError', async (t) => {
  const bad = await host.provider(plugin, { ...config, password: 'not-the-password' });
  await t.rejects(
    async () => {
      await bad.instance.start!();
    },
    { code: 'AUTH_FAILED', message: /ACCESS-DENIED/ },
  );
  await t.rejects(poll(bad), { code: 'AUTH_FAILED' });
  t.same(bad.emitted, [], 'an auth failure is not a comm loss');
  t.match(await bad.instance.health!(), { status: 'error' });
});

t.test('an unknown UPS is ERR UNKNOWN-UPS → ConfigError', async (t) => {
  const anon = await host.provider(plugin, { host: '127.0.0.1', port: nut.port, ups_name: 'nosuchups' });
  await t.rejects(
    async () => {
      await anon.instance.start!();
    },
    { code: 'CONFIG', message: /UNKNOWN-UPS/ },
  );
  await t.rejects(poll(anon), { code: 'CONFIG' });
});

t.test('upsd stopped → ups_comm_lost once, then ups_comm_restored', async (t) => {
  await nut.stopServer();
  await t.rejects(poll(), { code: 'NOT_READY', message: /ECONNREFUSED/ });
  await t.rejects(poll(), { code: 'NOT_READY' }, 'every failed poll throws so the core counts it');
  const lost = fresh();
  t.same(
    lost.map((e) => e.type),
    ['ups_comm_lost'],
    'emitted once',
  );
  t.match(lost[0]!.payload, { ups: 'test', reason: /ECONNREFUSED/ });
  host.clock.advance(45_000);
  await nut.startServer();
  await poll();
  const back = fresh();
  t.same(
    back.map((e) => e.type),
    ['ups_comm_restored'],
  );
  t.match(back[0]!.payload, { downtime_seconds: 45, status: 'OL CHRG RB' });
});
