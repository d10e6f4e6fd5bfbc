import { setImmediate as nextTurn } from 'node:timers/promises';
import client from 'prom-client';
import { LoopDelay, type LoopDelayFigures } from './loop-delay.ts';

/**
 * prom-client's event-loop delay metrics, which `loop-delay.ts` takes over (same names and meaning), and the
 * resolution that keeps prom-client's own monitor from ever firing: it starts one with its default metrics and offers
 * no way to leave it out, and at this interval (the longest libuv takes, ~24.8 days) its timer never wakes the process.
 */
const LOOP_DELAY_FIGURES: readonly [keyof LoopDelayFigures, string][] = [
  ['min', 'The minimum recorded event loop delay.'],
  ['max', 'The maximum recorded event loop delay.'],
  ['mean', 'The mean of the recorded event loop delays.'],
  ['stddev', 'The standard deviation of the recorded event loop delays.'],
  ['p50', 'The 50th percentile of the recorded event loop delays.'],
  ['p90', 'The 90th percentile of the recorded event loop delays.'],
  ['p99', 'The 99th percentile of the recorded event loop delays.'],
];
const figureMetric = (k: keyof LoopDelayFigures) => `nodejs_eventloop_lag_${k}_seconds`;
const LOOP_DELAY_METRICS = ['nodejs_eventloop_lag_seconds', ...LOOP_DELAY_FIGURES.map(([k]) => figureMetric(k))];
const NEVER_MS = 2 ** 31 - 1;

/** The service's Prometheus metrics, on a registry of its own (tests build several services in one process). */
export class Metrics {
  readonly registry = new client.Registry();
  readonly deferredPending: client.Gauge;
  readonly eventLogTotal: client.Counter<'status' | 'event_type'>;
  readonly dispatchDuration: client.Histogram<'channel'>;
  readonly pollFailures: client.Counter<'provider_type'>;
  readonly sendFailures: client.Counter<'target_type' | 'status_code'>;
  /** Samples the event loop's delay once the service runs (`start`), until it stops. */
  readonly loopDelay = new LoopDelay();

  constructor(collectDeferred: () => Promise<number>) {
    client.collectDefaultMetrics({ register: this.registry, eventLoopMonitoringPrecision: NEVER_MS });
    // These gauges carry a counter's `_total` suffix, which Prometheus's own linter rejects.
    for (const name of ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total'])
      this.registry.removeSingleMetric(name);
    for (const name of LOOP_DELAY_METRICS) this.registry.removeSingleMetric(name);
    this.registerLoopDelay();
    this.deferredPending = new client.Gauge({
      name: 'service_deferred_pending',
      help: 'Pending deferred_dispatch rows, refreshed on each scrape.',
      registers: [this.registry],
      async collect() {
        this.set(await collectDeferred());
      },
    });
    this.eventLogTotal = new client.Counter({
      name: 'service_event_log_total',
      help: 'Events written to event_log.',
      labelNames: ['status', 'event_type'],
      registers: [this.registry],
    });
    this.dispatchDuration = new client.Histogram({
      name: 'service_dispatch_duration_seconds',
      help: 'Duration of one outbound dispatch.',
      labelNames: ['channel'],
      registers: [this.registry],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    });
    this.pollFailures = new client.Counter({
      name: 'service_provider_poll_failures_total',
      help: 'Failed provider polls.',
      labelNames: ['provider_type'],
      registers: [this.registry],
    });
    this.sendFailures = new client.Counter({
      name: 'service_target_send_failures_total',
      help: 'Failed sends; status_code is the HTTP status, 0 when there was no HTTP response.',
      labelNames: ['target_type', 'status_code'],
      registers: [this.registry],
    });
  }

  /**
   * `nodejs_eventloop_lag_seconds` is how long a turn of the loop takes to come at the scrape; the others describe
   * the delays sampled since the last scrape (0 when none was: at most one a second while idle).
   */
  private registerLoopDelay(): void {
    const loop = this.loopDelay;
    const gauges = new Map<keyof LoopDelayFigures, client.Gauge>();
    new client.Gauge({
      name: LOOP_DELAY_METRICS[0],
      help: 'Lag of event loop in seconds.',
      registers: [this.registry],
      // This one metric's collect sets all of them, as prom-client's does (a registry collects in order).
      async collect() {
        const figures = loop.take();
        for (const [k, g] of gauges) g.set(figures[k]);
        const from = performance.now();
        await nextTurn();
        this.set((performance.now() - from) / 1e3);
      },
    });
    for (const [k, help] of LOOP_DELAY_FIGURES)
      gauges.set(k, new client.Gauge({ name: figureMetric(k), help, registers: [this.registry] }));
  }
}
