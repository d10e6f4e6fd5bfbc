// Checkpoints the SQLite WAL from its own thread and connection. A checkpoint copies the WAL back
// into the database file and syncs it; run inside a commit on the main thread it stalled the event
// loop for hundreds of milliseconds at a time. A PASSIVE checkpoint never blocks the writer.
// After each checkpoint it tells the main thread how many frames were new since its last one, so
// that the checkpointer keeps it running while the service writes a lot (checkpointer.ts).
import fs from 'node:fs';
import { createRequire } from 'node:module';
import { parentPort, workerData } from 'node:worker_threads';

// The same copy of better-sqlite3 (and so of SQLite) as the main connection's: see checkpointer.ts.
const BetterSqlite = createRequire(import.meta.url)(workerData.driver);

const db = new BetterSqlite(workerData.file, { fileMustExist: true });
db.pragma('busy_timeout = 1000');

/**
 * The WAL header's checkpoint sequence number (bytes 12–15, big-endian): it changes each time a writer restarts the
 * WAL from its first frame, after a checkpoint copied all of it.
 */
const header = Buffer.alloc(16);
function walSequence() {
  let fd;
  try {
    fd = fs.openSync(`${workerData.file}-wal`, 'r');
    return fs.readSync(fd, header, 0, 16, 0) === 16 ? header.readUInt32BE(12) : -1;
  } catch {
    return -1;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

let sequence = -2;
let lastLog = 0;
const timer = setInterval(() => {
  try {
    const [r] = db.pragma('wal_checkpoint(PASSIVE)');
    const seq = walSequence();
    // A restarted WAL holds only frames written since; otherwise what it holds beyond the last count is new.
    const fresh = seq !== sequence ? r.log : Math.max(0, r.log - lastLog);
    sequence = seq;
    lastLog = r.log;
    if (fresh > 0) parentPort.postMessage({ frames: fresh });
  } catch { /* busy or closing: the next round retries */ }
}, workerData.intervalMs);
parentPort.on('message', (m) => {
  if (m !== 'stop') return;
  clearInterval(timer);
  try { db.close(); } catch { /* already closed */ }
  parentPort.close();
});
