import fs from 'node:fs';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import BetterSqlite from 'better-sqlite3';

export interface SnapshotResult { file: string; pruned: string[] }

/**
 * Runs `PRAGMA integrity_check` on `file` (after copying `source` into it, when given) in a worker
 * thread; resolves with its verdict. Aborting `signal` stops the worker (the verdict says so).
 */
function checkInWorker(file: string, source?: string, signal?: AbortSignal): Promise<string> {
  return new Promise((resolve) => {
    const w = new Worker(new URL('./snapshot-check-worker.mjs', import.meta.url), { workerData: { file, source } });
    // Resolved once the thread is gone, so that nothing writes the copy after it is deleted.
    const stop = () => { void w.terminate().finally(() => resolve('abandoned: the service stopped first')); };
    signal?.addEventListener('abort', stop, { once: true });
    w.once('message', (v: string) => { signal?.removeEventListener('abort', stop); resolve(v); });
    w.once('error', (err) => { signal?.removeEventListener('abort', stop); resolve(`could not be checked: ${err.message}`); });
  });
}

const SNAPSHOT = /^pre-migrate-\d{8}T\d{6}(\d{3})?Z\.db$/;

export function snapshotName(at: Date): string {
  return `pre-migrate-${at.toISOString().replace(/[-:]/g, '').replace(/\.(\d{3})Z$/, '$1Z')}.db`;
}

/**
 * Copies a live SQLite database with the online backup API, verifies the copy with
 * `PRAGMA integrity_check`, and keeps only the newest `keep` snapshots. Throws when the copy is not sound.
 */
export async function takeSqliteSnapshot(dbFile: string, dir: string, keep: number, at = new Date()): Promise<SnapshotResult | undefined> {
  const copied = await copySqliteSnapshot(dbFile, dir, keep, at);
  if (!copied) return undefined;
  return copied.verify(checkNow);
}

function checkNow(file: string): Promise<string> {
  const copy = new BetterSqlite(file, { readonly: true });
  try { return Promise.resolve(String(copy.pragma('integrity_check', { simple: true }))); } finally { copy.close(); }
}

/**
 * A whole snapshot, copy and check, in a worker thread from one consistent read of the live
 * database, for boots where nothing waits on it (no migration pending, no restore staged): the
 * service gets ready meanwhile. A copy that fails its check is deleted; the oldest beyond `keep`
 * are pruned. Resolves undefined when snapshots are off or there is no database yet.
 */
export async function snapshotInBackground(dbFile: string, dir: string, keep: number, o: { at?: Date; signal?: AbortSignal } = {}): Promise<SnapshotResult | undefined> {
  if (keep <= 0 || !fs.existsSync(dbFile) || fs.statSync(dbFile).size === 0) return undefined;
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, snapshotName(o.at ?? new Date()));
  return verified(file, dir, keep, await checkInWorker(file, dbFile, o.signal));
}

function verified(file: string, dir: string, keep: number, verdict: string): SnapshotResult {
  if (verdict !== 'ok') {
    fs.rmSync(file, { force: true });
    throw new Error(`pre-migration snapshot failed its integrity check: ${verdict}`);
  }
  const all = fs.readdirSync(dir).filter((f) => SNAPSHOT.test(f)).sort();
  const pruned = all.slice(0, Math.max(0, all.length - keep));
  for (const f of pruned) fs.rmSync(path.join(dir, f), { force: true });
  return { file, pruned };
}

/**
 * The copy half of a snapshot. `verify` then checks it (in this thread, or in a worker thread with
 * `inWorker`), deletes it and throws when it is not sound, and prunes the oldest beyond `keep`.
 */
export async function copySqliteSnapshot(dbFile: string, dir: string, keep: number, at = new Date()): Promise<{ file: string; verify(check?: (file: string) => Promise<string>): Promise<SnapshotResult> } | undefined> {
  if (keep <= 0 || !fs.existsSync(dbFile) || fs.statSync(dbFile).size === 0) return undefined;
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, snapshotName(at));
  const src = new BetterSqlite(dbFile, { fileMustExist: true });
  try {
    src.pragma('busy_timeout = 10000');
    // Copy in large steps: the default 100 pages per step made a copy of 50 MB take twice as long.
    await src.backup(file, { progress: () => 100_000 });
  } finally { src.close(); }
  return {
    file,
    async verify(check: (file: string) => Promise<string> = checkInWorker) {
      return verified(file, dir, keep, await check(file));
    },
  };
}
