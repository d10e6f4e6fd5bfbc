/**
 * End to end through the real service and the real broker: `mosquitto_pub` → the MQTT provider
 * (subscribed on Mosquitto) → an event → the MQTT target (publishing back to Mosquitto) →
 * `mosquitto_sub` reads the JSON document. Loopback is reachable because the test service allows
 * 127.0.0.0/8 (SERVICE_OUTBOUND_ALLOW_CIDRS). Waits are bounded.
 */
import t from 'tap';
import { startMosquitto } from '../../plugins/provider-mqtt/test/mosquitto.ts';
import { startService } from '../helpers/service.ts';
import { chain, create, deliveries, eventRows, plugins, relayOf, until } from './support.ts';

t.test('mqtt: a message published to the broker comes back as a JSON notification on another topic', async (t) => {
  const broker = await startMosquitto();
  const s = await startService({ SERVICE_PLUGINS: plugins('@herald/provider-mqtt', '@herald/target-mqtt') });
  t.teardown(async () => {
    await s.stop();
    await broker.close();
  });
  const ready = async () => (await s.request('GET', '/api/ready')).body.checks.mqtt;
  t.equal(await ready(), 'na', 'no MQTT provider yet: not applicable');

  const target = await create(s, '/api/targets', {
    kind: 'mqtt',
    name: 'Broker out',
    config: { url: broker.url, topic: 'herald/{{event_type}}' },
    locale: 'en',
  });
  t.match(
    target.config,
    { url: broker.url, topic: 'herald/{{event_type}}', qos: 1, retain: false },
    'defaults applied',
  );
  const { provider } = await chain(s, {
    provider: { kind: 'mqtt', name: 'Lab broker', config: { url: broker.url, topics: ['lab/#'] } },
    tracker: { event_types: { mqtt_status_connected: false, mqtt_status_disconnected: false } },
    target,
    enableAfterLink: true,
  });
  await until(
    'the provider to run',
    async () =>
      (await s.request('GET', `/api/providers/${provider.id}`, { token: s.admin.token })).body.status === 'running',
  );
  await until('the subscription', () => /Received SUBSCRIBE from herald-[0-9a-f]{16}/.test(broker.output()));
  t.equal(
    await until('mqtt ready', async () => ((await ready()) === 'ok' ? 'ok' : undefined)),
    'ok',
    '/api/ready: mqtt ok while connected',
  );

  const sub = await broker.sub('herald/#', 1);
  await broker.pub('lab/ups', '{"title":"On battery","severity":"critical"}');
  const row = await until('the event row', async () =>
    (await eventRows(s, provider.id)).find((r) => r.event_type === 'mqtt_message'),
  );
  t.same(row.payload, {
    topic: 'lab/ups',
    title: 'On battery',
    body: '{"title":"On battery","severity":"critical"}',
    severity: 'critical',
    fields: { title: 'On battery', body: null, severity: 'critical' },
  });
  const relay = relayOf(s);
  await until('the delivery to be sent', async () => {
    await relay.tick();
    return (await deliveries(s, row.id)).find((d) => d.status === 'sent');
  });
  const lines = await sub.lines;
  t.equal(lines.length, 1);
  const [topic, json] = [lines[0]!.slice(0, lines[0]!.indexOf(' ')), lines[0]!.slice(lines[0]!.indexOf(' ') + 1)];
  t.equal(topic, 'herald/mqtt_message');
  const doc = JSON.parse(json);
  t.match(doc, {
    title: 'On battery',
    text: '{"title":"On battery","severity":"critical"}\n\nTopic: lab/ups',
    severity: 'critical',
    event_type: 'mqtt_message',
    locale: 'en',
    event_id: row.id,
    delivery_id: String,
  });
  t.same(Object.keys(doc).sort(), [
    'delivery_id',
    'event_id',
    'event_type',
    'locale',
    'occurred_at',
    'payload',
    'provider',
    'sent_at',
    'severity',
    'text',
    'title',
  ]);
  t.match(
    doc,
    {
      provider: { kind: 'mqtt' },
      occurred_at: /^\d{4}-\d{2}-\d{2}T/,
      payload: { topic: 'lab/ups', title: 'On battery', severity: 'critical' },
    },
    'the event behind the message',
  );
  t.match(
    broker.output(),
    /Received PUBACK from herald-[0-9a-f]{16}/,
    'the provider acknowledged the message once it was recorded',
  );

  // The status events were recorded but not sent: the tracker turned them off.
  t.ok((await eventRows(s, provider.id)).some((r) => r.event_type === 'mqtt_status_connected'));
});

t.test(
  'mqtt: a broker that refuses the login marks the provider auth_failed and says why, in English and Russian',
  async (t) => {
    const broker = await startMosquitto({ users: { herald: 'e2e-right-password' } });
    const s = await startService({ SERVICE_PLUGINS: plugins('@herald/provider-mqtt') });
    t.teardown(async () => {
      await s.stop();
      await broker.close();
    });
    const provider = await create(s, '/api/providers', {
      kind: 'mqtt',
      name: 'Locked broker',
      config: { url: broker.url, topics: ['a/#'], username: 'herald', password: 'e2e-wrong-password' },
    });
    const view = await until('auth_failed', async () => {
      const r = (await s.request('GET', `/api/providers/${provider.id}`, { token: s.admin.token })).body;
      return r.status === 'auth_failed' ? r : undefined;
    });
    t.match(
      view.status_detail,
      `The MQTT broker 127.0.0.1:${broker.port} did not let this client in (CONNACK 5: Not authorized)`,
    );
    t.match(view.status_detail, `MQTT-брокер 127.0.0.1:${broker.port} не пустил этого клиента (CONNACK 5)`);
    t.equal(view.config.password, '********', 'the password stays masked');
    t.notMatch(s.logText(), /e2e-wrong-password/, 'and out of the log');
  },
);
