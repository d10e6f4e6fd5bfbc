/**
 * Self-monitoring through the contract: the core finds the receiving provider by its manifest's
 * `selfMonitoring` declaration, never by its kind or event type names.
 */

import fs from 'node:fs';
import path from 'node:path';
import { defineProvider, type ProviderDefinition, Type } from '@herald/plugin-api';
import t from 'tap';
import { startService, startSink, type TestService } from '../helpers/service.ts';

const { loadPlugins, wrapDefinition, PluginLoadError } = await import('../../core/src/plugins/loader.ts');
const { findSelfMonitoringReceiver } = await import('../../core/src/plugins/self-monitoring.ts');

/** A receiver of another kind, with its own event type names, standing in for the first-party one. */
const watchdog = (over: Partial<ProviderDefinition['manifest']> = {}) =>
  defineProvider({
    manifest: {
      id: 'watchdog',
      kind: 'provider',
      apiVersion: 1,
      displayName: 'Watchdog',
      ingest: 'internal',
      coreManaged: true,
      configSchema: Type.Object({}),
      selfMonitoring: {
        events: { pollFailures: 'wd_polls', deferredBacklog: 'wd_backlog', targetFailures: 'wd_targets' },
      },
      events: {
        wd_polls: {
          payload: Type.Object({ failures: Type.Integer(), threshold: Type.Integer() }, { additionalProperties: true }),
          quietHours: 'send',
          severity: 'warning',
        },
        wd_backlog: {
          payload: Type.Object({ pending: Type.Integer(), threshold: Type.Integer() }),
          quietHours: 'send',
          severity: 'warning',
        },
        wd_targets: {
          payload: Type.Object(
            { target_id: Type.String(), failures: Type.Integer(), threshold: Type.Integer() },
            { additionalProperties: true },
          ),
          quietHours: 'send',
          severity: 'critical',
        },
      },
      ...over,
    },
    create: () => ({}),
  });

t.test('the first-party receiver is found through its manifest', async (t) => {
  const plugins = await loadPlugins([
    '@herald/provider-bridge-self',
    'herald-plugin-example',
    'herald-target-recorder',
  ]);
  const bridge = plugins[0]!;
  const r = findSelfMonitoringReceiver(plugins)!;
  t.equal(r.kind, bridge.id, 'kind from the manifest id');
  t.equal(r.name, 'Self-monitoring', 'instances named after the plugin');
  t.same(r.events, bridge.def.manifest.selfMonitoring!.events, 'event types from the manifest');
  for (const type of Object.values(r.events)) t.ok(bridge.def.manifest.events![type], `${type} is declared`);
  t.equal(findSelfMonitoringReceiver(plugins.slice(1)), undefined, 'none without a declaration');
});

t.test('unusable or competing declarations are refused with a clear error', async (t) => {
  const [bridge] = await loadPlugins(['@herald/provider-bridge-self']);
  const wd = wrapDefinition('watchdog-pkg', watchdog());
  t.throws(() => findSelfMonitoringReceiver([bridge!, wd]), {
    constructor: PluginLoadError,
    message: /"@herald\/provider-bridge-self" and "watchdog-pkg" both receive self-monitoring signals/,
  });
  const unmapped = wrapDefinition(
    'wd-bad',
    watchdog({
      selfMonitoring: { events: { pollFailures: 'wd_polls', deferredBacklog: 'nope', targetFailures: 'wd_targets' } },
    }),
  );
  t.throws(() => findSelfMonitoringReceiver([unmapped]), {
    message:
      /"wd-bad" declares selfMonitoring but maps the signal "deferredBacklog" to an event type it does not declare/,
  });
  const notManaged = wrapDefinition('wd-free', watchdog({ coreManaged: false }));
  t.throws(() => findSelfMonitoringReceiver([notManaged]), {
    message: /"wd-free" declares selfMonitoring but is not a provider with coreManaged: true and ingest: "internal"/,
  });
});

t.test("core/src names neither the receiver's kind nor its event types", async (t) => {
  const [bridge] = await loadPlugins(['@herald/provider-bridge-self']);
  const names = [bridge!.id, ...Object.keys(bridge!.def.manifest.events ?? {})];
  const root = path.resolve(import.meta.dirname, '../../core/src');
  const hits: string[] = [];
  for (const f of fs.readdirSync(root, { recursive: true, withFileTypes: true })) {
    if (!f.isFile()) continue;
    const file = path.join(f.parentPath, f.name);
    const text = fs.readFileSync(file, 'utf8');
    for (const n of names) if (text.includes(n)) hits.push(`${path.relative(root, file)}: ${n}`);
  }
  t.same(hits, [], 'no plugin names in the core');
});

/**
 * Starts the service with the first-party receiver swapped for `replacement` (or removed). The swap
 * is made in this thread's plugin host, which a dispatch thread (loading the configured plugins)
 * would not see: dispatch runs here.
 */
const startWith = (replacement?: ProviderDefinition) =>
  startService(
    { SERVICE_DISPATCH_THREAD: 'false' },
    {
      beforeStart: async (core) => {
        const [bridge] = [...core.plugins.plugins.values()].filter((p) => p.def.manifest.selfMonitoring);
        core.plugins.plugins.delete(`provider:${bridge!.id}`);
        if (replacement) core.plugins.add(wrapDefinition('watchdog-pkg', replacement));
      },
    },
  );

async function failingTarget(s: TestService, url: string) {
  const tg = await s.request('POST', '/api/targets', {
    token: s.admin.token,
    body: { kind: 'recorder', name: 'Broken', config: { url }, locale: 'en' },
  });
  const p = await s.request('POST', '/api/providers', {
    token: s.admin.token,
    body: { kind: 'example', name: 'Ex', config: { shared_token: 'sharedtoken1' } },
  });
  const tr = await s.request('POST', '/api/trackers', {
    token: s.admin.token,
    body: { provider_id: p.body.id, name: 'Tr' },
  });
  await s.request('PUT', `/api/trackers/${tr.body.id}/targets/${tg.body.id}`, { token: s.admin.token });
  const hook = new URL(p.body.webhook_url).pathname;
  const send = (name: string) =>
    s.request('POST', hook, {
      headers: { 'x-example-token': 'sharedtoken1' },
      body: { type: 'alarm', payload: { name } },
    });
  return { target: tg.body, send };
}

t.test('a receiver of another kind gets every part of the behaviour', async (t) => {
  const s = await startWith(watchdog());
  const sink = await startSink();
  sink.respond(500);
  t.teardown(async () => {
    await s.stop();
    await sink.close();
  });
  const db = s.service.core.db;
  const relay = s.service.core.services.get('relay') as any;

  const providers = (await s.request('GET', '/api/providers', { token: s.admin.token })).body.providers;
  const own = providers.filter((p: any) => p.core_managed);
  t.same(
    own.map((p: any) => [p.kind, p.name]),
    [['watchdog', 'Watchdog']],
    'created with the user, named after the plugin',
  );
  const trackers = (await s.request('GET', '/api/trackers', { token: s.admin.token })).body.trackers;
  const selfTracker = trackers.find((x: any) => x.provider_id === own[0].id);
  t.equal(selfTracker?.name, 'Watchdog', 'with one tracker of the same name');
  const other = await s.user();
  t.ok(
    await db.get('SELECT id FROM providers WHERE user_id = ? AND kind = ?', [other.id, 'watchdog']),
    'a new user gets one too',
  );
  t.equal(
    (await s.request('DELETE', `/api/providers/${own[0].id}`, { token: s.admin.token })).status,
    409,
    'not deletable',
  );
  const settings = await s.request('PATCH', '/api/self-monitoring', {
    token: s.admin.token,
    body: { target_failure_threshold: 2 },
  });
  t.equal(settings.body.provider_id, own[0].id, "settings are the receiver's");

  const { target, send } = await failingTarget(s, sink.url);
  await s.request('PUT', `/api/trackers/${selfTracker.id}/targets/${target.id}`, { token: s.admin.token });
  await send('one');
  await relay.tick();
  await send('two');
  await relay.tick();
  const raised = await db.all<{ id: string; provider_kind: string; event_type: string; payload: string }>(
    'SELECT id, provider_kind, event_type, payload FROM event_log WHERE provider_id = ?',
    [own[0].id],
  );
  t.same(
    raised.map((r) => [r.provider_kind, r.event_type]),
    [['watchdog', 'wd_targets']],
    'the signal raised as the mapped event type',
  );
  t.match(JSON.parse(raised[0]!.payload), { target_id: target.id, failures: 2, threshold: 2 });
  await relay.tick();
  const selfDelivery = await db.get('SELECT attempts, last_error FROM deliveries WHERE event_id = ?', [raised[0]!.id]);
  t.ok(Number(selfDelivery?.attempts) >= 1, 'its own notification was tried on the broken target');
  t.equal(
    Number((await db.get('SELECT consecutive_failures FROM targets WHERE id = ?', [target.id]))!.consecutive_failures),
    0,
    'and its failure was not counted',
  );
  t.equal(
    await db.get("SELECT id FROM providers WHERE kind = 'bridge_self'"),
    undefined,
    'no provider of the first-party kind',
  );
});

t.test('without a receiving plugin: no provider, counters kept, signals dropped, 404 on the settings', async (t) => {
  const s = await startWith();
  const sink = await startSink();
  sink.respond(500);
  t.teardown(async () => {
    await s.stop();
    await sink.close();
  });
  const db = s.service.core.db;
  const relay = s.service.core.services.get('relay') as any;
  t.ok(
    s.logs().some((l) => /no enabled plugin receives self-monitoring signals/.test(l.msg)),
    'said at boot',
  );
  const providers = (await s.request('GET', '/api/providers', { token: s.admin.token })).body.providers;
  t.same(providers, [], 'the user has no self-monitoring provider');
  const r = await s.request('GET', '/api/self-monitoring', { token: s.admin.token });
  t.equal(r.status, 404);
  t.equal(r.body.code, 'self_monitoring_unavailable');
  const { target, send } = await failingTarget(s, sink.url);
  for (const n of ['a', 'b', 'c', 'd', 'e', 'f']) {
    await send(n);
    await relay.tick();
  }
  t.equal(
    Number((await db.get('SELECT consecutive_failures FROM targets WHERE id = ?', [target.id]))!.consecutive_failures),
    6,
    'counted past the default threshold',
  );
  t.same(
    await relay.emitSelf(s.admin.id, 'deferredBacklog', { pending: 1, threshold: 1 }),
    [],
    'a signal has nowhere to go',
  );
  t.equal(
    Number(
      (await db.get('SELECT COUNT(*) AS n FROM event_log WHERE provider_id IS NOT NULL AND event_type <> ?', [
        'alarm',
      ]))!.n,
    ),
    0,
    'no signal event recorded',
  );
});
