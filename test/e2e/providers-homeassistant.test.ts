/**
 * End to end through the real service: the Home Assistant provider (default export, production
 * timings) against a fake speaking the WebSocket API. A dropped connection is retried after
 * 0.5–1 s, so every wait here is bounded well under 10 s.
 */
import t from 'tap';
import { startFakeHomeAssistant } from '../../plugins/provider-homeassistant/test/fakes/homeassistant.ts';
import { startService, startSink } from '../helpers/service.ts';
import { chain, eventRows, plugins, recorder, relayOf, until } from './support.ts';

const TOKEN = 'ha-long-lived-token-e2e';

t.test(
  'homeassistant: quiet hours defer a state change until they end; drops and reconnects are logged; readiness ' +
    'follows the link',
  async (t) => {
    const ha = await startFakeHomeAssistant({ token: TOKEN, haVersion: '2025.6.1' });
    const s = await startService({ SERVICE_PLUGINS: plugins('@herald/provider-homeassistant') });
    const sink = await startSink();
    t.teardown(async () => {
      await s.stop();
      await sink.close();
      await ha.close();
    });
    const ready = async () => (await s.request('GET', '/api/ready')).body.checks.ha;
    t.equal(await ready(), 'na', 'no instance yet: not applicable');

    s.clock.set('2026-03-10T23:30:00Z');
    const target = await recorder(s, sink.url);
    const { provider } = await chain(s, {
      provider: {
        kind: 'homeassistant',
        name: 'House',
        config: {
          base_url: ha.url,
          access_token: TOKEN,
          entity_filters: { include_domains: ['light'], min_interval_seconds: 0 },
        },
      },
      tracker: { quiet_hours: { start: '23:00', end: '07:00', timezone: 'UTC' } },
      target,
      enableAfterLink: true,
    });
    await until('the subscription', () => ha.subscribedTypes().includes('state_changed'));
    t.equal(
      await until('ha ready', async () => ((await ready()) === 'ok' ? 'ok' : undefined)),
      'ok',
      '/api/ready: ha ok while connected',
    );

    const types = async () => (await eventRows(s, provider.id)).map((r) => r.event_type);
    await until('the connected status row', async () => (await types()).includes('ha_status_connected'));
    ha.pushStateChange('sensor.outside_temperature', '3', '4', { friendly_name: 'Outside' });
    ha.pushStateChange('light.kitchen', 'off', 'on', { friendly_name: 'Kitchen light' });
    const changed = await until('the state change row', async () =>
      (await eventRows(s, provider.id)).find((r) => r.event_type === 'ha_state_changed'),
    );
    t.match(changed.payload, {
      entity_id: 'light.kitchen',
      friendly_name: 'Kitchen light',
      old_state: 'off',
      new_state: 'on',
    });
    t.equal(changed.dispatch_status, 'deferred', 'held during quiet hours');
    const relay = relayOf(s);
    await relay.tick();
    t.equal(sink.received.length, 0, 'nothing sent at night');
    t.same(
      (await types()).filter((x) => x === 'ha_state_changed'),
      ['ha_state_changed'],
      'the filtered-out sensor made no row',
    );

    s.clock.set('2026-03-11T07:00:01Z');
    await relay.tick();
    const titles = sink.received.map((r) => `${r.body.eventType}: ${r.body.plainTitle}`);
    t.ok(
      titles.some((x) => /^ha_state_changed: .*Kitchen light/.test(x)),
      `released when the window ends (${titles.join(' | ')})`,
    );
    t.equal((await eventRows(s, provider.id)).find((r) => r.id === changed.id)!.dispatch_status, 'dispatched');

    ha.dropAll();
    await until('a disconnected row', async () => (await types()).includes('ha_status_disconnected'));
    await until(
      'the reconnect',
      async () => (await types()).filter((x) => x === 'ha_status_connected').length === 2,
      8000,
    );
    const rows = (await eventRows(s, provider.id)).filter((r) => r.event_type.startsWith('ha_status_'));
    t.same(
      rows.map((r) => r.event_type),
      ['ha_status_connected', 'ha_status_disconnected', 'ha_status_connected'],
      'each connect and each loss is an event_log row',
    );
    t.equal(rows[0].payload.first_connect, true);
    t.equal(rows[2].payload.first_connect, false, 'the reconnect says it follows an outage');
    t.equal(rows[1].payload.host, new URL(ha.url).host);
    t.equal(await until('ha ready again', async () => ((await ready()) === 'ok' ? 'ok' : undefined)), 'ok');

    const bad = await s.request('PATCH', `/api/providers/${provider.id}`, {
      token: s.admin.token,
      body: {
        config: { base_url: ha.url, access_token: 'revoked-token', entity_filters: { min_interval_seconds: 0 } },
      },
    });
    t.equal(bad.status, 200);
    t.equal(
      await until('ha degraded', async () => ((await ready()) === 'degraded' ? 'degraded' : undefined)),
      'degraded',
      '/api/ready: ha degraded after the token is rejected',
    );
    const attempts = ha.connections;
    await new Promise((r) => setTimeout(r, 1500));
    t.equal(ha.connections, attempts, 'a rejected token is not retried');
    t.notMatch(s.logText(), new RegExp(TOKEN), 'the token never reaches the log');
  },
);
