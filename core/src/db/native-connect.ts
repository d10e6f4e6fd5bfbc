/**
 * A SQLite connection without the ORM: better-sqlite3 under NativeSqlite, for a thread that runs raw
 * SQL only (the dispatch thread). MikroORM with its entity metadata, Kysely and their code cost a
 * worker thread start-up time and ~30 MB of heap until its first full collection (a few MB after it),
 * for code it would never run. Same file, same connection settings as the
 * service's own connection (open.ts), which has run the snapshot and migrations before this opens.
 */
import BetterSqlite from 'better-sqlite3';
import { Database } from './database.ts';
import { NativeSqlite, type ConnectionLock } from './sqlite-native.ts';

/** The settings of every connection to the SQLite file, in order (see open.ts for the service's own). */
export const SQLITE_PRAGMAS = [
  'journal_mode = WAL',
  'busy_timeout = 10000',
  'foreign_keys = ON',
  'synchronous = NORMAL',
  // 32 MB of page cache (the default is 2 MB): the indexes written at random places (replay keys
  // are random GUIDs) stay in memory instead of being read back from the file on every insert.
  // Pages are allocated as they are used, so an idle service does not pay for it.
  'cache_size = -32000',
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
 * Opens the existing SQLite file for raw SQL; closing the Database closes the handle. `echo`
 * (SERVICE_DEBUG) is handed every statement it runs, its connection settings included.
 */
export function connectNativeSqlite(file: string, echo?: (sql: string) => void): Database {
  const handle = new BetterSqlite(file, { fileMustExist: true });
  for (const p of SQLITE_PRAGMAS) { echo?.(`PRAGMA ${p}`); handle.pragma(p); }
  const native = new NativeSqlite(handle, mutex());
  if (echo) native.echo(echo);
  const db = new Database(undefined, 'sqlite', native);
  db.onClose(async () => { handle.close(); });
  return db;
}
