import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { LoginLimiter } from './auth/login-limiter.ts';
import { TokenService } from './auth/tokens.ts';
import { applyStagedRestore } from './backup/staged.ts';
import type { Config } from './config/config.ts';
import { type Core, wallClock } from './core.ts';
import { openDatabase } from './db/open.ts';
import { type Feature, loadFeatures } from './features.ts';
import { idleDelayFromEnv, MemoryReducer } from './health/memory-reducer.ts';
import { type App, createServer } from './http/server.ts';
import { AlwaysLeader, type LeaderElector, Scheduler } from './jobs/scheduler.ts';
import { detectSupervised } from './lifecycle/supervised.ts';
import { createLogger, type LoggerFactory } from './logging/logger.ts';
import { SecretValues } from './logging/redact.ts';
import { Metrics } from './metrics/metrics.ts';
import { wideAllowEntries } from './net/instance-allow.ts';
import { createOutboundHttp } from './net/outbound.ts';
import { dropUndeclaredConfigFields } from './plugins/config-cleanup.ts';
import { PluginHost } from './plugins/host.ts';
import { loadPlugins } from './plugins/loader.ts';
import { selfMonitoringOf } from './plugins/self-monitoring.ts';
import { SecretsAtRest } from './secrets/at-rest.ts';
import { sealStoredSecrets } from './secrets/seal-stored.ts';
import { Settings } from './settings/settings.ts';
import { ensureSelfMonitoringForAll } from './users/users.ts';

/** How long after the grace period plugin instances may still take to stop. */
const PLUGIN_STOP_AFTER_GRACE_MS = 1500;
/** The process exits at most this long after the grace period, finished or not (run.ts). */
export const SHUTDOWN_MARGIN_MS = 3000;

export const VERSION: string = JSON.parse(
  fs.readFileSync(new URL('../../package.json', import.meta.url), 'utf8'),
).version;

export interface AppOptions {
  /** Capture log lines (tests). */
  logDestination?: NodeJS.WritableStream;
  clock?: { now(): Date };
  /** Hooks run after migrations, before anything else touches the database (staged restore). */
  beforeStart?: (core: Core) => Promise<void>;
}

export interface Service {
  core: Core;
  app: App;
  /** Listens on the configured host and port (0 picks a free one); resolves with the base URL. */
  listen(): Promise<string>;
  /**
   * Graceful stop: no new connections, claims or sends; requests and sends in flight finish within
   * the grace period (sends still running then are aborted and their rows requeued), then
   * everything closes, plugin instances within PLUGIN_STOP_AFTER_GRACE_MS more.
   */
  stop(): Promise<void>;
}

/** Builds the whole service: database, plugins, routes, jobs. Nothing listens until `listen()`. */
export async function createService(config: Config, opts: AppOptions = {}): Promise<Service> {
  const secrets = new SecretValues();
  secrets.add(config.secretKey);
  secrets.add(config.previousSecretKey);
  secrets.add(config.messagingWebhookSecret);
  secrets.add(config.ai.apiKey);
  const logs: LoggerFactory = createLogger({
    format: config.logFormat,
    level: config.debug ? 'debug' : config.logLevel,
    levels: config.logLevels,
    destination: opts.logDestination,
    secrets,
  });
  const log = logs.get('core');
  // A staged restore is applied at this boot: the pre-migration snapshot must be verified before it.
  const db = await openDatabase({
    config,
    log: logs.get('db'),
    changesData: () => fs.existsSync(path.join(config.dataDir, 'restore', 'pending.json')),
  });
  const clock = opts.clock ?? wallClock;
  const shutdownHooks: (() => Promise<void> | void)[] = [];
  let elector: LeaderElector = new AlwaysLeader();
  if (config.dialect === 'postgresql') {
    const { PgAdvisoryLeader } = await import('./jobs/pg-leader.ts');
    elector = new PgAdvisoryLeader(config, logs.get('leader'));
  }
  const jobs = new Scheduler(logs.get('jobs'), elector);
  const plugins = await loadPlugins(config.plugins, { log: logs.get('plugins'), pluginDir: config.pluginDir });
  const outbound = createOutboundHttp({ allowCidrs: config.outboundAllowCidrs, userAgent: `Herald/${VERSION}` });
  for (const w of wideAllowEntries(config.outboundAllowCidrs))
    log.warn({ entry: w.entry }, `SERVICE_OUTBOUND_ALLOW_CIDRS, for every plugin: ${w.message}`);
  let baseUrl = config.publicUrl ?? `http://localhost:${config.port}`;
  const atRest = new SecretsAtRest(config.secretKey, config.previousSecretKey);
  const host = new PluginHost({
    plugins,
    db,
    logs,
    atRest,
    http: outbound,
    clock,
    isLeader: () => jobs.isLeader(),
    publicUrl: () => config.publicUrl ?? baseUrl,
  });
  const metrics = new Metrics(async () =>
    Number((await db.get<{ n: number }>('SELECT COUNT(*) AS n FROM deferred_dispatch'))?.n ?? 0),
  );
  const supervised = detectSupervised(config.supervisedOverride);
  const core: Core = {
    config,
    version: VERSION,
    logs,
    db,
    settings: new Settings(db),
    tokens: new TokenService(config.secretKey, () => clock.now()),
    atRest,
    loginLimiter: new LoginLimiter(),
    metrics,
    plugins: host,
    jobs,
    outbound,
    clock,
    supervised: supervised.supervised,
    replicaId: `${process.pid}-${crypto.randomBytes(4).toString('hex')}`,
    lifecycle: 'starting',
    onShutdown: (fn) => {
      shutdownHooks.push(fn);
    },
    services: new Map(),
  };
  log.info(
    {
      supervised: supervised.supervised,
      by: supervised.by,
      dialect: config.dialect,
      plugins: plugins.map((p) => p.id),
    },
    'booting',
  );
  if (opts.beforeStart) await opts.beforeStart(core);
  // Before anything reads a secret: refuses a wrong key, seals what earlier versions stored in
  // clear, and re-seals what SERVICE_SECRET_KEY_PREVIOUS sealed.
  try {
    await sealStoredSecrets(core);
  } catch (err) {
    await db.close().catch(() => {});
    throw err;
  }
  // Found through the manifests; throws at boot when a selfMonitoring declaration is unusable or two plugins make one.
  const selfMonitoring = selfMonitoringOf(core);
  if (!selfMonitoring)
    log.warn(
      'no enabled plugin receives self-monitoring signals: users get no self-monitoring provider and the ' +
        'signals are dropped',
    );
  // A restore staged by POST /api/backup/prepare-restore is applied here: after the pre-migration
  // snapshot and the migrations, before anything else uses the database. A failing restore is
  // rolled back and set aside (failed-<ts>.json); boot continues with the configuration untouched.
  await applyStagedRestore(core);
  await dropUndeclaredConfigFields(db, host, logs.get('plugins'));
  const created = selfMonitoring ? await ensureSelfMonitoringForAll(db, selfMonitoring) : 0;
  if (created) log.info({ created, kind: selfMonitoring?.kind }, 'created missing self-monitoring providers');

  const app = await createServer(config, logs.get('http'), VERSION, logs.credentialPaths);
  const features: Feature[] = await loadFeatures();
  // Each feature is an encapsulated Fastify plugin: the hooks, parsers and plugins it registers stay
  // within its own routes (the server-wide ones above are inherited). fastify-plugin is not used: its
  // one job is to lift that encapsulation, and no feature shares anything through the root instance.
  for (const f of features)
    await app.register(async (scope: App) => {
      await f.register(scope, core);
    });
  await app.ready();
  const idleMs = idleDelayFromEnv();
  const reducer = new MemoryReducer({ log: logs.get('memory'), idleMs, gc: idleMs === undefined ? null : undefined });
  core.services.set('memoryReducer', reducer);
  // Every request restarts the idle period; a listener on the server costs less than a route hook.
  app.server.on('request', () => reducer.noteActivity());

  let stopping: Promise<void> | undefined;
  // The start in progress, if any: a stop waits for it, so that nothing it starts (jobs, features) outlives the stop.
  let starting: Promise<string> | undefined;
  return {
    core,
    app,
    listen() {
      if (stopping) return Promise.reject(new Error('the service is stopping; it does not listen any more'));
      starting ??= (async () => {
        try {
          await app.listen({ host: config.host, port: config.port });
        } catch (err) {
          // Nothing has started yet (the port is taken, say): a later listen() may try again, once it is free.
          starting = undefined;
          throw err;
        }
        const addr = app.server.address();
        const port = typeof addr === 'object' && addr ? addr.port : config.port;
        baseUrl = `http://${config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host}:${port}`;
        await jobs.start();
        for (const f of features) await f.start?.(core);
        jobs.onLeadershipChange((leader) => {
          void host.leadershipChanged(leader);
        });
        reducer.start();
        metrics.loopDelay.start();
        if (!stopping) core.lifecycle = 'running';
        log.info({ url: baseUrl, version: VERSION }, 'listening');
        return baseUrl;
      })();
      return starting;
    },
    stop() {
      stopping ??= (async () => {
        core.lifecycle = 'stopping';
        // A stop that comes while listen() still starts things (a signal right after the port is bound) waits for
        // that start to end, whether it succeeds or not, then stops all of it.
        await starting?.catch(() => {});
        const graceMs = config.gracefulShutdownSeconds * 1000;
        // Plugin instances may take until this long after the grace period to stop (run.ts exits
        // at SHUTDOWN_MARGIN_MS after it whatever happens).
        const pluginsBy = Date.now() + graceMs + PLUGIN_STOP_AFTER_GRACE_MS;
        log.info({ grace_seconds: config.gracefulShutdownSeconds }, 'shutting down');
        reducer.stop();
        metrics.loopDelay.stop();
        // At once: no new connections, no job runs, no new claims or sends. Requests and sends in
        // flight have the grace period; then connections are closed and sends cut off (requeued).
        const grace = AbortSignal.timeout(graceMs);
        const closing = app.close();
        const timer = setTimeout(() => {
          log.warn('grace period over; closing remaining connections');
          app.server.closeAllConnections?.();
        }, graceMs);
        timer.unref();
        void closing.finally(() => clearTimeout(timer));
        // Each step says when it is done (DEBUG): a stop that does not end shows in the log where it waits.
        const step = <T>(p: Promise<T>, what: string) => p.finally(() => log.debug(`shutdown: ${what} done`));
        await Promise.all([
          step(closing, 'HTTP server close'),
          step(jobs.stop(), 'jobs stop'),
          ...features.map((f) =>
            step(
              Promise.resolve(f.drain?.(core, grace)).catch((err) =>
                log.error({ err, feature: f.name }, 'feature drain failed'),
              ),
              `${f.name} drain`,
            ),
          ),
        ]);
        for (const f of [...features].reverse())
          await step(
            Promise.resolve(f.stop?.(core)).catch((err) => log.error({ err, feature: f.name }, 'feature stop failed')),
            `${f.name} stop`,
          );
        for (const fn of shutdownHooks.reverse())
          await Promise.resolve(fn()).catch((err) => log.error({ err }, 'shutdown hook failed'));
        await step(host.stopAll(pluginsBy - Date.now()), 'plugin instances stop');
        log.debug('shutdown: closing the database');
        await db.close();
        log.info('stopped');
      })();
      return stopping;
    },
  };
}
