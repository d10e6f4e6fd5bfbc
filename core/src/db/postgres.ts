import path from 'node:path';
import type { MikroORM as BaseORM } from '@mikro-orm/core';
import { MikroORM, PostgreSqlDriver } from '@mikro-orm/postgresql';
import pg from 'pg';
import { migrations } from '../../../migrations/index.ts';
import type { Config } from '../config/config.ts';
import type { Logger } from '../logging/logger.ts';
import type { Database } from './database.ts';
import { migrate } from './migrate.ts';
import { onPath, takePgSnapshot } from './pg-snapshot.ts';
import { ormLoggerFactory } from './sql-echo.ts';

/** Arbitrary constant: the advisory lock that serialises boots (snapshot + migrations) across replicas. */
const MIGRATE_LOCK_KEY = 7_226_371_900;

/**
 * PostgreSQL backend for several replicas: MikroORM's PostgreSQL driver as the connection pool and
 * transaction manager, with no entities (the records are read and written by SQL through
 * `Database`; docs/decisions/orm.md says why).
 */
export async function openPostgres(config: Config, log: Logger): Promise<BaseORM> {
  const orm = await MikroORM.init({
    driver: PostgreSqlDriver,
    clientUrl: config.databaseUrl,
    entities: [],
    discovery: { warnWhenNoEntities: false },
    // SERVICE_DEBUG echoes each statement (placeholders, not values) through the logger: sql-echo.ts.
    debug: config.debug ? ['query'] : false,
    loggerFactory: ormLoggerFactory(log),
    allowGlobalContext: false,
  });
  return orm as unknown as BaseORM;
}

/**
 * Boot-time schema work on PostgreSQL, one replica at a time (a session advisory lock held on a
 * connection of its own): when a migration is pending, a verified `pg_dump` snapshot of an existing
 * database, then the migrations. Replicas started together wait for each other instead of racing
 * on DDL; the ones that come second find nothing left to apply, and take no snapshot.
 *
 * Without `pg_dump` on PATH no snapshot can be taken: that is logged as a warning at every boot
 * with a migration to apply, because backing the database up before an upgrade is then the operator's job.
 */
export async function migratePostgres(db: Database, config: Config, log: Logger): Promise<string[]> {
  const lock = new pg.Client({ connectionString: config.databaseUrl, application_name: 'herald-migrate' });
  await lock.connect();
  try {
    await lock.query('SELECT pg_advisory_lock($1)', [MIGRATE_LOCK_KEY]);
    const existing =
      (await lock.query<{ ok: boolean }>(`SELECT to_regclass('schema_migrations') IS NOT NULL AS ok`)).rows[0]?.ok ===
      true;
    const done = existing
      ? new Set((await lock.query<{ id: string }>('SELECT id FROM schema_migrations')).rows.map((r) => r.id))
      : new Set<string>();
    if (existing && config.preMigrateSnapshotKeep > 0 && migrations.some((m) => !done.has(m.id))) {
      const pgDump = onPath('pg_dump');
      const pgRestore = onPath('pg_restore');
      if (!pgDump || !pgRestore) {
        log.warn(
          { missing: [!pgDump && 'pg_dump', !pgRestore && 'pg_restore'].filter(Boolean) },
          'no pre-migration snapshot: pg_dump and pg_restore are not both on PATH, so backing up ' +
            "PostgreSQL before an upgrade is the operator's job (install the PostgreSQL client tools, or set " +
            'SERVICE_PRE_MIGRATE_SNAPSHOT_KEEP=0 to silence this)',
        );
      } else {
        const snap = await takePgSnapshot({
          databaseUrl: config.databaseUrl,
          dir: path.join(config.dataDir, 'snapshots'),
          keep: config.preMigrateSnapshotKeep,
          pgDump,
          pgRestore,
        });
        log.info(
          { file: path.basename(snap.file), entries: snap.entries, pruned: snap.pruned.length },
          'pre-migration pg_dump snapshot taken and verified',
        );
      }
    }
    return await migrate(db, migrations);
  } finally {
    await lock.query('SELECT pg_advisory_unlock($1)', [MIGRATE_LOCK_KEY]).catch(() => {});
    await lock.end().catch(() => {});
  }
}
