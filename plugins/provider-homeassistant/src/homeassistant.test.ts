import http from 'node:http';
import type { ProviderHarness } from '@herald/plugin-api/testing';
import { createTestHost } from '@herald/plugin-api/testing';
import t from 'tap';
import type { FakeHomeAssistant } from '../test/fakes/homeassistant.ts';
import { startFakeHomeAssistant } from '../test/fakes/homeassistant.ts';
import { createHomeAssistantProvider } from './index.ts';

const TOKEN = 'llat-valid-token-0123456789';
const plugin = createHomeAssistantProvider({
  reconnectMinMs: 20,
  reconnectMaxMs: 80,
  handshakeTimeoutMs: 2000,
  closeTimeoutMs: 300,
});

async function waitFor(what: string, cond: () => boolean, timeoutMs = 3000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const types = (h: ProviderHarness) => h.emitted.map((e) => e.type);

/** Starts a fake and a provider instance against it; both are torn down after the test. */
async function setup(t: { teardown(fn: () => unknown): void }, config: Record<string, unknown> = {}, def = plugin) {
  const fake = await startFakeHomeAssistant({ token: TOKEN });
  const host = createTestHost();
  const h = await host.provider(def, { base_url: fake.url, access_token: TOKEN, ...config });
  t.teardown(async () => {
    await h.instance.stop?.();
    await fake.close();
  });
  return { fake, host, h };
}

async function connected(fake: FakeHomeAssistant, h: ProviderHarness, subscriptions = 3) {
  await h.instance.start?.();
  await waitFor('subscriptions', () => fake.subscribedTypes().length >= subscriptions);
  await waitFor('ha_status_connected', () => types(h).includes('ha_status_connected'));
}

t.test('authenticates, subscribes and reports the connection', async (t) => {
  const { fake, h } = await setup(t, { event_types: ['my_event', 'state_changed'] });
  t.match(await h.instance.health!(), { status: 'degraded' }, 'not connected before start');
  await connected(fake, h, 4);
  t.same(fake.subscribedTypes().sort(), ['automation_triggered', 'call_service', 'my_event', 'state_changed']);
  t.match(fake.received[0], { type: 'auth', access_token: TOKEN });
  t.match(await h.instance.health!(), { status: 'ok' });
  t.match(h.emitted[0], {
    type: 'ha_status_connected',
    payload: { first_connect: true, ha_version: '2025.1.0', host: new URL(fake.url).host },
  });
  t.notOk('downtime_seconds' in h.emitted[0]!.payload);
  t.notMatch(JSON.stringify(h.log.lines), new RegExp(TOKEN), 'the token is never logged');
});

t.test('state changes pass the entity filters and the per-entity debounce', async (t) => {
  const { fake, h } = await setup(t, {
    entity_filters: {
      include_domains: ['light'],
      include_entities: ['sensor.*_temperature'],
      exclude_entities: ['light.hall'],
      // Long enough that the changes pushed inside it and the 300 ms given for them to arrive stay inside it on a
      // loaded machine (with 1 s, a stall there let the trailing change out before 'held during the window').
      min_interval_seconds: 3,
    },
  });
  await connected(fake, h);
  h.emitted.length = 0;
  fake.pushStateChange('light.kitchen', 'off', 'on', { friendly_name: 'Kitchen' });
  fake.pushStateChange('sensor.attic_temperature', '20.5', '21', { friendly_name: 'Attic', unit_of_measurement: '°C' });
  fake.pushStateChange('sensor.attic_humidity', '40', '41');
  fake.pushStateChange('light.hall', 'off', 'on');
  fake.pushStateChange('switch.pump', 'off', 'on');
  await waitFor('two state events', () => h.emitted.length >= 2);
  t.same(
    h.emitted.map((e) => e.payload),
    [
      { entity_id: 'light.kitchen', friendly_name: 'Kitchen', domain: 'light', old_state: 'off', new_state: 'on' },
      {
        entity_id: 'sensor.attic_temperature',
        friendly_name: 'Attic',
        domain: 'sensor',
        old_state: '20.5',
        new_state: '21',
        unit: '°C',
      },
    ],
  );
  t.ok(h.emitted.every((e) => e.type === 'ha_state_changed' && e.occurredAt instanceof Date));

  // Inside the window: the kitchen light flips back to the state already sent, the sensor moves twice.
  fake.pushStateChange('light.kitchen', 'on', 'off', { friendly_name: 'Kitchen' });
  fake.pushStateChange('light.kitchen', 'off', 'on', { friendly_name: 'Kitchen' });
  fake.pushStateChange('sensor.attic_temperature', '21', '22', { friendly_name: 'Attic', unit_of_measurement: '°C' });
  fake.pushStateChange('sensor.attic_temperature', '22', '23', { friendly_name: 'Attic', unit_of_measurement: '°C' });
  await new Promise((r) => setTimeout(r, 300));
  t.equal(h.emitted.length, 2, 'held during the window');
  await waitFor('the trailing sensor change', () => h.emitted.length >= 3, 10_000);
  await new Promise((r) => setTimeout(r, 200));
  t.equal(h.emitted.length, 3, 'only the sensor, the light ended where it was');
  t.match(h.emitted[2], {
    type: 'ha_state_changed',
    payload: { entity_id: 'sensor.attic_temperature', old_state: '21', new_state: '23' },
  });
});

t.test('unchanged states are ignored; automations, service calls and extra events are relayed', async (t) => {
  const { fake, h } = await setup(t, {
    event_types: ['doorbell_pressed'],
    entity_filters: { min_interval_seconds: 0 },
  });
  await connected(fake, h, 4);
  h.emitted.length = 0;
  fake.pushStateChange('sensor.power', '100', '100', { friendly_name: 'Power', unit_of_measurement: 'W' });
  fake.pushStateChange('light.new', null, 'on');
  fake.pushEvent('automation_triggered', {
    name: 'Night mode',
    entity_id: 'automation.night_mode',
    source: 'time pattern',
  });
  fake.pushEvent('call_service', {
    domain: 'alarm_control_panel',
    service: 'alarm_disarm',
    service_data: { entity_id: 'alarm_control_panel.home', code: '4711' },
  });
  fake.pushEvent('doorbell_pressed', { button: 'front', api_key: 'k-123' });
  fake.pushEvent('not_subscribed_here', { x: 1 });
  await waitFor('three events', () => h.emitted.length >= 3);
  await new Promise((r) => setTimeout(r, 100));
  t.same(types(h), ['automation_triggered', 'service_called', 'event_fired']);
  t.same(h.emitted[0]!.payload, { name: 'Night mode', entity_id: 'automation.night_mode', source: 'time pattern' });
  t.same(h.emitted[1]!.payload, {
    domain: 'alarm_control_panel',
    service: 'alarm_disarm',
    service_data_keys: ['code', 'entity_id'],
  });
  t.notMatch(JSON.stringify(h.emitted), /4711|k-123/, 'no secret values are relayed');
  t.match(h.emitted[2]!.payload, { event_type: 'doorbell_pressed', data_excerpt: /"button":"front"/ });
});

t.test('a rejected token stops reconnecting and reports an error', async (t) => {
  const { fake, h } = await setup(t, { access_token: 'wrong-token' });
  await h.instance.start?.();
  await waitFor('auth failure', () => h.log.lines.some((l) => l.level === 'error'));
  await new Promise((r) => setTimeout(r, 400));
  t.equal(fake.connections, 1, 'no reconnect loop after auth_invalid');
  t.same(await h.instance.health!(), { status: 'error', detail: 'access token rejected' });
  t.equal(h.log.lines.filter((l) => l.level === 'error').length, 1, 'logged once');
  t.same(h.emitted, [], 'no status events without an established connection');
});

t.test('a dropped connection is reported, retried with backoff and reported back', async (t) => {
  const { fake, h, host } = await setup(t, { entity_filters: { min_interval_seconds: 0 } });
  await connected(fake, h);
  host.clock.advance(120_000);
  fake.refuse = true;
  fake.dropAll();
  await waitFor('ha_status_disconnected', () => types(h).includes('ha_status_disconnected'));
  const down = h.emitted.find((e) => e.type === 'ha_status_disconnected')!;
  t.match(down.payload, { connected_seconds: 120, reason: /closed|1006|socket/i });
  await waitFor(
    'refused attempts',
    () =>
      fake.connections === 1 && h.log.lines.filter((l) => /reconnect attempt failed/.test(String(l.msg))).length >= 2,
  );
  t.match(await h.instance.health!(), { status: 'degraded', detail: /reconnecting/ });
  host.clock.advance(7_000);
  fake.refuse = false;
  await waitFor('reconnect', () => types(h).filter((e) => e === 'ha_status_connected').length === 2);
  t.match(h.emitted.at(-1), { type: 'ha_status_connected', payload: { first_connect: false, downtime_seconds: 7 } });
  t.match(await h.instance.health!(), { status: 'ok' });
  await waitFor('subscriptions again', () => fake.subscribedTypes().length === 3);
  fake.pushStateChange('light.x', 'off', 'on');
  await waitFor('events flow again', () => types(h).includes('ha_state_changed'));
});

t.test('a connection without pongs is declared dead', async (t) => {
  const def = createHomeAssistantProvider({
    reconnectMinMs: 20,
    reconnectMaxMs: 80,
    // A pong waited for 400 ms: a loaded machine (three test files at a time on two cores) can hold this process
    // past a tighter limit, and a late timer then fires before the pong already received is read.
    pingIntervalMs: 50,
    pongTimeoutMs: 400,
    closeTimeoutMs: 300,
  });
  const { fake, h } = await setup(t, {}, def);
  await connected(fake, h);
  await waitFor('a ping', () => fake.received.some((m) => m.type === 'ping'));
  t.ok(
    fake.received.filter((m) => m.type === 'ping').every((m) => Number.isInteger(m.id)),
    'pings carry ids',
  );
  await new Promise((r) => setTimeout(r, 200));
  t.notOk(types(h).includes('ha_status_disconnected'), 'answered pings keep the connection');
  fake.answerPings = false;
  await waitFor('ha_status_disconnected', () => types(h).includes('ha_status_disconnected'));
  t.match(h.emitted.find((e) => e.type === 'ha_status_disconnected')!.payload, { reason: /no pong/ });
  fake.answerPings = true;
  await waitFor('reconnect', () => types(h).filter((e) => e === 'ha_status_connected').length === 2);
});

t.test('stop() closes promptly and stops reconnecting', async (t) => {
  const { fake, h } = await setup(t);
  await connected(fake, h);
  const began = Date.now();
  await h.instance.stop!();
  // Well under the 2 s handshake limit a stop that waited would take, with room for a loaded machine.
  t.ok(Date.now() - began < 1500, 'stopped within its 300 ms close limit, not after a time-out');
  await waitFor('server side closed', () => fake.authedClients() === 0, 5000);
  await new Promise((r) => setTimeout(r, 200));
  t.equal(fake.connections, 1, 'no reconnect after stop');
  t.notOk(types(h).includes('ha_status_disconnected'), 'a deliberate stop is not a loss');
});

t.test('stop() is prompt during a hanging handshake and during backoff; the abort signal stops too', async (t) => {
  const { fake, h } = await setup(t);
  fake.silent = true;
  await h.instance.start?.();
  await waitFor('a connection', () => fake.connections === 1);
  let began = Date.now();
  await h.instance.stop!();
  t.ok(Date.now() - began < 1500, 'handshake abandoned at once, not after its 2 s limit');

  const again = await setup(t);
  again.fake.refuse = true;
  await again.h.instance.start?.();
  await waitFor('retrying', () =>
    again.h.log.lines.some((l) => l.level === 'warn' && /cannot connect/.test(String(l.msg))),
  );
  began = Date.now();
  again.h.abort.abort();
  await new Promise((r) => setTimeout(r, 150));
  const attempts = again.fake.connections;
  await new Promise((r) => setTimeout(r, 200));
  t.equal(again.fake.connections, attempts, 'no attempts after the abort');
  t.match(await again.h.instance.health!(), { status: 'degraded', detail: 'stopped' });
  t.ok(Date.now() - began < 1000);
});

t.test('connects to the address the outbound policy checked and keeps the host name', async (t) => {
  const fake = await startFakeHomeAssistant({ token: TOKEN });
  const real = createTestHost().http;
  const asked: string[] = [];
  // A name that no resolver knows: only the pinned address can reach the fake.
  const http = {
    ...real,
    resolveAllowed: async (name: string) => {
      asked.push(name);
      return { address: '127.0.0.1', family: 4 as const };
    },
  };
  const port = new URL(fake.url).port;
  const h = await createTestHost({ http }).provider(plugin, {
    base_url: `http://ha.herald-test.invalid:${port}`,
    access_token: TOKEN,
  });
  t.teardown(async () => {
    await h.instance.stop?.();
    await fake.close();
  });
  await connected(fake, h);
  t.same(asked, ['ha.herald-test.invalid']);
  t.same(fake.hostHeaders, [`ha.herald-test.invalid:${port}`]);

  const refusing = {
    ...real,
    resolveAllowed: async () => {
      throw Object.assign(new Error('refused to connect to ha.lan: 10.0.0.2 is private'), { code: 'OUTBOUND_REFUSED' });
    },
  };
  const r = await createTestHost({ http: refusing }).provider(plugin, {
    base_url: 'http://ha.lan:8123',
    access_token: TOKEN,
  });
  t.teardown(() => r.instance.stop?.());
  await r.instance.start?.();
  await waitFor('a failed attempt', () => r.log.lines.some((l) => l.level === 'warn'));
  t.match(await r.instance.health!(), { status: 'degraded', detail: /10\.0\.0\.2 is private/ });
});

t.test(
  'the token never follows a redirect: the upgrade is not redirected and the token goes only over an open socket',
  async (t) => {
    const fake = await startFakeHomeAssistant({ token: TOKEN });
    // base_url answers the WebSocket upgrade with 302 to the real (fake) Home Assistant, another origin.
    const upgrades: string[] = [];
    const moved = http.createServer((_req, res) => res.writeHead(404).end());
    moved.on('upgrade', (req, socket) => {
      upgrades.push(req.url ?? '');
      // The plugin drops the connection as soon as it reads the 302: a reset here is expected, not a crash.
      socket.on('error', () => {});
      socket.end(
        `HTTP/1.1 302 Found\r\nLocation: ${fake.url.replace(/^http/, 'ws')}${req.url}\r\nContent-Length: ` +
          `0\r\nConnection: close\r\n\r\n`,
      );
    });
    await new Promise<void>((r) => moved.listen(0, '127.0.0.1', r));
    const h = await createTestHost().provider(plugin, {
      base_url: `http://127.0.0.1:${(moved.address() as { port: number }).port}`,
      access_token: TOKEN,
    });
    t.teardown(async () => {
      await h.instance.stop?.();
      moved.closeAllConnections();
      moved.close();
      await fake.close();
    });
    await h.instance.start?.();
    await waitFor('two connection attempts', () => upgrades.length >= 2);
    t.equal(fake.connections, 0, 'the redirect was not followed');
    t.same(fake.received, [], 'so the token never reached the second origin');
    t.match(await h.instance.health!(), { status: 'degraded' });
  },
);
