/**
 * One UPS watched through upsd: each poll reads its variables in a short conversation, compares
 * them with the baseline in the instance store and emits the power events that follow.
 */

import type { Clock, EmittedEvent, HealthReport, InstanceStore, OutboundHttp, PluginLogger } from '@herald/plugin-api';
import { AuthFailedError, ConfigError, errorCode, NotReadyError, OUTBOUND_REFUSED } from '@herald/plugin-api';
import { NutClient } from './client.ts';
import type { NutConfig, NutTimings } from './config.ts';
import { NutServerError, NutTlsError, quoteArg } from './protocol.ts';
import type { UpsBaseline, UpsReading } from './status.ts';
import { readingFrom, seedBaseline, transitions } from './status.ts';

export interface PollerDeps {
  config: NutConfig;
  timings: NutTimings;
  http: OutboundHttp;
  store: InstanceStore;
  clock: Clock;
  log: PluginLogger;
  emit(event: EmittedEvent): Promise<unknown>;
}

/** Kept in the instance store under a key naming the UPS, so a changed config seeds afresh. */
interface StoredState {
  baseline: UpsBaseline | null;
  commLost: boolean;
  commLostAt?: string;
}

const AUTH_CODES = new Set([
  'ACCESS-DENIED',
  'INVALID-USERNAME',
  'INVALID-PASSWORD',
  'USERNAME-REQUIRED',
  'PASSWORD-REQUIRED',
]);
const COMM_REASONS: Record<string, string> = {
  'DATA-STALE': 'the UPS data is stale (the driver lost contact with the UPS)',
  'DRIVER-NOT-CONNECTED': 'the UPS driver is not connected to upsd',
};

type Failure = { kind: 'auth' | 'config' | 'comm'; error: Error; reason: string };

export class UpsPoller {
  private readonly d: PollerDeps;
  private credentialsChecked = false;
  private lastHealth: HealthReport = { status: 'ok', detail: 'waiting for the first poll' };

  constructor(deps: PollerDeps) {
    this.d = deps;
  }

  /** The outcome of the last conversation with upsd. */
  health(): HealthReport {
    return this.lastHealth;
  }

  /** `host:port` of upsd. */
  get server(): string {
    const h = this.d.config.host;
    return `${h.includes(':') && !h.startsWith('[') ? `[${h}]` : h}:${this.d.config.port}`;
  }

  private get ups(): string {
    return this.d.config.ups_name;
  }
  private get key(): string {
    return `ups-state:${this.ups}@${this.server}`;
  }

  /** Turns any failure into what the core should do with it, plus a reason for comm events. */
  classify(err: unknown): Failure {
    const where = `UPS ${this.ups}@${this.server}`;
    if (err instanceof NutServerError) {
      if (AUTH_CODES.has(err.nutCode)) {
        return {
          kind: 'auth',
          reason: err.message,
          error: new AuthFailedError(
            `upsd denied access to ${where} (ERR ${err.nutCode}); check the username, the password and that the ` +
              'user has upsmon rights',
          ),
        };
      }
      if (err.nutCode === 'UNKNOWN-UPS')
        return {
          kind: 'config',
          reason: err.message,
          error: new ConfigError(`upsd at ${this.server} has no UPS named "${this.ups}" (ERR UNKNOWN-UPS)`),
        };
      const reason = COMM_REASONS[err.nutCode] ?? `upsd answered ERR ${err.nutCode}`;
      return { kind: 'comm', reason, error: new NotReadyError(`${where}: ${reason}`, { cause: err }) };
    }
    if (err instanceof NutTlsError)
      return {
        kind: 'config',
        reason: err.message,
        error: new ConfigError(`${where}: ${err.message}`, { cause: err }),
      };
    const code = errorCode(err);
    if (code === OUTBOUND_REFUSED || code === 'CONFIG')
      return {
        kind: 'config',
        reason: String((err as Error).message),
        error: new ConfigError((err as Error).message, { cause: err }),
      };
    const reason = err instanceof Error ? err.message : String(err);
    return { kind: 'comm', reason, error: new NotReadyError(`${where} unreachable: ${reason}`, { cause: err }) };
  }

  /** One conversation with upsd: connect, credentials (LOGIN checks them once), LIST VAR, LOGOUT. */
  async read(signal?: AbortSignal): Promise<Map<string, string>> {
    const { config: c, timings: t } = this.d;
    if (Boolean(c.username) !== Boolean(c.password))
      throw new ConfigError('set both username and password, or neither');
    const { address } = await this.d.http.resolveAllowed(c.host);
    const client = await NutClient.connect({
      host: c.host,
      port: c.port,
      address,
      starttls: c.starttls,
      tlsCa: c.tls_ca,
      connectTimeoutMs: t.connectTimeoutMs,
      replyTimeoutMs: t.replyTimeoutMs,
      signal,
    });
    try {
      if (c.starttls === 'try' && !client.secure)
        this.d.log.debug({ server: this.server }, 'upsd does not offer STARTTLS; continuing in clear text');
      if (c.username && c.password) {
        await client.authenticate(c.username, c.password);
        // upsd checks a password only on a privileged command; LOGIN is the one a monitor may use.
        if (!this.credentialsChecked) {
          await client.command(`LOGIN ${quoteArg(this.ups)}`);
          this.credentialsChecked = true;
        }
      }
      return await client.listVars(this.ups);
    } finally {
      await client.logout();
    }
  }

  /** For start(): refuses bad credentials or UPS names early; an unreachable server is left to the polls. */
  async check(signal?: AbortSignal): Promise<void> {
    try {
      await this.read(signal);
    } catch (err) {
      const f = this.classify(err);
      this.lastHealth = { status: f.kind === 'comm' ? 'degraded' : 'error', detail: f.error.message };
      if (f.kind !== 'comm') throw f.error;
      this.d.log.warn({ server: this.server, reason: f.reason }, 'upsd not reachable at start; polls will retry');
    }
  }

  async poll(signal?: AbortSignal): Promise<void> {
    const { store, clock, log, config } = this.d;
    const state: StoredState = (await store.get<StoredState>(this.key)) ?? { baseline: null, commLost: false };
    let reading: UpsReading | undefined;
    try {
      reading = readingFrom(await this.read(signal));
      if (!reading) throw new NotReadyError(`UPS ${this.ups}@${this.server}: upsd returned no ups.status`);
    } catch (err) {
      const f =
        err instanceof NotReadyError
          ? { kind: 'comm' as const, error: err, reason: 'upsd returned no ups.status' }
          : this.classify(err);
      this.lastHealth = { status: f.kind === 'comm' ? 'degraded' : 'error', detail: f.error.message };
      if (f.kind === 'comm') await this.commLost(state, f.reason);
      throw f.error;
    }
    this.lastHealth = { status: 'ok', detail: `${reading.status} on ${this.server}` };
    if (reading.flags.length === 1 && reading.flags[0] === 'WAIT') {
      // The driver has not read the UPS yet (upsd or driver just started): nothing to compare.
      this.lastHealth = { status: 'degraded', detail: `the UPS driver on ${this.server} is waiting for data` };
      log.debug({ ups: this.ups, server: this.server }, 'UPS status is WAIT; skipping this poll');
      return;
    }
    const now = clock.now();
    if (!state.baseline) {
      // The first reading is the baseline: nothing "changed", even if the UPS is on battery now.
      await store.set(this.key, {
        baseline: seedBaseline(reading, config.low_battery_percent, now),
        commLost: false,
      } satisfies StoredState);
      log.info({ ups: this.ups, server: this.server, status: reading.status }, 'UPS baseline recorded');
      return;
    }
    if (state.commLost) {
      const lostAt = state.commLostAt ? Date.parse(state.commLostAt) : NaN;
      await this.emit(
        'ups_comm_restored',
        reading,
        Number.isFinite(lostAt) ? { downtime_seconds: Math.max(0, Math.round((now.getTime() - lostAt) / 1000)) } : {},
      );
      log.info({ ups: this.ups, server: this.server }, 'UPS answers again');
      state.commLost = false;
      delete state.commLostAt;
      await store.set(this.key, state);
    }
    const { events, next } = transitions(state.baseline, reading, config.low_battery_percent, now);
    for (const e of events) await this.emit(e.type, reading, e.extra);
    await store.set(this.key, { baseline: next, commLost: false } satisfies StoredState);
  }

  /** Emits `ups_comm_lost` once per outage, and only after the UPS has answered at least once. */
  private async commLost(state: StoredState, reason: string): Promise<void> {
    if (!state.baseline) {
      this.d.log.warn({ server: this.server, reason }, 'cannot read the UPS yet');
      return;
    }
    if (state.commLost) return;
    await this.d.emit({ type: 'ups_comm_lost', payload: { ups: this.ups, server: this.server, reason } });
    this.d.log.warn({ server: this.server, reason }, 'lost contact with the UPS');
    await this.d.store.set(this.key, {
      ...state,
      commLost: true,
      commLostAt: this.d.clock.now().toISOString(),
    } satisfies StoredState);
  }

  private async emit(type: string, r: UpsReading, extra: Record<string, unknown>): Promise<void> {
    const payload: Record<string, unknown> = {
      ups: this.ups,
      server: this.server,
      status: r.status,
      status_flags: r.flags,
      ...extra,
    };
    if (r.charge !== undefined) payload.battery_charge = r.charge;
    if (r.runtimeSeconds !== undefined) {
      payload.battery_runtime_seconds = r.runtimeSeconds;
      payload.battery_runtime_minutes = Math.round(r.runtimeSeconds / 60);
    }
    await this.d.emit({ type, payload });
  }
}
