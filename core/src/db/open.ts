import fs from 'node:fs';
import path from 'node:path';
import { MikroORM as SqliteORM, SqliteDriver } from '@mikro-orm/sqlite';
import type { MikroORM } from '@mikro-orm/core';
import type { Config } from '../config/config.ts';
import type { Logger } from '../logging/logger.ts';
import { Database } from './database.ts';
import { NativeSqlite } from './sqlite-native.ts';
import { entities } from './entities/index.ts';
import { migrate } from './migrate.ts';
import { migrations } from '../../../migrations/index.ts';
import { copySqliteSnapshot } from './snapshot.ts';
import { Checkpointer } from './checkpointer.ts';
import { SQLITE_PRAGMAS } from './native-connect.ts';
import { echoTo, ormLoggerFactory } from './sql-echo.ts';
import BetterSqlite from 'better-sqlite3';

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
  let orm: MikroORM;
  if (config.dialect === 'sqlite') {
    const file = config.sqlitePath!;
    fs.mkdirSync(path.dirname(file), { recursive: true });
    // A snapshot only when this boot changes the data: a migration is pending or a restore is
    // staged. Both depend on the copy, so it is taken and verified before either runs, and a copy
    // that fails its check refuses the boot. A boot with nothing to change takes none.
    if (pendingSqliteMigrations(file, config.debug ? echoTo(log) : undefined) || changesData?.()) {
      const copy = await copySqliteSnapshot(file, path.join(config.dataDir, 'snapshots'), config.preMigrateSnapshotKeep);
      if (copy) {
        const snap = await copy.verify();
        log.info({ file: path.basename(snap.file), pruned: snap.pruned.length }, 'pre-migration snapshot taken and verified');
      }
    }
    orm = await connectSqlite(file, config, log);
  } else {
    const { openPostgres } = await import('./postgres.ts');
    orm = await openPostgres(config, log, entities);
  }
  const native = config.dialect === 'sqlite' ? await nativeSqlite(orm) : undefined;
  // SERVICE_DEBUG: the statements of the native connection are echoed as the ORM's are (sql-echo.ts).
  if (native && config.debug) native.echo(echoTo(log));
  const db = new Database(orm, config.dialect, native);
  if (native) {
    const checkpointer = new Checkpointer(config.sqlitePath!, log, () => native.checkpoint());
    native.onCommit = () => checkpointer.noteWrite();
    db.onClose(() => checkpointer.stop());
  }
  const applied = config.dialect === 'postgresql'
    ? await (await import('./postgres.ts')).migratePostgres(db, config, log)
    : await migrate(db, migrations);
  if (applied.length) log.info({ applied }, 'migrations applied');
  return db;
}

/** One more connection to the PostgreSQL database a booted service opened (the dispatch thread's): no snapshot, no migrations. */
export async function connectPostgres(config: Config, log: Logger): Promise<Database> {
  const { openPostgres } = await import('./postgres.ts');
  return new Database(await openPostgres(config, log, entities), 'postgresql');
}

/** Connects to the SQLite file and tunes the connection (WAL, busy timeout, cache). */
async function connectSqlite(file: string, config: Config, log: Logger): Promise<MikroORM> {
  const orm = await SqliteORM.init({
    driver: SqliteDriver,
    dbName: file,
    entities,
    debug: config.debug ? ['query'] : false,
    loggerFactory: ormLoggerFactory(log),
    allowGlobalContext: false,
  }) as unknown as MikroORM;
  const conn = orm.em.getConnection() as unknown as { execute(sql: string): Promise<unknown> };
  for (const p of SQLITE_PRAGMAS) await conn.execute(`PRAGMA ${p}`);
  return orm;
}

/** True when the SQLite file has migrations not applied yet (or cannot tell). */
/**
 * Whether a migration is pending. The connection is read-write on purpose: after a crash it recovers
 * the hot WAL, which a read-only connection (the snapshot's copy in its thread) cannot do.
 */
function pendingSqliteMigrations(file: string, echo?: (sql: string) => void): boolean {
  try {
    const db = new BetterSqlite(file, { fileMustExist: true, ...(echo ? { verbose: (sql: unknown) => echo(String(sql)) } : {}) });
    try {
      db.pragma('busy_timeout = 10000');
      const done = new Set((db.prepare('SELECT id FROM schema_migrations').all() as { id: string }[]).map((r) => r.id));
      return migrations.some((m) => !done.has(m.id));
    } finally { db.close(); }
  } catch { return true; }
}

/** The better-sqlite3 handle under the ORM, used under the ORM's own connection lock. */
async function nativeSqlite(orm: MikroORM): Promise<NativeSqlite> {
  const conn = orm.em.getConnection() as unknown as {
    getNativeClient(): Promise<import('better-sqlite3').Database>;
    getClient(): { getExecutor(): { provideConnection<T>(fn: () => Promise<T>): Promise<T> } };
  };
  const handle = await conn.getNativeClient();
  const executor = conn.getClient().getExecutor();
  const native = new NativeSqlite(handle, (fn) => executor.provideConnection(() => fn()));
  if (process.env.HERALD_SQL_PROFILE === '1') {
    native.enableProfile();
    process.once('exit', () => process.stderr.write(`SQL profile:\n${native.profileReport()}\n`));
  }
  return native;
}
