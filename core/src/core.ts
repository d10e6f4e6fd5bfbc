import type { LoginLimiter } from './auth/login-limiter.ts';
import type { TokenService } from './auth/tokens.ts';
import type { Config } from './config/config.ts';
import type { Database } from './db/database.ts';
import type { Scheduler } from './jobs/scheduler.ts';
import type { LoggerFactory } from './logging/logger.ts';
import type { Metrics } from './metrics/metrics.ts';
import type { OutboundHttp } from './plugin-api/index.ts';
import type { PluginHost } from './plugins/host.ts';
import type { SecretsAtRest } from './secrets/at-rest.ts';
import type { Settings } from './settings/settings.ts';

/** Everything a feature module needs, handed over once at boot (no module-level singletons). */
export interface Core {
  config: Config;
  version: string;
  logs: LoggerFactory;
  db: Database;
  settings: Settings;
  tokens: TokenService;
  /** Seals and opens the secrets stored in the database (bot tokens, plugin `Secret()` fields). */
  atRest: SecretsAtRest;
  loginLimiter: LoginLimiter;
  metrics: Metrics;
  plugins: PluginHost;
  jobs: Scheduler;
  outbound: OutboundHttp;
  /** Wall clock ({@link wallClock}); tests replace it to move time. */
  clock: { now(): Date };
  /** Computed once at boot; apply-restart needs it. */
  supervised: boolean;
  /** Unique per process; used for leases and leader election. */
  replicaId: string;
  /**
   * Where the service is in its life: `starting` until listen() has started the jobs and every feature, `running`,
   * then `stopping` from the moment a stop begins. /api/ready answers 503 unless `running`.
   */
  lifecycle: 'starting' | 'running' | 'stopping';
  /** Hooks features register to run at shutdown, in reverse order. */
  onShutdown(fn: () => Promise<void> | void): void;
  /** Feature services, registered by name so features can find each other without imports in a cycle. */
  services: Map<string, unknown>;
}

/** The service's clock unless a test gives its own (`createService`'s `clock`). */
export const wallClock: { now(): Date } = { now: () => new Date() };
