import type { Core } from '../../core.ts';
import { Database } from '../../db/database.ts';
import { newId } from '../../http/ids.ts';
import { liveOf } from '../../live/hints.ts';
import type { EmittedEvent, Locale } from '../../plugin-api/index.ts';
import { errorCode } from '../../plugin-api/index.ts';
import { type ProviderRow, providerRowFrom, type TargetRow } from '../../plugins/host.ts';
import {
  type SelfMonitoringSignal,
  type SelfMonitoringSignals,
  selfMonitoringOf,
} from '../../plugins/self-monitoring.ts';
import { runAction } from '../actions/runner.ts';
import type { ProviderDbRow } from '../definitions/provider.ts';
import { isQuiet, type QuietWindow, quietEnd } from '../quiet-hours/quiet-hours.ts';
import type { RelayService } from '../service.ts';
import { TemplateCatalog } from '../templates/catalog.ts';
import { type DispatchSide, DispatchThread } from './dispatch-worker-host.ts';
import { Dispatcher } from './dispatcher.ts';
import { fitMessage } from './fit.ts';
import { type IngestResult, ingestEvent, type WriteOptions, writeEvent } from './ingest.ts';
import { SelfMonitor } from './monitor.ts';
import { renderMessage } from './render.ts';

/** The relay pipeline, assembled: ingest → event_log → deliveries → dispatcher, with self-monitoring. */
export class Relay implements RelayService {
  readonly catalog: TemplateCatalog;
  /** In this thread, or in a worker thread of its own (SERVICE_DISPATCH_THREAD). */
  readonly dispatcher: DispatchSide;
  readonly monitor: SelfMonitor;
  private core: Core;

  constructor(core: Core) {
    this.core = core;
    this.catalog = new TemplateCatalog([...core.plugins.plugins.values()]);
    this.monitor = new SelfMonitor(core, (userId, signal, payload) => this.emitSelf(userId, signal, payload));
    this.dispatcher = core.config.dispatchThread
      ? new DispatchThread(core, (userId, signal, payload) => this.emitSelf(userId, signal, payload))
      : new Dispatcher(core, this.catalog, this.monitor);
    core.plugins.setHooks({
      emit: (provider, event) => this.ingest(provider, event),
      pollResult: (provider, trackers, error) => this.monitor.pollResult(provider, trackers, error),
      authFailed: async (provider, error) => {
        const trackers = await core.plugins.trackerViews(provider.id, provider.kind);
        await this.emitSelf(provider.user_id, 'pollFailures', {
          provider_id: provider.id,
          provider_name: provider.name,
          provider_kind: provider.kind,
          tracker_name: trackers[0]?.name ?? provider.name,
          failures: 1,
          threshold: 1,
          last_error: `credential rejected: ${error.message}`.slice(0, 500),
        });
      },
    });
  }

  async ingest(provider: ProviderRow, event: EmittedEvent): Promise<string[]> {
    return (await this.ingestWith(provider, event)).eventIds;
  }

  /**
   * Ingests one event; `write.webhook` is recorded on the event's row and `write.extra` runs in its
   * transaction (the webhook route's payload-log entry and replay key, so one commit makes all of
   * it durable). When the dispatcher has room, the event's queued deliveries are written claimed
   * and sent at once.
   */
  async ingestWith(
    provider: ProviderRow,
    event: EmittedEvent,
    write?: Pick<WriteOptions, 'extra' | 'webhook' | 'configSynced'>,
    test?: boolean,
  ): Promise<IngestResult> {
    const leaseUntil = this.dispatcher.handoffLease();
    const r = await ingestEvent(this.core, provider, event, {
      leaseUntil,
      extra: write?.extra,
      webhook: write?.webhook,
      configSynced: write?.configSynced,
      test,
    });
    if (r.handed.length) this.dispatcher.accept(r.handed);
    if (r.queued) this.dispatcher.wake();
    for (const u of r.deferredUsers) await this.monitor.checkBacklog(u);
    return r;
  }

  /** A test event an operator raised: ingested like any event, recorded and rendered as a test. */
  async ingestTest(provider: ProviderRow, event: EmittedEvent): Promise<string[]> {
    return (await this.ingestWith(provider, event, undefined, true)).eventIds;
  }

  async emitSelf<S extends SelfMonitoringSignal>(
    userId: string,
    signal: S,
    payload: SelfMonitoringSignals[S],
  ): Promise<string[]> {
    const receiver = selfMonitoringOf(this.core);
    if (!receiver) return [];
    const row = await this.core.db.get<ProviderDbRow>('SELECT * FROM providers WHERE user_id = ? AND kind = ?', [
      userId,
      receiver.kind,
    ]);
    if (!row) return [];
    return this.ingest(providerRowFrom(row), {
      type: receiver.events[signal],
      payload: payload as Record<string, unknown>,
    });
  }

  /** An event that does not come from a provider (actions): goes straight to the given targets. */
  async emitDirect(
    userId: string,
    type: string,
    payload: Record<string, unknown>,
    targetIds: string[],
  ): Promise<string[]> {
    const deliveries = new Map(targetIds.map((id) => [id, { d: { status: 'queued' as const }, trackerId: null }]));
    const r = await writeEvent(this.core, {
      userId,
      providerId: null,
      providerKind: 'action',
      type,
      severity: 'info',
      payload,
      occurredAt: this.core.clock.now(),
      deliveries,
    });
    if (r.queued) this.dispatcher.wake();
    return r.eventIds;
  }

  async sendTest(target: TargetRow, locale?: Locale): Promise<{ ok: boolean; detail: string; status_code?: number }> {
    const plugin = this.core.plugins.target(target.kind);
    if (!plugin) return { ok: false, detail: `target kind "${target.kind}" is not enabled` };
    const loc = locale ?? (target.locale === 'ru' ? 'ru' : 'en');
    const msg = {
      ...renderMessage(this.catalog, {
        deliveryId: newId(),
        eventId: newId(),
        eventType: 'test_message',
        severity: 'info',
        locale: loc,
        payload: {},
        providerKind: 'herald',
        targetName: target.name,
        occurredAt: this.core.clock.now().toISOString(),
        formats: plugin.def.manifest.limits?.formats ?? ['text'],
      }),
      test: true,
    };
    const started = performance.now();
    try {
      const instance = await this.core.plugins.targetInstance(target);
      // Fitted to the declared limits like any delivery (a test message is short: one part as a rule).
      let r: Awaited<ReturnType<typeof instance.send>> | undefined;
      for (const part of fitMessage(msg, plugin.def.manifest.limits))
        r = await instance.send(part, { signal: AbortSignal.timeout(30_000), attempt: 1 });
      this.core.metrics.dispatchDuration.observe({ channel: target.kind }, (performance.now() - started) / 1000);
      return { ok: true, detail: r && r.detail ? r.detail : 'The test message was delivered.' };
    } catch (err) {
      const status = Number((err as { statusCode?: number }).statusCode ?? 0) || 0;
      this.core.metrics.sendFailures.inc({ target_type: target.kind, status_code: String(status) });
      const kind = errorCode(err) === 'AUTH_FAILED' ? 'The credential was rejected: ' : '';
      return { ok: false, detail: `${kind}${(err as Error).message}`, ...(status ? { status_code: status } : {}) };
    }
  }

  async trackerChanged(trackerId: string): Promise<void> {
    const t = await this.core.db.get('SELECT quiet_hours, user_id FROM trackers WHERE id = ?', [trackerId]);
    const w = Database.json<QuietWindow | null>(t?.quiet_hours, null);
    const now = this.core.clock.now();
    const releaseAt = !w || !isQuiet(w, now) ? now : quietEnd(w, now);
    await this.core.db.run('UPDATE deferred_dispatch SET release_at = ? WHERE tracker_id = ?', [
      releaseAt.toISOString(),
      trackerId,
    ]);
    await this.core.db.run(`UPDATE deliveries SET next_attempt_at = ? WHERE tracker_id = ? AND status = 'deferred'`, [
      releaseAt.toISOString(),
      trackerId,
    ]);
    // The deferred queue shows the release times.
    if (t) liveOf(this.core.services).publish(String(t.user_id), { kind: 'deferred' });
    this.dispatcher.wake();
  }

  tick(): Promise<void> {
    return this.dispatcher.tick();
  }

  runAction(actionId: string): Promise<void> {
    return runAction(this.core, this, actionId);
  }
}
