// Checkpoints the SQLite WAL from its own thread and connection. A checkpoint copies the WAL back
// into the database file and syncs it; run inside a commit on the main thread it stalled the event
// loop for hundreds of milliseconds at a time. A PASSIVE checkpoint never blocks the writer.
import { createRequire } from 'node:module';
import { parentPort, workerData } from 'node:worker_threads';

// The same copy of better-sqlite3 (and so of SQLite) as the main connection's: see checkpointer.ts.
const BetterSqlite = createRequire(import.meta.url)(workerData.driver);

const db = new BetterSqlite(workerData.file, { fileMustExist: true });
db.pragma('busy_timeout = 1000');
const timer = setInterval(() => {
  try { db.pragma('wal_checkpoint(PASSIVE)'); } catch { /* busy or closing: the next round retries */ }
}, workerData.intervalMs);
parentPort.on('message', (m) => {
  if (m !== 'stop') return;
  clearInterval(timer);
  try { db.close(); } catch { /* already closed */ }
  parentPort.close();
});
