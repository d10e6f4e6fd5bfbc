/**
 * The MQTT provider against the real Debian broker (mosquitto on loopback, see
 * test/mosquitto.ts), fed with the real `mosquitto_pub`. Waits are bounded; nothing asserts on time.
 */

import type { EmittedEvent, OutboundHttp } from '@herald/plugin-api';
import type { ProviderHarness } from '@herald/plugin-api/testing';
import { createTestHost, createTestHttp } from '@herald/plugin-api/testing';
import t from 'tap';
import type { Broker } from '../test/mosquitto.ts';
import { startMosquitto, until } from '../test/mosquitto.ts';
import { createMqttProvider } from './index.ts';

const plugin = createMqttProvider({
  reconnectMinMs: 50,
  reconnectMaxMs: 200,
  connectTimeoutMs: 3000,
  closeTimeoutMs: 500,
});

/** What start() threw (undefined when it did not). */
async function startError(h: ProviderHarness): Promise<(Error & { code?: string; statusCode?: number }) | undefined> {
  try {
    await h.instance.start?.();
  } catch (err) {
    return err as Error;
  }
  return undefined;
}

const messages = (h: ProviderHarness) => h.emitted.filter((e) => e.type === 'mqtt_message');
const statuses = (h: ProviderHarness) => h.emitted.filter((e) => e.type.startsWith('mqtt_status_'));

interface Setup {
  broker: Broker;
  h: ProviderHarness;
}

/** A broker and a started provider on it, both gone after the test. */
async function setup(
  t: { teardown(fn: () => unknown): void },
  config: Record<string, unknown>,
  o: { def?: typeof plugin; http?: OutboundHttp; broker?: Broker; instanceId?: string } = {},
): Promise<Setup> {
  const broker = o.broker ?? (await startMosquitto());
  const host = createTestHost(o.http ? { http: o.http } : {});
  const h = await host.provider(o.def ?? plugin, { url: broker.url, ...config }, { instanceId: o.instanceId });
  t.teardown(async () => {
    await h.instance.stop?.();
    if (!o.broker) await broker.close();
  });
  await h.instance.start?.();
  return { broker, h };
}

t.test('JSON, plain text and wildcard subscriptions become events, in order', async (t) => {
  const { broker, h } = await setup(t, { topics: ['lab/ups', 'home/+/door', 'alerts/#'] });
  t.match(await h.instance.health!(), { status: 'ok', detail: `connected to 127.0.0.1:${broker.port}` });
  t.match(statuses(h), [
    {
      type: 'mqtt_status_connected',
      payload: { broker: `127.0.0.1:${broker.port}`, first_connect: true, session_present: false },
    },
  ]);

  await broker.pub('other/topic', 'not subscribed');
  await broker.pub('lab/ups', '{"title":"On battery","severity":"critical"}');
  await broker.pub('alerts/kitchen/smoke', 'Smoke in the kitchen');
  await broker.pub('home/front/door', '{"state":"open"}');
  await broker.pub('home/front/back/door', 'two levels: not matched by +');
  await broker.pub('alerts', 'the parent level itself matches alerts/#');
  await until(
    'five messages',
    () => messages(h).length >= 4,
    5000,
    () => JSON.stringify(h.emitted),
  );
  await broker.pub('lab/ups', '{"title":"Back on line","severity":"info"}');
  await until('the last message', () => messages(h).length >= 5);

  t.same(
    messages(h).map((e) => e.payload),
    [
      {
        topic: 'lab/ups',
        title: 'On battery',
        body: '{"title":"On battery","severity":"critical"}',
        severity: 'critical',
        fields: { title: 'On battery', body: null, severity: 'critical' },
      },
      {
        topic: 'alerts/kitchen/smoke',
        title: 'alerts/kitchen/smoke',
        body: 'Smoke in the kitchen',
        severity: 'info',
        fields: { title: null, body: null, severity: null },
      },
      {
        topic: 'home/front/door',
        title: 'home/front/door',
        body: '{"state":"open"}',
        severity: 'info',
        fields: { title: null, body: null, severity: null },
      },
      {
        topic: 'alerts',
        title: 'alerts',
        body: 'the parent level itself matches alerts/#',
        severity: 'info',
        fields: { title: null, body: null, severity: null },
      },
      {
        topic: 'lab/ups',
        title: 'Back on line',
        body: '{"title":"Back on line","severity":"info"}',
        severity: 'info',
        fields: { title: 'Back on line', body: null, severity: 'info' },
      },
    ],
    'the unsubscribed topic and the two-level one never arrive; the rest in publishing order',
  );
  t.same(
    messages(h).map((e) => e.severity),
    ['critical', 'info', 'info', 'info', 'info'],
    'each event carries its mapped severity',
  );
  t.match(
    broker.output(),
    /Received PUBACK from herald-[0-9a-f]{16}/,
    'QoS 1 messages were acknowledged by the provider',
  );
});

t.test('a mapping reads nested fields, topic levels and maps severities', async (t) => {
  const { broker, h } = await setup(t, {
    topics: ['zigbee2mqtt/+'],
    mapping: {
      title: '{{$levels[-1]}}: {{action}}',
      body: 'battery {{battery}} %',
      severity: 'action',
      severity_map: { alarm: 'critical' },
      event_key: '$topic',
    },
  });
  await broker.pub('zigbee2mqtt/hall_button', '{"action":"alarm","battery":87}');
  await until('the message', () => messages(h).length >= 1);
  t.same(messages(h)[0]!.payload, {
    topic: 'zigbee2mqtt/hall_button',
    title: 'hall_button: alarm',
    body: 'battery 87 %',
    severity: 'critical',
    event_key: 'zigbee2mqtt/hall_button',
    fields: {
      title: 'hall_button: alarm',
      body: 'battery 87 %',
      severity: 'alarm',
      event_key: 'zigbee2mqtt/hall_button',
    },
  });
});

t.test('retained messages replayed on subscribing are skipped, unless asked for', async (t) => {
  const broker = await startMosquitto();
  t.teardown(() => broker.close());
  await broker.pub('garage/door', '{"title":"Garage open"}', { retain: true });
  const skip = await setup(t, { topics: ['garage/#'] }, { broker, instanceId: 'skip' });
  const take = await setup(t, { topics: ['garage/#'], include_retained: true }, { broker, instanceId: 'take' });
  await until('the retained message', () => messages(take.h).length >= 1);
  t.match(messages(take.h)[0]!.payload, { topic: 'garage/door', title: 'Garage open', retained: true });
  await broker.pub('garage/door', '{"title":"Garage closed"}', { retain: true });
  await until('the live message', () => messages(skip.h).length >= 1 && messages(take.h).length >= 2);
  t.same(
    messages(skip.h).map((e) => e.payload.title),
    ['Garage closed'],
    'only the live message: a live publish is not marked retained',
  );
  t.notOk('retained' in messages(take.h)[1]!.payload);
});

t.test('a wrong password: the login refusal is explained in English and Russian', async (t) => {
  const broker = await startMosquitto({ users: { herald: 'right-password-1' } });
  t.teardown(() => broker.close());
  const host = createTestHost();
  const bad = await host.provider(plugin, {
    url: broker.url,
    topics: ['a/#'],
    username: 'herald',
    password: 'wrong-password-1',
  });
  const err = await startError(bad);
  t.equal(err?.code, 'AUTH_FAILED', 'AuthFailedError: the core marks the provider auth_failed and tells its owner');
  t.equal(err?.statusCode, 0);
  t.match(
    err?.message,
    `The MQTT broker 127.0.0.1:${broker.port} did not let this client in (CONNACK 5: Not authorized)`,
  );
  t.match(err?.message, `MQTT-брокер 127.0.0.1:${broker.port} не пустил этого клиента (CONNACK 5)`);
  t.notMatch(err?.message, /wrong-password-1/);
  t.notMatch(JSON.stringify(bad.log.lines), /wrong-password-1/, 'the password is never logged');
  t.match(
    await bad.instance.health!(),
    { status: 'degraded', detail: 'stopped' },
    'the failed instance holds no connection',
  );
  await bad.instance.stop?.();
  t.match(broker.output(), /disconnected, not authorised/);

  const anonymous = await host.provider(plugin, { url: broker.url, topics: ['a/#'] });
  const err2 = await startError(anonymous);
  t.equal(err2?.code, 'AUTH_FAILED', 'anonymous access refused too');

  const good = await host.provider(plugin, {
    url: broker.url,
    topics: ['a/#'],
    username: 'herald',
    password: 'right-password-1',
  });
  t.teardown(() => good.instance.stop?.());
  await good.instance.start!();
  await broker.pub('a/b', 'hello', { username: 'herald', password: 'right-password-1' });
  await until('the message', () => messages(good).length >= 1);
  t.equal(messages(good)[0]!.payload.body, 'hello');
});

t.test('an unreachable broker is not ready yet; the core tries again later', async (t) => {
  const broker = await startMosquitto();
  await broker.close();
  const h = await createTestHost().provider(plugin, { url: broker.url, topics: ['a'] });
  const err = await startError(h);
  t.equal(err?.code, 'NOT_READY');
  t.match(err?.message, `Cannot reach the MQTT broker 127.0.0.1:${broker.port}: connect ECONNREFUSED`);
  t.match(err?.message, 'Не удаётся связаться с MQTT-брокером');
});

/** An outbound client whose `resolveAllowed` waits while `closed` is set: holds a reconnect at a known point. */
function gatedHttp() {
  const base = createTestHttp();
  let release: (() => void) | undefined;
  let gate: Promise<void> | undefined;
  let waiting = 0;
  const http: OutboundHttp = {
    request: base.request.bind(base),
    fetch: base.fetch,
    async resolveAllowed(host) {
      if (gate) {
        waiting++;
        await gate;
        waiting--;
      }
      return base.resolveAllowed(host);
    },
  };
  return {
    http,
    close() {
      gate = new Promise((r) => {
        release = r;
      });
    },
    open() {
      const r = release;
      gate = undefined;
      release = undefined;
      r?.();
    },
    waiting: () => waiting,
  };
}

t.test('a broker restart mid-stream: nothing accepted at QoS 1 is lost', async (t) => {
  const gate = gatedHttp();
  const { broker, h } = await setup(t, { topics: ['lab/#'] }, { http: gate.http });
  const N = 20;
  const M = 10;
  for (let i = 0; i < N; i++) await broker.pub('lab/before', `before ${i}`);
  // Every one of them was acknowledged to mosquitto_pub; the broker stops at once, whatever the
  // provider has received so far: the rest are in the broker's persisted session.
  gate.close();
  await broker.stop();
  await until('the provider to notice', async () => (await h.instance.health!()).status === 'degraded');
  await until('a reconnect held at the gate', () => gate.waiting() > 0);
  await broker.start();
  for (let i = 0; i < M; i++) await broker.pub('lab/after', `after ${i}`);
  gate.open();
  const want = [
    ...Array.from({ length: N }, (_, i) => `before ${i}`),
    ...Array.from({ length: M }, (_, i) => `after ${i}`),
  ];
  await until(
    'every message',
    () => want.every((b) => messages(h).some((e) => e.payload.body === b)),
    10_000,
    () => `missing: ${want.filter((b) => !messages(h).some((e) => e.payload.body === b)).join(', ')}`,
  );
  t.pass(
    `all ${N + M} messages arrived (${messages(h).length} events: a message received but not yet acknowledged ` +
      'when the broker stopped may come twice)',
  );
  const after = messages(h).filter((e) => String(e.payload.body).startsWith('after'));
  t.same(
    [...new Set(after.map((e) => e.payload.body))],
    want.slice(N),
    'the messages queued while Herald was away arrive in order',
  );
  t.match(
    statuses(h).map((e) => e.type),
    ['mqtt_status_connected', 'mqtt_status_disconnected', 'mqtt_status_connected'],
  );
  t.match(
    statuses(h)[2]!.payload,
    { first_connect: false, session_present: true },
    'the broker kept the session across its restart',
  );
  t.match(await h.instance.health!(), { status: 'ok' });
});

t.test('an emit that fails is not acknowledged: the broker sends the message again', async (t) => {
  let failures = 0;
  const flaky: typeof plugin = {
    ...plugin,
    create: (ctx) =>
      plugin.create({
        ...ctx,
        async emit(e: EmittedEvent) {
          if (e.type === 'mqtt_message' && failures === 0) {
            failures++;
            throw new Error('database is locked');
          }
          return ctx.emit(e);
        },
      }),
  };
  const { broker, h } = await setup(t, { topics: ['lab/ups'] }, { def: flaky });
  await broker.pub('lab/ups', '{"title":"On battery","severity":"critical"}');
  await until(
    'the redelivered message',
    () => messages(h).length >= 1,
    10_000,
    () => broker.output().slice(-3000),
  );
  t.equal(failures, 1, 'the first attempt failed');
  t.same(
    messages(h).map((e) => e.payload.title),
    ['On battery'],
    'recorded once, on the second delivery',
  );
  t.match(
    broker.output(),
    /Sending PUBLISH to herald-[0-9a-f]{16} \(d1, q1, r0, m\d+, 'lab\/ups'/,
    'the broker resent it as a duplicate: no PUBACK was sent for the failed one',
  );
  t.match(
    statuses(h).map((e) => e.type),
    ['mqtt_status_connected', 'mqtt_status_disconnected', 'mqtt_status_connected'],
  );
  t.match(statuses(h)[1]!.payload.reason, /could not record a message of lab\/ups: database is locked/);
  t.ok(h.log.lines.some((l) => l.level === 'error' && /without acknowledging it/.test(String(l.msg))));
});

t.test('a changed config on a kept session: old subscriptions are dropped, messages of them ignored', async (t) => {
  const broker = await startMosquitto();
  t.teardown(() => broker.close());
  const shared = new Map<string, unknown>();
  const store = {
    async get<T>(k: string) {
      return shared.get(k) as T | undefined;
    },
    async set(k: string, v: unknown) {
      shared.set(k, structuredClone(v));
    },
    async setIfAbsent(k: string, v: unknown) {
      if (shared.has(k)) return false;
      shared.set(k, v);
      return true;
    },
    async delete(k: string) {
      shared.delete(k);
    },
  };
  const withStore: typeof plugin = { ...plugin, create: (ctx) => plugin.create({ ...ctx, store }) };
  const first = await setup(
    t,
    { topics: ['old/#', 'both/#'], client_id: 'herald-config-change' },
    { broker, def: withStore },
  );
  await first.h.instance.stop?.();
  t.same(shared.get('subscriptions'), { client_id: 'herald-config-change', topics: { 'old/#': 1, 'both/#': 1 } });
  const second = await setup(
    t,
    { topics: ['both/#', 'new/#'], client_id: 'herald-config-change' },
    { broker, def: withStore },
  );
  t.match(statuses(second.h)[0]!.payload, { session_present: true });
  await broker.pub('old/x', 'from the dropped subscription');
  await broker.pub('both/x', 'kept');
  await broker.pub('new/x', 'added');
  await until('two messages', () => messages(second.h).length >= 2);
  t.same(
    messages(second.h).map((e) => e.payload.body),
    ['kept', 'added'],
  );
  t.match(broker.output(), /Received UNSUBSCRIBE from herald-config-change/);
  t.same(shared.get('subscriptions'), { client_id: 'herald-config-change', topics: { 'both/#': 1, 'new/#': 1 } });

  // Without the remembered list (another store), a message of a subscription the session still
  // holds is acknowledged but not relayed.
  await second.h.instance.stop?.();
  const third = await setup(t, { topics: ['new/#'], client_id: 'herald-config-change' }, { broker });
  await broker.pub('both/y', 'still subscribed at the broker');
  await broker.pub('new/y', 'wanted');
  await until('the wanted message', () => messages(third.h).length >= 1);
  t.same(
    messages(third.h).map((e) => e.payload.body),
    ['wanted'],
  );
});
