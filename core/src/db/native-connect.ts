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
  // Temporary files in memory. The group commit runs each unit under a savepoint (sqlite-native.ts), and SQLite
  // copies every existing page a unit changes into a sub-journal. Once one unit changes more than 64 KB (an event
  // with its deliveries and their indexes can), the sub-journal moves to a temporary file for the rest of the
  // transaction, and every page each later unit changes costs two write system calls. Under a webhook burst that
  // was ~42 of the ~58 write calls and ~89 KB of the ~125 KB written per event, and ~60 % of the COMMIT's CPU
  // (issue 27, RESULTS.md). In memory the sub-journal holds one unit's pages at a time (it is emptied when the unit's
  // savepoint is released). The cost: a sort or GROUP BY over more rows than the page cache holds no longer spills
  // to a file either (the service's aggregations are over one user's rows in a window; the command line's are over
  // the whole log, in a process of their own).
  'temp_store = MEMORY',
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
