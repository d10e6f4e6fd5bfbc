/**
 * Keeps one Home Assistant session alive: connects, reconnects with exponential backoff and
 * jitter after any loss, gives up only on a rejected token, and reports each connect and each
 * loss of an established connection as `ha_status_*` events.
 */
import type { Clock, EmittedEvent, HealthReport, OutboundHttp, PluginLogger } from '@herald/plugin-api';
import type { HaConfig, Timings } from './config.ts';
import { websocketUrl } from './config.ts';
import type { HaSession } from './connection.ts';
import { AuthRejectedError, openSession } from './connection.ts';
import type { EventRouter } from './router.ts';
import { createEventRouter, subscribedEventTypes } from './router.ts';

export type SupervisorState = 'idle' | 'connecting' | 'connected' | 'reconnecting' | 'auth_failed' | 'stopped';

export interface SupervisorDeps {
  config: HaConfig;
  timings: Timings;
  http: OutboundHttp;
  log: PluginLogger;
  clock: Clock;
  emit(event: EmittedEvent): Promise<unknown>;
}

/** Delay before reconnect attempt `attempt` (0-based): doubling from min, capped, "equal jitter". */
export function backoffDelay(
  attempt: number,
  minMs: number,
  maxMs: number,
  random: () => number = Math.random,
): number {
  const ceiling = Math.min(maxMs, minMs * 2 ** Math.min(attempt, 30));
  return Math.round(ceiling / 2 + random() * (ceiling / 2));
}

/** Resolves after `ms`, or at once when `signal` aborts. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) {
      resolve();
      return;
    }
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}

const errorText = (err: unknown): string => (err instanceof Error ? err.message : String(err));

export class Supervisor {
  state: SupervisorState = 'idle';
  private lastError: string | undefined;
  private session: HaSession | undefined;
  private loop: Promise<void> | undefined;
  private emitChain: Promise<void> = Promise.resolve();
  private readonly halt = new AbortController();
  private readonly router: EventRouter;
  private readonly deps: SupervisorDeps;
  private readonly url: URL;

  constructor(deps: SupervisorDeps) {
    this.deps = deps;
    this.url = websocketUrl(deps.config.base_url);
    this.router = createEventRouter(deps.config, (e) => this.enqueue(e));
  }

  /** The `host:port` shown in status events and logs (never the token). */
  get host(): string {
    return this.url.host;
  }

  /** Starts the connection loop in the background; never waits for Home Assistant. */
  start(): void {
    if (this.loop) return;
    this.loop = this.run().catch((err) => {
      this.deps.log.error({ err }, 'Home Assistant supervisor crashed');
      this.state = 'stopped';
    });
  }

  /** Stops reconnecting, closes the socket and waits (bounded) for queued emits. */
  async stop(): Promise<void> {
    if (this.state === 'stopped') return;
    this.state = 'stopped';
    this.stopping = true;
    this.router.clear();
    // A clean close first for an established session; the abort then ends a handshake or a backoff sleep.
    const closing = this.session?.close();
    this.halt.abort();
    await closing;
    // The loop may sit in a DNS lookup that cannot be cancelled; it exits on its own afterwards.
    const bound = () => new Promise((r) => setTimeout(r, this.deps.timings.closeTimeoutMs).unref());
    await Promise.race([this.loop, bound()]);
    await Promise.race([this.emitChain, bound()]);
  }

  health(): HealthReport {
    switch (this.state) {
      case 'connected':
        return { status: 'ok', detail: `connected to ${this.host}` };
      case 'auth_failed':
        return { status: 'error', detail: 'access token rejected' };
      case 'stopped':
        return { status: 'degraded', detail: 'stopped' };
      case 'idle':
        return { status: 'degraded', detail: 'not started' };
      default:
        return { status: 'degraded', detail: this.lastError ? `reconnecting: ${this.lastError}` : 'connecting' };
    }
  }

  /** Emits in arrival order; a failing emit is logged and does not stop the stream. */
  private enqueue(event: EmittedEvent): void {
    this.emitChain = this.emitChain
      .then(() => this.deps.emit(event))
      .then(
        () => undefined,
        (err) => {
          this.deps.log.error({ err, eventType: event.type }, 'could not emit a Home Assistant event');
        },
      );
  }

  private stopping = false;
  private get stopped(): boolean {
    return this.stopping;
  }

  private async run(): Promise<void> {
    const { log, clock, timings, config } = this.deps;
    let attempt = 0;
    let everConnected = false;
    let lostAt: number | undefined;
    this.state = 'connecting';
    while (!this.stopped) {
      try {
        const target = await this.deps.http.resolveAllowed(this.url.hostname);
        if (this.stopped) break;
        const session = await openSession({
          url: this.url,
          token: config.access_token,
          address: target.address,
          family: target.family,
          eventTypes: subscribedEventTypes(config),
          timings,
          log,
          signal: this.halt.signal,
          onEvent: (e) => this.router.handle(e),
        });
        this.session = session;
        if (this.stopped) {
          await session.close();
          break;
        }
        const connectedAt = clock.now().getTime();
        this.state = 'connected';
        this.lastError = undefined;
        attempt = 0;
        log.info({ host: this.host, haVersion: session.haVersion }, 'connected to Home Assistant');
        this.enqueue({
          type: 'ha_status_connected',
          payload: {
            host: this.host,
            first_connect: !everConnected,
            ...(session.haVersion ? { ha_version: session.haVersion } : {}),
            ...(lostAt !== undefined
              ? { downtime_seconds: Math.max(0, Math.round((connectedAt - lostAt) / 1000)) }
              : {}),
          },
        });
        everConnected = true;
        const reason = await session.closed;
        this.session = undefined;
        if (this.stopped) break;
        lostAt = clock.now().getTime();
        this.state = 'reconnecting';
        this.lastError = reason;
        log.warn({ host: this.host, reason }, 'lost the connection to Home Assistant; reconnecting');
        this.enqueue({
          type: 'ha_status_disconnected',
          payload: {
            host: this.host,
            reason,
            connected_seconds: Math.max(0, Math.round((lostAt - connectedAt) / 1000)),
          },
        });
      } catch (err) {
        this.session = undefined;
        if (this.stopped) break;
        if (err instanceof AuthRejectedError) {
          this.state = 'auth_failed';
          this.lastError = 'access token rejected';
          log.error(
            { host: this.host },
            'Home Assistant rejected the access token; not reconnecting until the provider is reconfigured',
          );
          return;
        }
        this.state = everConnected || attempt > 0 ? 'reconnecting' : 'connecting';
        this.lastError = errorText(err);
        // Log once per outage; the retries stay at debug level.
        if (attempt === 0)
          log.warn({ host: this.host, error: this.lastError }, 'cannot connect to Home Assistant; retrying');
        else log.debug({ host: this.host, error: this.lastError, attempt }, 'reconnect attempt failed');
      }
      if (this.stopped) break;
      await sleep(backoffDelay(attempt++, timings.reconnectMinMs, timings.reconnectMaxMs), this.halt.signal);
    }
  }
}
