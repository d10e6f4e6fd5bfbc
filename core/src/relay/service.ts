import type { Core } from '../core.ts';
import type { EmittedEvent, Locale } from '../plugin-api/index.ts';
import type { ProviderRow, TargetRow } from '../plugins/host.ts';
import type { SelfMonitoringSignal, SelfMonitoringSignals } from '../plugins/self-monitoring.ts';
import type { DispatchSide } from './pipeline/dispatch-worker-host.ts';
import type { SelfMonitor } from './pipeline/monitor.ts';
import type { TemplateCatalog } from './templates/catalog.ts';

/** What the relay pipeline offers the rest of the core (routes, jobs, backup). */
export interface RelayService {
  /** The templates the dispatcher renders with (the plugins' defaults and the operator's files). */
  readonly catalog: TemplateCatalog;
  /** The dispatcher, in this thread or its own: `wake` makes it look at the queue now. */
  readonly dispatcher: Pick<DispatchSide, 'wake'>;
  /**
   * Self-monitoring: `checkBacklog` raises the backlog signal when a user's deferred notifications pile up;
   * `lastPollAt` is a provider's last successful poll while it is held in memory (not yet written).
   */
  readonly monitor: Pick<SelfMonitor, 'checkBacklog' | 'lastPollAt'>;
  /**
   * Records an event of a provider (durable when the promise resolves) and queues its deliveries. Throws
   * InvalidEventError.
   */
  ingest(provider: ProviderRow, event: EmittedEvent): Promise<string[]>;
  /**
   * Like `ingest`, for a test event an operator raised: the event log marks it `test`, its messages carry a test
   * prefix.
   */
  ingestTest(provider: ProviderRow, event: EmittedEvent): Promise<string[]>;
  /** Sends a test message to one target now, bypassing the queue; reports the outcome. */
  sendTest(target: TargetRow, locale?: Locale): Promise<{ ok: boolean; detail: string; status_code?: number }>;
  /** A tracker's quiet hours or policies changed: recompute the release time of its deferred rows. */
  trackerChanged(trackerId: string): Promise<void>;
  /** Runs one dispatcher pass now: releases due deferred rows, sends due deliveries. For tests and shutdown. */
  tick(): Promise<void>;
  /**
   * Raises a self-monitoring signal for a user as the receiving plugin's event type, from the user's
   * self-monitoring provider. Resolves with no ids when no plugin receives signals or the user has no such provider.
   */
  emitSelf<S extends SelfMonitoringSignal>(
    userId: string,
    signal: S,
    payload: SelfMonitoringSignals[S],
  ): Promise<string[]>;
  /** Runs one scheduled action now and records its outcome. */
  runAction(actionId: string): Promise<void>;
}

export class InvalidEventError extends Error {}

export const relayOf = (core: Core): RelayService => {
  const r = core.services.get('relay') as RelayService | undefined;
  if (!r) throw new Error('relay service is not registered');
  return r;
};
