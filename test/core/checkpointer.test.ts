/**
 * The WAL checkpointer's inline checkpoints (a few commits in a second): one runs after commits that
 * added frames to the WAL, none after commits that wrote nothing (a transaction that found no work,
 * as an idle dispatcher's each second), and one again once something is written.
 */

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import BetterSqlite from 'better-sqlite3';
import t from 'tap';
import { Checkpointer } from '../../core/src/db/checkpointer.ts';
import { createLogger } from '../../core/src/logging/logger.ts';

const second = () => new Promise((r) => setTimeout(r, 1_150));

t.test('an inline checkpoint runs only when the WAL changed since the last one', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-checkpointer-'));
  const file = path.join(dir, 'x.db');
  const db = new BetterSqlite(file);
  db.pragma('journal_mode = WAL');
  db.pragma('wal_autocheckpoint = 0');
  db.exec('CREATE TABLE x (v TEXT)');
  let runs = 0;
  const cp = new Checkpointer(file, createLogger({ level: 'fatal', format: 'json' }).get('db'), async () => {
    runs++;
    db.pragma('wal_checkpoint(PASSIVE)');
  });
  t.teardown(async () => {
    await cp.stop();
    db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  const commit = (write: boolean) => {
    db.exec('BEGIN IMMEDIATE');
    if (write) db.prepare('INSERT INTO x VALUES (?)').run('a');
    else db.prepare('SELECT COUNT(*) FROM x').get();
    db.exec('COMMIT');
    cp.noteWrite();
  };

  commit(true);
  await second();
  t.equal(runs, 1, 'a commit that wrote: checkpointed');
  commit(false);
  commit(false);
  await second();
  commit(false);
  await second();
  t.equal(runs, 1, 'commits that wrote nothing: no checkpoint');
  commit(true);
  await second();
  t.equal(runs, 2, 'a write again: checkpointed');
  await second();
  t.equal(runs, 2, 'no commit: nothing, as before');
});
