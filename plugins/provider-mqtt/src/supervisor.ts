/**
 * Keeps one MQTT session alive for a provider instance: the first connection is made in
 * `start()` (so a refused login or a refused address shows on the provider's status), later
 * losses are retried with exponential backoff and jitter, each connect and each loss of an
 * established connection is reported as an `mqtt_status_*` event, and every message goes through
 * the mapping into `emit()` before the broker gets its PUBACK.
 */

import type { Clock, EmittedEvent, HealthReport, InstanceStore, OutboundHttp, PluginLogger } from '@herald/plugin-api';
import { AuthFailedError, ConfigError, NotReadyError } from '@herald/plugin-api';
import type { MqttConfig, Timings } from './config.ts';
import { brokerAddress } from './config.ts';
import type { InboundMessage, Session, Subscription, SubscriptionPlan } from './connection.ts';
import { openSession } from './connection.ts';
import type { ConnectFailure } from './errors.ts';
import { bilingual, classifyConnectError, explain } from './errors.ts';
import type { CompiledMapping } from './mapping.ts';
import { mapMessage } from './mapping.ts';
import { topicMatches } from './topics.ts';

export type SupervisorState = 'idle' | 'connecting' | 'connected' | 'reconnecting' | 'auth_failed' | 'stopped';

export interface SupervisorDeps {
  config: MqttConfig;
  clientId: string;
  mapping: CompiledMapping;
  timings: Timings;
  http: OutboundHttp;
  store: InstanceStore;
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

/** Store key of the subscriptions the broker holds for this client id (a persistent session outlives the config). */
const SUBSCRIPTIONS_KEY = 'subscriptions';
interface StoredSubscriptions {
  client_id: string;
  topics: Record<string, number>;
}

/** `$share/<group>/<filter>` is matched by its filter. */
const filterOf = (topic: string): string => topic.replace(/^\$share\/[^/]+\//, '');

export class Supervisor {
  state: SupervisorState = 'idle';
  private lastError: string | undefined;
  private refused: string[] = [];
  private session: Session | undefined;
  private loop: Promise<void> | undefined;
  private statusChain: Promise<void> = Promise.resolve();
  private readonly halt = new AbortController();
  private readonly deps: SupervisorDeps;
  private readonly broker: ReturnType<typeof brokerAddress>;
  private readonly wanted: Subscription[];
  private stored: StoredSubscriptions | undefined;

  constructor(deps: SupervisorDeps) {
    this.deps = deps;
    this.broker = brokerAddress(deps.config.url);
    this.wanted = [...new Set(deps.config.topics)].map((topic) => ({ topic, qos: deps.config.qos }));
  }

  /** `host:port` as shown in status events, health and logs. */
  get brokerName(): string {
    return this.broker.display;
  }

  private get stopped(): boolean {
    return this.halt.signal.aborted;
  }

  /**
   * Makes the first connection. Throws AuthFailedError when the broker refuses the login,
   * ConfigError when it can never work as configured (address not allowed, client id refused),
   * NotReadyError when the broker cannot be reached now (the core starts the instance again later).
   * Once connected, later losses are retried here, in the background.
   */
  async start(): Promise<void> {
    if (this.loop || this.stopped) return;
    this.state = 'connecting';
    let session: Session;
    try {
      session = await this.connect();
    } catch (err) {
      const failure = this.failure(err);
      this.lastError = failure.texts.en;
      if (this.stopped) return;
      this.state = failure.kind === 'auth' ? 'auth_failed' : 'idle';
      this.deps.log.warn(
        { broker: this.brokerName, reason: failure.reason, error: failure.texts.en },
        'cannot connect to the MQTT broker',
      );
      const text = bilingual(failure.texts);
      if (failure.kind === 'auth') throw new AuthFailedError(text, { cause: err });
      if (failure.kind === 'config') throw new ConfigError(text, { cause: err });
      throw new NotReadyError(text, { cause: err });
    }
    if (this.stopped) {
      await session.close(this.deps.timings.closeTimeoutMs);
      return;
    }
    this.loop = this.run(session).catch((err) => {
      this.deps.log.error({ err }, 'MQTT supervisor crashed');
      this.state = 'stopped';
    });
  }

  /** Stops reconnecting, lets the message being recorded finish (bounded), disconnects. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.state = 'stopped';
    this.halt.abort();
    const closeMs = this.deps.timings.closeTimeoutMs;
    await this.session?.close(closeMs);
    const bound = () => new Promise((r) => setTimeout(r, closeMs).unref());
    await Promise.race([this.loop, bound()]);
    await Promise.race([this.statusChain, bound()]);
  }

  health(): HealthReport {
    switch (this.state) {
      case 'connected':
        return this.refused.length
          ? {
              status: 'degraded',
              detail: bilingual(
                explain('subscription_refused', { broker: this.brokerName, topics: this.refused.join(', ') }),
              ),
            }
          : { status: 'ok', detail: `connected to ${this.brokerName}` };
      case 'auth_failed':
        return { status: 'error', detail: this.lastError ?? 'login refused' };
      case 'stopped':
        return { status: 'degraded', detail: 'stopped' };
      case 'idle':
        return { status: 'degraded', detail: this.lastError ?? 'not started' };
      default:
        return { status: 'degraded', detail: this.lastError ? `reconnecting: ${this.lastError}` : 'connecting' };
    }
  }

  private failure(err: unknown): ConnectFailure {
    return classifyConnectError(err, {
      broker: this.brokerName,
      clientId: this.deps.clientId,
      timeoutMs: this.deps.timings.connectTimeoutMs,
    });
  }

  /** Status events go out in order, off the message path: a failure is logged, never blocks messages. */
  private status(event: EmittedEvent): void {
    this.statusChain = this.statusChain
      .then(() => this.deps.emit(event))
      .then(
        () => undefined,
        (err) => {
          this.deps.log.error({ err, eventType: event.type }, 'could not record an MQTT status event');
        },
      );
  }

  /** Resolves the broker through the address policy, then opens a session. */
  private async connect(): Promise<Session> {
    const { config, timings, log } = this.deps;
    this.stored ??= await this.deps.store.get<StoredSubscriptions>(SUBSCRIPTIONS_KEY);
    const target = await this.deps.http.resolveAllowed(this.broker.host);
    if (this.stopped) throw new Error('stopped');
    let planned: SubscriptionPlan = { subscribe: [], unsubscribe: [] };
    const session = await openSession({
      tls: this.broker.tls,
      host: this.broker.host,
      port: this.broker.port,
      address: target.address,
      clientId: this.deps.clientId,
      username: config.username,
      password: config.password,
      clean: config.clean_session,
      keepaliveSeconds: timings.keepaliveSeconds,
      connectTimeoutMs: timings.connectTimeoutMs,
      plan: (present) => (planned = this.plan(present)),
      onMessage: (m) => this.handle(m),
      log,
      signal: this.halt.signal,
    });
    this.session = session;
    this.refused = session.refused;
    if (session.refused.length)
      log.warn({ broker: this.brokerName, topics: session.refused }, 'the broker refused some subscriptions');
    if (planned.subscribe.length || planned.unsubscribe.length) {
      const topics = Object.fromEntries(
        this.wanted.filter((s) => !session.refused.includes(s.topic)).map((s) => [s.topic, s.qos]),
      );
      this.stored = { client_id: this.deps.clientId, topics };
      await this.deps.store
        .set(SUBSCRIPTIONS_KEY, this.stored)
        .catch((err) => log.warn({ err }, 'could not remember the subscriptions'));
    }
    return session;
  }

  /**
   * The subscriptions to change. A session the broker kept already holds what this client id
   * subscribed to before (possibly under an older config): only the difference is sent, so a
   * resumed session does not make the broker replay every retained message again.
   */
  private plan(sessionPresent: boolean): SubscriptionPlan {
    const before = this.stored?.client_id === this.deps.clientId ? this.stored.topics : undefined;
    if (!sessionPresent || !before) return { subscribe: this.wanted, unsubscribe: [] };
    const now = new Map(this.wanted.map((s) => [s.topic, s.qos]));
    return {
      subscribe: this.wanted.filter((s) => before[s.topic] !== s.qos),
      unsubscribe: Object.keys(before).filter((topic) => !now.has(topic)),
    };
  }

  /** One message: mapped and recorded; resolves once durable (the PUBACK follows), rejects to withhold it. */
  private async handle(m: InboundMessage): Promise<void> {
    const { config, log } = this.deps;
    // A resumed session may still carry a subscription the config no longer has: acknowledged, not relayed.
    if (!this.wanted.some((s) => topicMatches(filterOf(s.topic), m.topic))) {
      log.debug({ topic: m.topic }, 'ignored a message of a topic no longer subscribed');
      return;
    }
    if (m.retain && !config.include_retained) {
      log.debug({ topic: m.topic }, 'ignored a retained message');
      return;
    }
    const payload = mapMessage(this.deps.mapping, { topic: m.topic, payload: m.payload, retained: m.retain });
    try {
      await this.deps.emit({ type: 'mqtt_message', payload, severity: payload.severity });
    } catch (err) {
      if (m.qos === 0) {
        // Nothing to withhold: the broker keeps no QoS 0 message.
        log.error({ err, topic: m.topic }, 'could not record a QoS 0 MQTT message; it is lost');
        return;
      }
      log.error(
        { err, topic: m.topic },
        'could not record an MQTT message; disconnecting without acknowledging it so the broker sends it again',
      );
      throw err;
    }
  }

  private connected(session: Session, first: boolean, lostAt: number | undefined): number {
    const connectedAt = this.deps.clock.now().getTime();
    this.state = 'connected';
    this.lastError = undefined;
    this.deps.log.info(
      { broker: this.brokerName, sessionPresent: session.sessionPresent, clientId: this.deps.clientId },
      first ? 'connected to the MQTT broker' : 'reconnected to the MQTT broker',
    );
    this.status({
      type: 'mqtt_status_connected',
      payload: {
        broker: this.brokerName,
        first_connect: first,
        session_present: session.sessionPresent,
        ...(lostAt !== undefined ? { downtime_seconds: Math.max(0, Math.round((connectedAt - lostAt) / 1000)) } : {}),
      },
    });
    return connectedAt;
  }

  private async run(first: Session): Promise<void> {
    const { log, clock, timings } = this.deps;
    let session: Session | undefined = first;
    let connectedAt = this.connected(first, true, undefined);
    let lostAt: number | undefined;
    let attempt = 0;
    let failures = 0;
    while (!this.stopped) {
      if (session) {
        const reason = await session.closed;
        this.session = undefined;
        session = undefined;
        if (this.stopped) break;
        lostAt = clock.now().getTime();
        this.state = 'reconnecting';
        this.lastError = reason;
        failures = 0;
        log.warn({ broker: this.brokerName, reason }, 'lost the connection to the MQTT broker; reconnecting');
        this.status({
          type: 'mqtt_status_disconnected',
          payload: {
            broker: this.brokerName,
            reason: reason.slice(0, 500),
            connected_seconds: Math.max(0, Math.round((lostAt - connectedAt) / 1000)),
          },
        });
        // A connection that held for a while starts the backoff afresh; one the broker keeps
        // closing soon after it opened (another client taking over the same client id, a broker
        // in trouble) keeps growing it, so a flapping connection slows down.
        if (lostAt - connectedAt >= timings.reconnectMaxMs) attempt = 0;
      }
      await sleep(backoffDelay(attempt++, timings.reconnectMinMs, timings.reconnectMaxMs), this.halt.signal);
      if (this.stopped) break;
      try {
        session = await this.connect();
      } catch (err) {
        if (this.stopped) break;
        const failure = this.failure(err);
        failures++;
        if (failure.kind === 'auth') {
          // Retried at the slowest pace: a broker may refuse logins for a moment while it restarts.
          this.state = 'auth_failed';
          this.lastError = bilingual(failure.texts);
          attempt = Math.max(attempt, 30);
          log.error({ broker: this.brokerName, reason: failure.reason }, 'the MQTT broker refused the login');
          continue;
        }
        this.state = 'reconnecting';
        this.lastError = failure.texts.en;
        // Logged once per outage; the retries stay at debug level.
        if (failures === 1)
          log.warn(
            { broker: this.brokerName, error: failure.texts.en },
            'cannot reconnect to the MQTT broker; retrying',
          );
        else log.debug({ broker: this.brokerName, error: failure.texts.en, attempt }, 'reconnect attempt failed');
        continue;
      }
      if (this.stopped) {
        await session.close(timings.closeTimeoutMs);
        break;
      }
      connectedAt = this.connected(session, false, lostAt);
    }
  }
}
