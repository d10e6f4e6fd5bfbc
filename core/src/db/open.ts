import fs from 'node:fs';
import path from 'node:path';
import BetterSqlite from 'better-sqlite3';
import { migrations } from '../../../migrations/index.ts';
import type { Config } from '../config/config.ts';
import type { Logger } from '../logging/logger.ts';
import { Checkpointer } from './checkpointer.ts';
import { Database } from './database.ts';
import { migrate } from './migrate.ts';
import { openNativeSqlite } from './native-connect.ts';
import { copySqliteSnapshot } from './snapshot.ts';
import { echoTo } from './sql-echo.ts';

export interface OpenOptions {
  config: Config;
  log: Logger;
  /** Runs after the snapshot and migrations, in the same boot, before anything else uses the database. */
  beforeReady?: (db: Database) => Promise<void>;
  /** True when this boot changes the data besides migrating (a staged restore): the snapshot is then verified first. */
  changesData?: () => boolean;
}

/** Snapshot, connect, tune, migrate (on PostgreSQL the snapshot and migrations run under a cross-replica lock). */
export async function openDatabase({ config, log, changesData }: OpenOptions): Promise<Database> {
  fs.mkdirSync(config.dataDir, { recursive: true });
  let db: Database;
  let checkpointer: Checkpointer | undefined;
  if (config.dialect === 'sqlite') {
    const file = config.sqlitePath!;
    fs.mkdirSync(path.dirname(file), { recursive: true });
    // A snapshot only when this boot changes the data: a migration is pending or a restore is
    // staged. Both depend on the copy, so it is taken and verified before either runs, and a copy
    // that fails its check refuses the boot. A boot with nothing to change takes none.
    if (pendingSqliteMigrations(file, config.debug ? echoTo(log) : undefined) || changesData?.()) {
      const copy = await copySqliteSnapshot(
        file,
        path.join(config.dataDir, 'snapshots'),
        config.preMigrateSnapshotKeep,
      );
      if (copy) {
        const snap = await copy.verify();
        log.info(
          { file: path.basename(snap.file), pruned: snap.pruned.length },
          'pre-migration snapshot taken and verified',
        );
      }
    }
    ({ db, checkpointer } = openSqlite(file, config, log));
  } else {
    db = await connectPostgres(config, log);
  }
  const applied =
    config.dialect === 'postgresql'
      ? await (await import('./postgres.ts')).migratePostgres(db, config, log)
      : await migrate(db, migrations);
  if (applied.length) log.info({ applied }, 'migrations applied');
  if (config.dialect === 'sqlite') await optimizeSqlite(db, true);
  // What the migrations wrote is copied back now, once: a first boot's schema is not a sign of heavy writes.
  await checkpointer?.settle();
  return db;
}

/** How often SQLite's planner statistics are refreshed on a running service (PostgreSQL's autovacuum does its own). */
export const SQLITE_OPTIMIZE_MS = 24 * 3_600_000;

/**
 * Refreshes the statistics SQLite's query planner chooses indexes by (`PRAGMA optimize`, which analyses only
 * the tables whose statistics are missing or stale, each from a bounded sample: ~0.25 s for a million events).
 * Without them a filter the event log indexes (a rare type, a status, a past time window) can be planned on
 * the wrong index and read the whole log. `atOpen` checks every table, as SQLite advises for a new connection.
 */
export async function optimizeSqlite(db: Database, atOpen = false): Promise<void> {
  await db.all('PRAGMA analysis_limit = 400');
  await db.all(atOpen ? 'PRAGMA optimize = 0x10002' : 'PRAGMA optimize');
}

/**
 * A connection to the PostgreSQL database: through MikroORM's driver, which is loaded here only
 * (SQLite does not need it). Also the dispatch thread's second connection: no snapshot, no migrations.
 */
export async function connectPostgres(config: Config, log: Logger): Promise<Database> {
  const { openPostgres } = await import('./postgres.ts');
  return new Database(await openPostgres(config, log), 'postgresql');
}

/**
 * The service's SQLite connection (the file is created when missing): better-sqlite3 under
 * NativeSqlite, tuned (WAL, busy timeout, cache; native-connect.ts), with the WAL checkpointer.
 * SERVICE_DEBUG echoes every statement, the connection settings included (sql-echo.ts).
 */
function openSqlite(file: string, config: Config, log: Logger): { db: Database; checkpointer: Checkpointer } {
  const { db, native } = openNativeSqlite(file, { create: true, echo: config.debug ? echoTo(log) : undefined });
  const checkpointer = new Checkpointer(file, log, () => native.checkpoint());
  native.onCommit = () => checkpointer.noteWrite();
  // Closing runs the last registered first: the checkpointer stops before the handle closes.
  db.onClose(() => checkpointer.stop());
  const optimizing = setInterval(() => {
    optimizeSqlite(db).catch((err: unknown) => log.warn({ err }, 'planner statistics not refreshed'));
  }, SQLITE_OPTIMIZE_MS);
  optimizing.unref();
  db.onClose(async () => clearInterval(optimizing));
  if (process.env.HERALD_SQL_PROFILE === '1') {
    native.enableProfile();
    process.once('exit', () => process.stderr.write(`SQL profile:\n${native.profileReport()}\n`));
  }
  return { db, checkpointer };
}

/** True when the SQLite file has migrations not applied yet (or cannot tell). */
/**
 * Whether a migration is pending. The connection is read-write on purpose: after a crash it recovers
 * the hot WAL, which a read-only connection (the snapshot's copy in its thread) cannot do.
 */
function pendingSqliteMigrations(file: string, echo?: (sql: string) => void): boolean {
  try {
    const db = new BetterSqlite(file, {
      fileMustExist: true,
      ...(echo ? { verbose: (sql: unknown) => echo(String(sql)) } : {}),
    });
    try {
      db.pragma('busy_timeout = 10000');
      const done = new Set((db.prepare('SELECT id FROM schema_migrations').all() as { id: string }[]).map((r) => r.id));
      return migrations.some((m) => !done.has(m.id));
    } finally {
      db.close();
    }
  } catch {
    return true;
  }
}
