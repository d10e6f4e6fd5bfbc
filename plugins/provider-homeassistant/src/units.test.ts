import t from 'tap';
import { websocketUrl } from './config.ts';
import type { StateChange } from './debounce.ts';
import { EntityDebouncer } from './debounce.ts';
import { compileEntityFilter, globToRegExp } from './entity-filter.ts';
import { dataExcerpt, servicePayload, toStateChange } from './mapping.ts';
import { backoffDelay } from './supervisor.ts';

t.test('globs match whole entity ids', async (t) => {
  const re = globToRegExp('sensor.*_temperature');
  t.ok(re.test('sensor.outdoor_temperature'));
  t.notOk(re.test('sensor.outdoor_temperature_max'));
  t.notOk(re.test('binary_sensor.x_temperature'), 'the dot is literal and the glob is anchored');
  t.ok(globToRegExp('light.room_?').test('light.room_1'));
  t.notOk(globToRegExp('light.room_?').test('light.room_12'));
});

t.test('entity filter: include domains or globs, exclude wins, no include means all', async (t) => {
  const all = compileEntityFilter(undefined);
  t.ok(all('switch.anything'));
  const f = compileEntityFilter({
    include_domains: ['light'],
    include_entities: ['sensor.*_temperature'],
    exclude_entities: ['light.hall*'],
    min_interval_seconds: 30,
  });
  t.ok(f('light.kitchen'));
  t.ok(f('sensor.attic_temperature'));
  t.notOk(f('sensor.attic_humidity'));
  t.notOk(f('light.hallway'));
  const onlyExclude = compileEntityFilter({ exclude_entities: ['sun.sun'], min_interval_seconds: 30 });
  t.ok(onlyExclude('light.kitchen'));
  t.notOk(onlyExclude('sun.sun'));
});

t.test('debouncer sends the first change, holds the rest and sends the latest differing state', async (t) => {
  let now = 0;
  const sent: StateChange[] = [];
  const d = new EntityDebouncer(
    100,
    (c) => sent.push(c),
    () => now,
  );
  const change = (from: string, to: string): StateChange => ({
    entityId: 'light.a',
    friendlyName: 'A',
    oldState: from,
    newState: to,
  });
  d.offer(change('off', 'on'));
  t.equal(sent.length, 1);
  now = 10;
  d.offer(change('on', 'off'));
  now = 20;
  d.offer(change('off', 'on'));
  await new Promise((r) => setTimeout(r, 150));
  t.equal(sent.length, 1, 'a flip back to the state already sent sends nothing');
  now = 300;
  d.offer(change('on', 'off'));
  t.equal(sent.length, 2, 'after the window the next change goes at once');
  now = 310;
  d.offer(change('off', 'dim'));
  now = 320;
  d.offer(change('dim', 'bright'));
  await new Promise((r) => setTimeout(r, 150));
  t.equal(sent.length, 3);
  t.match(sent[2], { oldState: 'off', newState: 'bright' }, 'the trailing change is relative to the last state sent');
  d.clear();
});

t.test('debouncer with interval 0 sends everything', async (t) => {
  const sent: StateChange[] = [];
  const d = new EntityDebouncer(0, (c) => sent.push(c));
  for (let i = 0; i < 3; i++)
    d.offer({ entityId: 'x.y', friendlyName: 'y', oldState: String(i), newState: String(i + 1) });
  t.equal(sent.length, 3);
});

t.test('state_changed mapping ignores attribute-only updates and appearing entities', async (t) => {
  const ev = (o: unknown, n: unknown) => ({
    event_type: 'state_changed',
    data: { entity_id: 'sensor.t', old_state: o, new_state: n },
  });
  t.equal(toStateChange(ev({ state: '1', attributes: {} }, { state: '1', attributes: { x: 2 } })), null);
  t.equal(toStateChange(ev(null, { state: '1' })), null);
  t.equal(toStateChange(ev({ state: '1' }, null)), null);
  t.match(
    toStateChange(ev({ state: '1' }, { state: '2', attributes: { friendly_name: 'T', unit_of_measurement: '°C' } })),
    { entityId: 'sensor.t', friendlyName: 'T', oldState: '1', newState: '2', unit: '°C' },
  );
});

t.test('service calls keep field names only and excerpts mask secrets', async (t) => {
  const p = servicePayload({
    event_type: 'call_service',
    data: { domain: 'alarm_control_panel', service: 'alarm_disarm', service_data: { entity_id: 'a.b', code: '4711' } },
  });
  t.same(p, { domain: 'alarm_control_panel', service: 'alarm_disarm', service_data_keys: ['code', 'entity_id'] });
  t.notMatch(JSON.stringify(p), /4711/);
  const ex = dataExcerpt({ user: 'bob', password: 'hunter2', nested: { api_token: 'abc' }, auth: { a: 1 } });
  t.notMatch(ex, /hunter2|abc|"a":1/);
  t.match(ex, /bob/);
  t.ok(dataExcerpt({ long: 'x'.repeat(2000) }).length <= 500);
});

t.test('backoff doubles from the minimum, is capped and jittered', async (t) => {
  t.equal(
    backoffDelay(0, 1000, 60_000, () => 0),
    500,
  );
  t.equal(
    backoffDelay(0, 1000, 60_000, () => 1),
    1000,
  );
  t.equal(
    backoffDelay(3, 1000, 60_000, () => 1),
    8000,
  );
  t.equal(
    backoffDelay(20, 1000, 60_000, () => 1),
    60_000,
  );
  t.equal(
    backoffDelay(200, 1000, 60_000, () => 0),
    30_000,
  );
});

t.test('websocket URL keeps scheme security, port and prefix', async (t) => {
  t.equal(websocketUrl('http://ha.local:8123').href, 'ws://ha.local:8123/api/websocket');
  t.equal(websocketUrl('https://me:pw@ha.example/prefix/').href, 'wss://ha.example/prefix/api/websocket');
});
