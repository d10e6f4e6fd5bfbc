/**
 * The provider that receives the core's self-monitoring signals, found through the manifests of
 * the loaded plugins (`selfMonitoring`): the core names no plugin kind or event type itself.
 */
import type { SelfMonitoringSignal, SelfMonitoringSignals } from '../plugin-api/index.ts';
import { type LoadedPlugin, PluginLoadError } from './loader.ts';

export interface SelfMonitoringReceiver {
  /** The receiving plugin's kind id, as stored in `providers.kind`. */
  kind: string;
  /** Name of the per-user instance and its tracker when the core creates them. */
  name: string;
  /** The event type raised for each signal. */
  events: { [S in SelfMonitoringSignal]: string };
}

export type { SelfMonitoringSignal, SelfMonitoringSignals };

const SIGNALS: SelfMonitoringSignal[] = ['pollFailures', 'deferredBacklog', 'targetFailures'];

/**
 * The receiver among `plugins`, or undefined when none declares `selfMonitoring`. Throws
 * PluginLoadError when a declaration is unusable or two plugins declare it.
 */
export function findSelfMonitoringReceiver(plugins: Iterable<LoadedPlugin>): SelfMonitoringReceiver | undefined {
  let found: (SelfMonitoringReceiver & { packageName: string }) | undefined;
  for (const p of plugins) {
    const m = p.def.manifest;
    const spec = m.selfMonitoring;
    if (!spec) continue;
    const refuse = (why: string) =>
      new PluginLoadError(`Plugin package "${p.packageName}" declares selfMonitoring but ${why}.`);
    if (p.kind !== 'provider' || !m.coreManaged || m.ingest !== 'internal')
      throw refuse('is not a provider with coreManaged: true and ingest: "internal"');
    for (const s of SIGNALS) {
      const type = spec.events?.[s];
      if (typeof type !== 'string' || !m.events?.[type])
        throw refuse(`maps the signal "${s}" to an event type it does not declare in events`);
    }
    if (found)
      throw new PluginLoadError(
        `Plugin packages "${found.packageName}" and "${p.packageName}" both receive self-monitoring ` +
          'signals; enable only one.',
      );
    found = { packageName: p.packageName, kind: p.id, name: m.displayName, events: { ...spec.events } };
  }
  if (!found) return undefined;
  const { packageName: _, ...receiver } = found;
  return receiver;
}

const cache = new WeakMap<object, SelfMonitoringReceiver | null>();

/**
 * The receiver of a running core (found once per plugin host). Undefined when no enabled plugin
 * receives the signals: users then get no self-monitoring provider, the counters are still kept,
 * and signals are dropped.
 */
export function selfMonitoringOf(core: {
  plugins: { plugins: Map<string, LoadedPlugin> };
}): SelfMonitoringReceiver | undefined {
  const host = core.plugins;
  let r = cache.get(host);
  if (r === undefined) {
    r = findSelfMonitoringReceiver(host.plugins.values()) ?? null;
    cache.set(host, r);
  }
  return r ?? undefined;
}
