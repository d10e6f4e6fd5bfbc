/**
 * Which loaded plugin receives the core's self-monitoring signals: a provider with coreManaged,
 * ingest "internal" and an event type declared for each signal; at most one; found once per host.
 */
import type { Test } from 'tap';
import t from 'tap';
import type { LoadedPlugin } from './loader.ts';
import { PluginLoadError } from './loader.ts';
import { findSelfMonitoringReceiver, selfMonitoringOf } from './self-monitoring.ts';

const EVENTS = { pollFailures: 'self_poll', deferredBacklog: 'self_backlog', targetFailures: 'self_target' };
const EVENTS_DECLARED = { self_poll: {}, self_backlog: {}, self_target: {} };

/** A loaded plugin whose manifest is a complete receiver, changed by `manifest` and `plugin`. */
function plugin(manifest: Record<string, unknown> = {}, plugin: Record<string, unknown> = {}): LoadedPlugin {
  return {
    packageName: '@acme/self',
    id: 'acme_self',
    kind: 'provider',
    def: {
      manifest: {
        id: 'acme_self',
        kind: 'provider',
        displayName: 'Acme self',
        coreManaged: true,
        ingest: 'internal',
        selfMonitoring: { events: { ...EVENTS } },
        events: { ...EVENTS_DECLARED },
        ...manifest,
      },
    },
    ...plugin,
  } as unknown as LoadedPlugin;
}

/** The message of the PluginLoadError `fn` throws. */
function refusal(t: Test, fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    t.ok(err instanceof PluginLoadError, 'a PluginLoadError');
    return (err as Error).message;
  }
  t.fail('no error');
  return '';
}

t.test('a complete receiver: its kind id, display name and one event type per signal', async (t) => {
  const r = findSelfMonitoringReceiver([plugin()]);
  t.strictSame(r, { kind: 'acme_self', name: 'Acme self', events: EVENTS });
  t.notOk(Object.hasOwn(r!, 'packageName'), 'no package name in the answer');
});

t.test('plugins without selfMonitoring are skipped, wherever they are', async (t) => {
  const plain = plugin({ selfMonitoring: undefined, kind: 'target' }, { packageName: '@acme/plain', kind: 'target' });
  t.equal(findSelfMonitoringReceiver([]), undefined, 'no plugins: none');
  t.equal(findSelfMonitoringReceiver([plain]), undefined, 'no declaration: none');
  t.strictSame(findSelfMonitoringReceiver([plain, plugin(), plain])?.kind, 'acme_self');
});

t.test('only a core-managed provider with ingest "internal" may receive the signals', async (t) => {
  const why =
    'Plugin package "@acme/self" declares selfMonitoring but is not a provider with coreManaged: true and ' +
    'ingest: "internal".';
  t.equal(
    refusal(t, () => findSelfMonitoringReceiver([plugin({}, { kind: 'target' })])),
    why,
    'a target is refused',
  );
  t.equal(
    refusal(t, () => findSelfMonitoringReceiver([plugin({ coreManaged: false })])),
    why,
    'a provider users create is refused',
  );
  t.equal(
    refusal(t, () => findSelfMonitoringReceiver([plugin({ coreManaged: undefined })])),
    why,
    'coreManaged left out is refused',
  );
  t.equal(
    refusal(t, () => findSelfMonitoringReceiver([plugin({ ingest: 'webhook' })])),
    why,
    'a webhook provider is refused',
  );
});

t.test('every signal must name an event type the plugin declares', async (t) => {
  for (const s of ['pollFailures', 'deferredBacklog', 'targetFailures'] as const) {
    const why =
      `Plugin package "@acme/self" declares selfMonitoring but maps the signal "${s}" to an event type it does ` +
      'not declare in events.';
    t.equal(
      refusal(t, () =>
        findSelfMonitoringReceiver([plugin({ selfMonitoring: { events: { ...EVENTS, [s]: undefined } } })]),
      ),
      why,
      `${s} not mapped`,
    );
    t.equal(
      refusal(t, () => findSelfMonitoringReceiver([plugin({ selfMonitoring: { events: { ...EVENTS, [s]: 7 } } })])),
      why,
      `${s} mapped to a number`,
    );
    t.equal(
      refusal(t, () =>
        findSelfMonitoringReceiver([plugin({ selfMonitoring: { events: { ...EVENTS, [s]: 'not_declared' } } })]),
      ),
      why,
      `${s} mapped to an undeclared event type`,
    );
  }
  t.match(
    refusal(t, () =>
      findSelfMonitoringReceiver([
        plugin({
          selfMonitoring: { events: { ...EVENTS, deferredBacklog: 7 } },
          events: { ...EVENTS_DECLARED, 7: {} },
        }),
      ]),
    ),
    /the signal "deferredBacklog"/,
    'a number is refused even when an event type of that name is declared',
  );
  t.match(
    refusal(t, () => findSelfMonitoringReceiver([plugin({ selfMonitoring: {} })])),
    /the signal "pollFailures"/,
    'a declaration without events',
  );
  t.match(
    refusal(t, () => findSelfMonitoringReceiver([plugin({ events: undefined })])),
    /the signal "pollFailures"/,
    'a plugin without events',
  );
});

t.test('two receivers are refused, naming both packages', async (t) => {
  const other = plugin({}, { packageName: '@acme/other' });
  t.equal(
    refusal(t, () => findSelfMonitoringReceiver([plugin(), other])),
    'Plugin packages "@acme/self" and "@acme/other" both receive self-monitoring signals; enable only one.',
  );
});

t.test('the answer is a copy: changing the manifest afterwards does not change it', async (t) => {
  const p = plugin();
  const r = findSelfMonitoringReceiver([p]);
  (p.def.manifest.selfMonitoring as { events: Record<string, string> }).events.pollFailures = 'self_target';
  t.equal(r?.events.pollFailures, 'self_poll');
});

t.test('a running core: the receiver is found once per plugin host, a missing one too', async (t) => {
  const host = { plugins: new Map<string, LoadedPlugin>([['acme_self', plugin()]]) };
  const first = selfMonitoringOf({ plugins: host });
  t.strictSame(first, { kind: 'acme_self', name: 'Acme self', events: EVENTS });
  host.plugins.clear();
  t.equal(selfMonitoringOf({ plugins: host }), first, 'the same answer, not looked up again');

  const bare = { plugins: new Map<string, LoadedPlugin>() };
  t.equal(selfMonitoringOf({ plugins: bare }), undefined, 'none');
  bare.plugins.set('acme_self', plugin());
  t.equal(selfMonitoringOf({ plugins: bare }), undefined, 'still none: the missing receiver is remembered');

  const again = { plugins: new Map<string, LoadedPlugin>([['acme_self', plugin()]]) };
  t.strictSame(selfMonitoringOf({ plugins: again })?.kind, 'acme_self', 'another host looks for its own');
});
