// Off the main thread: runs `PRAGMA integrity_check` on a snapshot copy (a large database takes
// seconds to check, and the event loop stays free meanwhile).
import { parentPort, workerData } from 'node:worker_threads';
import BetterSqlite from 'better-sqlite3';

function run() {
  try {
    const copy = new BetterSqlite(workerData.file, { readonly: true });
    try { return String(copy.pragma('integrity_check', { simple: true })); } finally { copy.close(); }
  } catch (err) {
    return `could not be checked: ${err && err.message ? err.message : String(err)}`;
  }
}
parentPort.postMessage(run());
