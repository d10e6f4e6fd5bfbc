// Off the main thread: copies a live database into a snapshot file (when `source` is given) with the
// online backup API, then runs `PRAGMA integrity_check` on the copy (a large database takes seconds
// to copy and check, and the service need not wait when no migration depends on the copy).
import { parentPort, workerData } from 'node:worker_threads';
import BetterSqlite from 'better-sqlite3';

async function run() {
  if (workerData.source) {
    const src = new BetterSqlite(workerData.source, { fileMustExist: true });
    try {
      src.pragma('busy_timeout = 10000');
      // One step for the whole file: a single read transaction, so the copy is one consistent
      // state however the service writes meanwhile (WAL lets those writes proceed).
      await src.backup(workerData.file, { progress: () => 2_000_000_000 });
    } catch (err) {
      return `could not be copied: ${err && err.message ? err.message : String(err)}`;
    } finally { src.close(); }
  }
  try {
    const copy = new BetterSqlite(workerData.file, { readonly: true });
    try { return String(copy.pragma('integrity_check', { simple: true })); } finally { copy.close(); }
  } catch (err) {
    return `could not be checked: ${err && err.message ? err.message : String(err)}`;
  }
}
parentPort.postMessage(await run());
