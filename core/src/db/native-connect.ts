/**
 * SQLite connections without the ORM: better-sqlite3 under NativeSqlite. Every statement on SQLite is
 * raw SQL, so neither the service's own connection (open.ts) nor a second one (the dispatch thread's,
 * the command line's) loads MikroORM: with its entity metadata, Kysely and their code it cost ~16 MB
 * of idle resident memory and a thread's start-up time, for code that never ran (issue 27,
 * scripts/bench/RESULTS.md). Every connection uses the same settings; a second one opens the file
 * the service's own has already snapshotted and migrated.
 */
import BetterSqlite from 'better-sqlite3';
import { Database } from './database.ts';
import { type ConnectionLock, NativeSqlite } from './sqlite-native.ts';

/** The settings of every connection to the SQLite file, in order (see open.ts for the service's own). */
export const SQLITE_PRAGMAS = [
  'journal_mode = WAL',
  'busy_timeout = 10000',
  'foreign_keys = ON',
  'synchronous = NORMAL',
  // 16 MB of page cache (the default is 2 MB): the indexes written at random places (replay keys
  // are random GUIDs) stay in memory instead of being read back from the file on every insert.
  // Pages are allocated as they are used, so an idle service does not pay for it. 32 MB cost ~20 MB
  // more at the peak of a 10,000-event burst for no less CPU per event (issue 27, RESULTS.md).
  'cache_size = -16000',
  // Checkpoints are driven by checkpointer.ts (in a worker thread under heavy writes); the
  // connection itself checkpoints only as a backstop, should the WAL ever pass ~400 MB.
  'wal_autocheckpoint = 100000',
] as const;

/** One holder at a time, in arrival order (what Kysely's mutex gives the ORM's connection). */
function mutex(): ConnectionLock {
  let tail: Promise<unknown> = Promise.resolve();
  return <T>(fn: () => Promise<T>): Promise<T> => {
    const run = tail.then(fn, fn);
    tail = run.catch(() => {});
    return run;
  };
}

/**
 * Opens the SQLite file for raw SQL and tunes the connection; closing the Database closes the
 * handle. `create`: the file is created when missing (the service's own connection, which migrates
 * it next); otherwise it must exist. `echo` (SERVICE_DEBUG) is handed every statement it runs, its
 * connection settings included.
 */
export function openNativeSqlite(
  file: string,
  opts: { create?: boolean; echo?: (sql: string) => void } = {},
): { db: Database; native: NativeSqlite } {
  const { echo } = opts;
  const handle = new BetterSqlite(file, { fileMustExist: !opts.create });
  for (const p of SQLITE_PRAGMAS) {
    echo?.(`PRAGMA ${p}`);
    handle.pragma(p);
  }
  const native = new NativeSqlite(handle, mutex());
  if (echo) native.echo(echo);
  const db = new Database(undefined, 'sqlite', native);
  db.onClose(async () => {
    handle.close();
  });
  return { db, native };
}

/** Opens the existing SQLite file for raw SQL (a second connection: the dispatch thread's, the command line's). */
export function connectNativeSqlite(file: string, echo?: (sql: string) => void): Database {
  return openNativeSqlite(file, { echo }).db;
}
