import fs from 'node:fs';
import path from 'node:path';
import BetterSqlite from 'better-sqlite3';

export interface SnapshotResult { file: string; pruned: string[] }

const SNAPSHOT = /^pre-migrate-\d{8}T\d{6}(\d{3})?Z\.db$/;

export function snapshotName(at: Date): string {
  return `pre-migrate-${at.toISOString().replace(/[-:]/g, '').replace(/\.(\d{3})Z$/, '$1Z')}.db`;
}

/**
 * Copies a live SQLite database with the online backup API, verifies the copy with
 * `PRAGMA integrity_check`, and keeps only the newest `keep` snapshots. Throws when the copy is not sound.
 */
export async function takeSqliteSnapshot(dbFile: string, dir: string, keep: number, at = new Date()): Promise<SnapshotResult | undefined> {
  if (keep <= 0 || !fs.existsSync(dbFile) || fs.statSync(dbFile).size === 0) return undefined;
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, snapshotName(at));
  const src = new BetterSqlite(dbFile, { fileMustExist: true });
  try {
    src.pragma('busy_timeout = 10000');
    await src.backup(file);
  } finally { src.close(); }
  const copy = new BetterSqlite(file, { readonly: true });
  let verdict: string;
  try { verdict = String(copy.pragma('integrity_check', { simple: true })); } finally { copy.close(); }
  if (verdict !== 'ok') {
    fs.rmSync(file, { force: true });
    throw new Error(`pre-migration snapshot failed its integrity check: ${verdict}`);
  }
  const all = fs.readdirSync(dir).filter((f) => SNAPSHOT.test(f)).sort();
  const pruned = all.slice(0, Math.max(0, all.length - keep));
  for (const f of pruned) fs.rmSync(path.join(dir, f), { force: true });
  return { file, pruned };
}
