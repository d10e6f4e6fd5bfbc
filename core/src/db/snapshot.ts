import fs from 'node:fs';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import BetterSqlite from 'better-sqlite3';

export interface SnapshotResult {
  file: string;
  pruned: string[];
}

/** Runs `PRAGMA integrity_check` on `file` in a worker thread; resolves with its verdict. */
function checkInWorker(file: string): Promise<string> {
  return new Promise((resolve) => {
    const w = new Worker(new URL('./snapshot-check-worker.mjs', import.meta.url), { workerData: { file } });
    w.once('message', (v: string) => resolve(v));
    w.once('error', (err) => resolve(`could not be checked: ${err.message}`));
  });
}

const SNAPSHOT = /^pre-migrate-\d{8}T\d{6}(\d{3})?Z\.db$/;
/**
 * A snapshot's side files: its WAL, shared memory and rollback journal (earlier versions left the first two behind).
 */
const SIDE_FILE = /^(pre-migrate-\d{8}T\d{6}(\d{3})?Z\.db)-(wal|shm|journal)$/;

export function snapshotName(at: Date): string {
  return `pre-migrate-${at
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.(\d{3})Z$/, '$1Z')}.db`;
}

/**
 * Copies a live SQLite database with the online backup API, verifies the copy with
 * `PRAGMA integrity_check`, and keeps only the newest `keep` snapshots. Throws when the copy is not sound.
 */
export async function takeSqliteSnapshot(
  dbFile: string,
  dir: string,
  keep: number,
  at = new Date(),
): Promise<SnapshotResult | undefined> {
  const copied = await copySqliteSnapshot(dbFile, dir, keep, at);
  if (!copied) return undefined;
  return copied.verify(checkNow);
}

function checkNow(file: string): Promise<string> {
  const copy = new BetterSqlite(file, { readonly: true });
  try {
    return Promise.resolve(String(copy.pragma('integrity_check', { simple: true })));
  } finally {
    copy.close();
  }
}

const removeCopy = (file: string) => {
  for (const f of [file, `${file}-wal`, `${file}-shm`, `${file}-journal`]) fs.rmSync(f, { force: true });
};

/**
 * A copy that failed its check is deleted; otherwise the oldest snapshots beyond `keep` are pruned,
 * each with its side files, and so are side files whose snapshot is gone.
 */
function verified(file: string, dir: string, keep: number, verdict: string): SnapshotResult {
  if (verdict !== 'ok') {
    removeCopy(file);
    throw new Error(`pre-migration snapshot failed its integrity check: ${verdict}`);
  }
  const names = fs.readdirSync(dir);
  const all = names.filter((f) => SNAPSHOT.test(f)).sort();
  const pruned = all.slice(0, Math.max(0, all.length - keep));
  const kept = new Set(all.slice(pruned.length));
  for (const f of pruned) fs.rmSync(path.join(dir, f), { force: true });
  for (const f of names) {
    const side = SIDE_FILE.exec(f);
    if (side && !kept.has(side[1]!)) fs.rmSync(path.join(dir, f), { force: true });
  }
  return { file, pruned };
}

/**
 * The copy half of a snapshot. The copy is made a single self-contained file (rollback journal
 * instead of the live database's WAL), so opening it later, for the check or a restore, leaves no
 * `-wal` or `-shm` beside it. `verify` then checks it (in this thread, or in a worker thread by
 * default), deletes it and throws when it is not sound, and prunes the oldest beyond `keep`.
 */
export async function copySqliteSnapshot(
  dbFile: string,
  dir: string,
  keep: number,
  at = new Date(),
): Promise<{ file: string; verify(check?: (file: string) => Promise<string>): Promise<SnapshotResult> } | undefined> {
  if (keep <= 0 || !fs.existsSync(dbFile) || fs.statSync(dbFile).size === 0) return undefined;
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, snapshotName(at));
  const src = new BetterSqlite(dbFile, { fileMustExist: true });
  try {
    src.pragma('busy_timeout = 10000');
    // Copy in large steps: the default 100 pages per step made a copy of 50 MB take twice as long.
    await src.backup(file, { progress: () => 100_000 });
  } finally {
    src.close();
  }
  try {
    const copy = new BetterSqlite(file, { fileMustExist: true });
    try {
      copy.pragma('journal_mode = DELETE');
    } finally {
      copy.close();
    }
  } catch (err) {
    removeCopy(file);
    throw new Error(`pre-migration snapshot failed its integrity check: ${(err as Error).message}`);
  }
  return {
    file,
    async verify(check: (file: string) => Promise<string> = checkInWorker) {
      return verified(file, dir, keep, await check(file));
    },
  };
}
