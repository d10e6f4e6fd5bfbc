/**
 * What a command works on: the service's own configuration (`loadConfig`, the same SERVICE_*
 * variables), its database and, for the commands that need them, its plugins, put together as a
 * core like the service's (no server, no jobs, no plugin instance running).
 *
 * The database. Commands open one plain connection (no snapshot), which is safe beside a running
 * service: every replica reads users, tokens and records from the database on each request. A
 * database whose schema is behind this version is refused (a service of the older version may still
 * be running on it; its own start migrates), unless `--migrate` is given: the command then brings it
 * to this version's schema first as the service's start does (`openDatabase`: a verified
 * pre-migration snapshot, then the migrations, on PostgreSQL under the lock replicas take). A SQLite
 * file that does not exist, or a PostgreSQL database without Herald's tables, is refused too (a
 * mistyped SERVICE_DATA_DIR must not start a new empty database), except by `user create`, which
 * sets up a fresh database as the first start would. `doctor` never migrates: it reports what is pending.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import { migrations } from '../../../migrations/index.ts';
import { LoginLimiter } from '../auth/login-limiter.ts';
import { TokenService } from '../auth/tokens.ts';
import { ALWAYS_LOADED_PLUGINS, type Config, loadConfig } from '../config/config.ts';
import type { Core } from '../core.ts';
import type { Database } from '../db/database.ts';
import { pendingMigrations } from '../db/migrate.ts';
import type { Scheduler } from '../jobs/scheduler.ts';
import { createLogger, type LoggerFactory } from '../logging/logger.ts';
import { SecretValues } from '../logging/redact.ts';
import type { Metrics } from '../metrics/metrics.ts';
import { createOutboundHttp, type OutboundClient } from '../net/outbound.ts';
import { PluginHost } from '../plugins/host.ts';
import { type LoadedPlugin, loadPlugins } from '../plugins/loader.ts';
import { SecretsAtRest } from '../secrets/at-rest.ts';
import { Settings } from '../settings/settings.ts';
import type { Messages } from './i18n.ts';
import { openSettings } from './options.ts';
import { CliError, note } from './output.ts';

export const VERSION: string = JSON.parse(
  fs.readFileSync(new URL('../../../package.json', import.meta.url), 'utf8'),
).version;

/** The service's configuration from the environment; a ConfigurationError says what is wrong. */
export function cliConfig(env: NodeJS.ProcessEnv = process.env): Config {
  return loadConfig(env);
}

/**
 * Log lines of the code the commands reuse: warnings and errors only (SERVICE_DEBUG shows everything), on standard
 * error.
 */
export function cliLogs(config: Config): LoggerFactory {
  const secrets = new SecretValues();
  secrets.add(config.secretKey);
  secrets.add(config.previousSecretKey);
  secrets.add(config.messagingWebhookSecret);
  secrets.add(config.ai.apiKey);
  return createLogger({
    format: config.logFormat,
    level: config.debug ? 'debug' : 'warn',
    levels: config.debug ? config.logLevels : {},
    secrets,
  });
}

/** Where the database is, for messages: the SQLite file, or the PostgreSQL URL without its password. */
export function databaseLabel(config: Config): string {
  if (config.dialect === 'sqlite') return config.sqlitePath!;
  try {
    const u = new URL(config.databaseUrl);
    u.password = '';
    return u.toString().replace(/:@/, '@');
  } catch {
    return 'PostgreSQL';
  }
}

export type OpenMode =
  /** As found, never migrated or created (doctor). */
  | 'inspect'
  /** An existing database of this version's schema (migrated first with `--migrate`). */
  | 'existing'
  /** As `existing`, and a missing or empty one is set up (user create). */
  | 'create';

export interface Opened {
  db: Database;
  /** Migrations not applied (only in `inspect` mode; the other modes apply them). */
  pending: string[];
  /** Migrations this opening applied. */
  applied: string[];
  /** True when this opening set up a new database. */
  created: boolean;
}

/** Whether PostgreSQL has Herald's tables. */
async function hasSchema(db: Database): Promise<boolean> {
  const r = await db.get<{ ok: unknown }>(`SELECT to_regclass('schema_migrations') IS NOT NULL AS ok`);
  return r?.ok === true || r?.ok === 1 || r?.ok === 't';
}

/** Opens the database as described at the top of this file. */
export async function openCliDatabase(config: Config, logs: LoggerFactory, mode: OpenMode): Promise<Opened> {
  const log = logs.get('db');
  const where = databaseLabel(config);
  let db: Database;
  if (config.dialect === 'sqlite') {
    if (!fs.existsSync(config.sqlitePath!)) {
      if (mode !== 'create') throw new CliError('db.missing_sqlite', { path: where });
      return setUp(
        config,
        logs,
        migrations.map((m) => m.id),
        true,
      );
    }
    const { connectNativeSqlite } = await import('../db/native-connect.ts');
    db = connectNativeSqlite(config.sqlitePath!);
  } else {
    // As open.ts's connectPostgres, without loading the SQLite driver that module carries.
    const [{ openPostgres }, { Database: Db }] = await Promise.all([
      import('../db/postgres.ts'),
      import('../db/database.ts'),
    ]);
    let opened: Database | undefined;
    try {
      opened = new Db(await openPostgres(config, log), 'postgresql');
      await opened.get('SELECT 1 AS one');
    } catch (err) {
      await opened?.close().catch(() => {});
      throw new CliError('db.unreachable', { where, reason: (err as Error).message });
    }
    db = opened;
    if (!(await hasSchema(db))) {
      if (mode === 'create') {
        await db.close();
        return setUp(
          config,
          logs,
          migrations.map((m) => m.id),
          true,
        );
      }
      if (mode === 'existing') {
        await db.close();
        throw new CliError('db.empty_postgres', { where });
      }
      return { db, pending: migrations.map((m) => m.id), applied: [], created: false };
    }
  }
  const pending = await pendingMigrations(db, migrations);
  if (!pending.length || mode === 'inspect') return { db, pending, applied: [], created: false };
  await db.close();
  if (!openSettings.migrate) throw new CliError('db.behind', { where, count: pending.length, ids: pending });
  return setUp(config, logs, pending, false);
}

/** The service's own opening: snapshot, then migrations (under the replicas' lock on PostgreSQL). */
async function setUp(config: Config, logs: LoggerFactory, pending: string[], created: boolean): Promise<Opened> {
  const { openDatabase } = await import('../db/open.ts');
  const db = await openDatabase({ config, log: logs.get('db') });
  return { db, pending: [], applied: pending, created };
}

/** What the command line does not run (jobs, metrics): any use of it fails with a message saying so. */
function absent<T extends object>(what: string): T {
  return new Proxy({} as T, {
    get: (_t, prop) => {
      throw new Error(`the command line runs no ${what} (asked for ${String(prop)})`);
    },
  });
}

export interface CliCore extends Core {
  outbound: OutboundClient;
  /** Closes the database and the outbound client's connections. */
  close(): Promise<void>;
}

/**
 * A core for the reused service code (backups, users, retention): the database, the settings, the
 * secrets at rest, the plugins' definitions (nothing runs), a wall clock. No server, no jobs, no metrics.
 */
export function cliCore(config: Config, logs: LoggerFactory, db: Database, plugins: LoadedPlugin[]): CliCore {
  const clock = { now: () => new Date() };
  const atRest = new SecretsAtRest(config.secretKey, config.previousSecretKey);
  const outbound = createOutboundHttp({ allowCidrs: config.outboundAllowCidrs, userAgent: `Herald/${VERSION}` });
  const host = new PluginHost({
    plugins,
    db,
    logs,
    atRest,
    http: outbound,
    clock,
    isLeader: () => false,
    publicUrl: () => config.publicUrl ?? `http://localhost:${config.port}`,
  });
  const shutdown: (() => Promise<void> | void)[] = [];
  return {
    config,
    version: VERSION,
    logs,
    db,
    settings: new Settings(db),
    tokens: new TokenService(config.secretKey, clock.now),
    atRest,
    loginLimiter: new LoginLimiter(),
    plugins: host,
    jobs: absent<Scheduler>('jobs'),
    metrics: absent<Metrics>('metrics'),
    outbound,
    clock,
    supervised: false,
    replicaId: `cli-${process.pid}-${crypto.randomBytes(4).toString('hex')}`,
    lifecycle: 'running',
    onShutdown: (fn) => {
      shutdown.push(fn);
    },
    services: new Map(),
    async close() {
      for (const fn of shutdown.reverse()) await fn();
      await outbound.close().catch(() => {});
      await db.close();
    },
  };
}

/**
 * The plugins a command needs: `all` (as SERVICE_PLUGINS names them; a plugin that fails to load
 * stops the command as it stops the service's start), or `always`, the ones loaded whatever
 * SERVICE_PLUGINS says, among them the receiver of self-monitoring signals, which is all the user
 * commands need (so that a broken third-party plugin cannot lock an operator out).
 */
export async function cliPlugins(config: Config, which: 'all' | 'always'): Promise<LoadedPlugin[]> {
  return loadPlugins(which === 'all' ? config.plugins : [...ALWAYS_LOADED_PLUGINS], { pluginDir: config.pluginDir });
}

/** Configuration, database and plugins together; the caller closes the core. */
export async function openCore(
  mode: Exclude<OpenMode, 'inspect'>,
  plugins: 'all' | 'always',
  m: Messages,
): Promise<CliCore> {
  const config = cliConfig();
  const logs = cliLogs(config);
  const loaded = await cliPlugins(config, plugins);
  const { db, applied, created } = await openCliDatabase(config, logs, mode);
  // Said on standard error: the command's own output stays what scripts read.
  if (created) note(m.t('db.created', { where: databaseLabel(config) }));
  else if (applied.length) note(m.t('db.migrated', { count: applied.length, where: databaseLabel(config) }));
  return cliCore(config, logs, db, loaded);
}

/** Runs `fn` on a core opened by {@link openCore}, closing it after. */
export async function withCore<T>(
  m: Messages,
  mode: Exclude<OpenMode, 'inspect'>,
  plugins: 'all' | 'always',
  fn: (core: CliCore) => Promise<T>,
): Promise<T> {
  const core = await openCore(mode, plugins, m);
  try {
    return await fn(core);
  } finally {
    await core.close();
  }
}
