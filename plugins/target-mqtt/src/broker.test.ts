/**
 * The MQTT target against the real Debian broker (mosquitto on loopback, test/mosquitto.ts), read
 * back with the real `mosquitto_sub`, and against a scripted broker for the failures Mosquitto does
 * not produce on demand. Waits are bounded; nothing asserts on time.
 */

import type { TargetHarness } from '@herald/plugin-api/testing';
import { createTestHost, createTestHttp } from '@herald/plugin-api/testing';
import t from 'tap';
import { startScriptedBroker } from '../test/fakes/scripted-broker.ts';
import { startMosquitto, until } from '../test/mosquitto.ts';
import { createMqttTarget } from './index.ts';

const plugin = createMqttTarget({ connectTimeoutMs: 1500, publishTimeoutMs: 1500, closeTimeoutMs: 300 });
const signal = new AbortController().signal;

async function target(
  t: { teardown(fn: () => unknown): void },
  config: Record<string, unknown>,
  host = createTestHost(),
): Promise<TargetHarness> {
  const h = await host.target(plugin, config);
  t.teardown(() => h.instance.stop?.());
  return h;
}

/** What a send threw (undefined when it did not). */
async function sendError(
  h: TargetHarness,
  m: Parameters<TargetHarness['message']>[0] = {},
): Promise<(Error & { code?: string; statusCode?: number }) | undefined> {
  try {
    await h.instance.send(h.message(m), { signal, attempt: 1 });
  } catch (err) {
    return err as Error;
  }
  return undefined;
}

const split = (line: string) => {
  const i = line.indexOf(' ');
  return [line.slice(0, i), JSON.parse(line.slice(i + 1))] as const;
};

t.test('each send is one JSON document on the rendered topic, over one kept connection', async (t) => {
  const broker = await startMosquitto();
  t.teardown(() => broker.close());
  const h = await target(t, { url: broker.url });
  const sub = await broker.sub('herald/#', 2);
  const first = await h.instance.send(
    h.message({
      deliveryId: 'del-1',
      eventId: 'evt-1',
      eventType: 'mqtt_message',
      severity: 'critical',
      locale: 'en',
      title: 'On battery',
      body: 'The UPS runs on battery.',
      url: 'https://ups.lan/status',
    }),
    { signal, attempt: 1 },
  );
  t.same(first, { detail: 'published to herald/mqtt_message' });
  await h.instance.send(
    h.message({
      deliveryId: 'del-2',
      eventId: 'evt-2',
      eventType: 'ha_state_changed',
      severity: 'info',
      locale: 'ru',
      title: 'Свет',
      body: 'Кухня: вкл',
      test: true,
    }),
    { signal, attempt: 1 },
  );
  const lines = (await sub.lines).map(split);
  t.same(
    lines,
    [
      [
        'herald/mqtt_message',
        {
          title: 'On battery',
          text: 'The UPS runs on battery.',
          severity: 'critical',
          event_type: 'mqtt_message',
          url: 'https://ups.lan/status',
          locale: 'en',
          event_id: 'evt-1',
          delivery_id: 'del-1',
          sent_at: '2026-01-01T00:00:00.000Z',
        },
      ],
      [
        'herald/ha_state_changed',
        {
          title: 'Свет',
          text: 'Кухня: вкл',
          severity: 'info',
          event_type: 'ha_state_changed',
          locale: 'ru',
          event_id: 'evt-2',
          delivery_id: 'del-2',
          sent_at: '2026-01-01T00:00:00.000Z',
          test: true,
        },
      ],
    ],
    'mosquitto_sub read exactly the two documents',
  );
  t.equal(
    broker.output().match(/New client connected from .* as herald-pub-/g)?.length,
    1,
    'both sends went over one connection',
  );
  t.match(
    broker.output(),
    /Received PUBLISH from herald-pub-[0-9a-f]{12} \(d0, q1, r0, m\d+, 'herald\/mqtt_message'/,
    'published at QoS 1, not retained',
  );
  t.match(await h.instance.health!(), { status: 'ok' });
});

t.test('severity in the topic, QoS 0 and retain', async (t) => {
  const broker = await startMosquitto();
  t.teardown(() => broker.close());
  const h = await target(t, { url: broker.url, topic: 'alerts/{{ severity }}/{{event_type}}', qos: 0, retain: true });
  await h.instance.send(h.message({ eventType: 'ups_on_battery', severity: 'warning', title: 'T', body: 'B' }), {
    signal,
    attempt: 1,
  });
  // Published before anyone subscribed: a retained message is handed to the later subscriber.
  const sub = await broker.sub('alerts/#', 1);
  const [[topic, doc]] = (await sub.lines).map(split);
  t.equal(topic, 'alerts/warning/ups_on_battery');
  t.match(doc, { title: 'T', text: 'B', severity: 'warning' });
  t.match(broker.output(), /Received PUBLISH from herald-pub-[0-9a-f]{12} \(d0, q0, r1/);
});

t.test('a broker restart between two sends: the second goes out on a new connection', async (t) => {
  const broker = await startMosquitto();
  t.teardown(() => broker.close());
  const h = await target(t, { url: broker.url, topic: 'herald/restart' });
  await h.instance.send(h.message({ deliveryId: 'before' }), { signal, attempt: 1 });
  await broker.stop();
  await broker.start();
  const sub = await broker.sub('herald/restart', 1);
  const err = await sendError(h, { deliveryId: 'after' });
  if (err) {
    // The send met the connection before its close was seen: retryable, and the retry reconnects.
    t.equal(err.code, 'RETRYABLE_SEND', `a failed attempt is retryable (${err.message})`);
    await h.instance.send(h.message({ deliveryId: 'after' }), { signal, attempt: 2 });
  }
  const [[, doc]] = (await sub.lines).map(split);
  t.equal(doc.delivery_id, 'after');
  t.equal(broker.output().match(/New client connected from .* as herald-pub-/g)?.length, 2, 'reconnected once');
});

t.test("wrong credentials are refused with AuthFailedError, in the target's language", async (t) => {
  const broker = await startMosquitto({ users: { herald: 'right-password-2' } });
  t.teardown(() => broker.close());
  const bad = await target(t, { url: broker.url, username: 'herald', password: 'wrong-password-2' });
  const en = await sendError(bad, { locale: 'en' });
  t.equal(en?.code, 'AUTH_FAILED');
  t.equal(
    en?.message,
    `The MQTT broker 127.0.0.1:${broker.port} did not let this client in (CONNACK 5: Not authorized): the user ` +
      'name or password is wrong, or this user may not connect.',
  );
  const ru = await sendError(bad, { locale: 'ru' });
  t.equal(
    ru?.message,
    `MQTT-брокер 127.0.0.1:${broker.port} не пустил этого клиента (CONNACK 5): неверное имя пользователя или ` +
      'пароль, либо этому пользователю нельзя подключаться.',
  );
  t.notMatch(JSON.stringify(bad.log.lines), /wrong-password-2/);
  const good = await target(t, { url: broker.url, username: 'herald', password: 'right-password-2', topic: 'ok' });
  const sub = await broker.sub('ok', 1, { username: 'herald', password: 'right-password-2' });
  await good.instance.send(good.message({ title: 'fine' }), { signal, attempt: 1 });
  t.match(split((await sub.lines)[0]!)[1], { title: 'fine' });
});

t.test('CONNACK 4 (bad user name or password) from a scripted broker is AuthFailedError', async (t) => {
  const fake = await startScriptedBroker({ connack: 4 });
  t.teardown(() => fake.close());
  const h = await target(t, { url: fake.url, username: 'u', password: 'p' });
  const err = await sendError(h);
  t.match(err, {
    code: 'AUTH_FAILED',
    statusCode: 0,
    message: /refused the user name or password \(CONNACK 4: Bad username or password\)/,
  });
  t.same(fake.received, ['CONNECT']);
});

t.test('a broker that never answers CONNACK: retryable', async (t) => {
  const fake = await startScriptedBroker({ connack: null });
  t.teardown(() => fake.close());
  const h = await target(t, { url: fake.url });
  const err = await sendError(h);
  t.match(err, { code: 'RETRYABLE_SEND', message: /did not answer within 2 s/ });
});

t.test('a PUBACK that never comes: retryable; QoS 0 is done once written', async (t) => {
  const fake = await startScriptedBroker({ connack: 0 });
  t.teardown(() => fake.close());
  const h = await target(t, { url: fake.url, topic: 'x' });
  const err = await sendError(h, { locale: 'ru' });
  t.match(err, { code: 'RETRYABLE_SEND', message: /не подтвердил сообщение в топик x за 2 с/ });
  const q0 = await target(t, { url: fake.url, topic: 'x', qos: 0 });
  t.equal(await sendError(q0), undefined, 'QoS 0: no acknowledgement to wait for');
  await until('the second PUBLISH', () => fake.received.filter((p) => p === 'PUBLISH').length === 2);
  t.same(
    fake.received,
    ['CONNECT', 'PUBLISH', 'CONNECT', 'PUBLISH'],
    'each target connected once and published once; the timed-out connection was cut without DISCONNECT',
  );
});

t.test('no broker listening: retryable; an address the policy refuses: permanent', async (t) => {
  const broker = await startMosquitto();
  await broker.close();
  const h = await target(t, { url: broker.url });
  t.match(await sendError(h), {
    code: 'RETRYABLE_SEND',
    message: /Cannot reach the MQTT broker 127\.0\.0\.1:\d+: connect ECONNREFUSED/,
  });
  const refused = await target(
    t,
    { url: 'mqtt://10.1.2.3' },
    createTestHost({ http: createTestHttp({ refuse: () => true }) }),
  );
  t.match(await sendError(refused), {
    code: 'PERMANENT_SEND',
    message: /Herald may not connect to the MQTT broker 10\.1\.2\.3:1883/,
  });
});
