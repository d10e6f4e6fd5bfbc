// Runs `PRAGMA integrity_check` on a snapshot copy off the main thread (a large database takes
// seconds to check, and the service need not wait when no migration depends on the copy).
import { parentPort, workerData } from 'node:worker_threads';
import BetterSqlite from 'better-sqlite3';

let verdict;
try {
  const copy = new BetterSqlite(workerData.file, { readonly: true });
  try { verdict = String(copy.pragma('integrity_check', { simple: true })); } finally { copy.close(); }
} catch (err) {
  verdict = `could not be checked: ${err && err.message ? err.message : String(err)}`;
}
parentPort.postMessage(verdict);
