import client from 'prom-client';

/** The service's Prometheus metrics, on a registry of its own (tests build several services in one process). */
export class Metrics {
  readonly registry = new client.Registry();
  readonly deferredPending: client.Gauge;
  readonly eventLogTotal: client.Counter<'status' | 'event_type'>;
  readonly dispatchDuration: client.Histogram<'channel'>;
  readonly pollFailures: client.Counter<'provider_type'>;
  readonly sendFailures: client.Counter<'target_type' | 'status_code'>;

  constructor(collectDeferred: () => Promise<number>) {
    client.collectDefaultMetrics({ register: this.registry });
    // These gauges carry a counter's `_total` suffix, which Prometheus's own linter rejects.
    for (const name of ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total'])
      this.registry.removeSingleMetric(name);
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
}
