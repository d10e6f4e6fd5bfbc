import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import BetterSqlite from 'better-sqlite3';

/**
 * A new SQLite file in a directory of its own, in WAL mode with SQLite's automatic checkpoints off (the checkpointer
 * under test does them), holding one table `x (v BLOB)`. `remove` closes it and deletes the directory.
 */
export function walDatabase(prefix: string): { file: string; db: BetterSqlite.Database; remove(): void } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  const file = path.join(dir, 'x.db');
  const db = new BetterSqlite(file);
  db.pragma('journal_mode = WAL');
  db.pragma('wal_autocheckpoint = 0');
  db.exec('CREATE TABLE x (v BLOB)');
  return {
    file,
    db,
    remove() {
      db.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
