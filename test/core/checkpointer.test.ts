/**
 * The WAL checkpointer's inline checkpoints (a few commits in a second): one runs after commits that
 * added frames to the WAL, none after commits that wrote nothing (a transaction that found no work,
 * as an idle dispatcher's each second), and one again once something is written. And its thread: a
 * second whose few commits wrote many pages moves checkpoints off the loop, the thread's own counts
 * keep it there while the writes go on, and it stops once they calm down; a first boot's migrations, many pages
 * at once, do not start it; and it does not run the process's `--import` preloads.
 */

import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { Checkpointer } from '../../core/src/db/checkpointer.ts';
import { createLogger } from '../../core/src/logging/logger.ts';
import { freePort } from '../helpers/peers.ts';
import { exited, startHeraldProcess, untilReady } from '../helpers/process.ts';
import { walDatabase } from '../helpers/wal-db.ts';

const second = () => new Promise((r) => setTimeout(r, 1_150));

t.test('an inline checkpoint runs only when the WAL changed since the last one', async (t) => {
  const { file, db, remove } = walDatabase('herald-checkpointer-');
  let runs = 0;
  const cp = new Checkpointer(file, createLogger({ level: 'fatal', format: 'json' }).get('db'), async () => {
    runs++;
    db.pragma('wal_checkpoint(PASSIVE)');
  });
  t.teardown(async () => {
    await cp.stop();
    remove();
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
  t.equal(cp.threaded, false, 'a little written: inline');
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

t.test('many pages in few commits move checkpoints to the thread while the writes go on', async (t) => {
  const { file, db, remove } = walDatabase('herald-checkpointer-');
  const inlineFrames: number[] = [];
  const cp = new Checkpointer(
    file,
    createLogger({ level: 'fatal', format: 'json' }).get('db'),
    async () => {
      const [r] = db.pragma('wal_checkpoint(PASSIVE)') as { log: number }[];
      inlineFrames.push(r!.log);
      return r!.log;
    },
    { idleStopMs: 1_500 },
  );
  t.teardown(async () => {
    await cp.stop();
    remove();
  });
  const insert = db.prepare('INSERT INTO x VALUES (?)');
  // One commit of `rows` rows of 3 KB: about a page each.
  const commit = (rows: number) => {
    db.exec('BEGIN IMMEDIATE');
    for (let i = 0; i < rows; i++) insert.run(Buffer.alloc(3_000, i % 251));
    db.exec('COMMIT');
    cp.noteWrite();
  };

  // A boot's migrations: many pages once, checkpointed as the boot ends. They do not start the thread.
  commit(400);
  await cp.settle();
  t.equal(inlineFrames.length, 1, 'the boot checkpointed inline');
  t.ok(inlineFrames[0]! >= 256, `the boot wrote ${inlineFrames[0]} frames`);
  inlineFrames.length = 0;
  commit(1);
  await second();
  t.equal(inlineFrames.length, 1, 'the next second checkpointed inline');
  t.ok(inlineFrames[0]! < 256, `only what it wrote: ${inlineFrames[0]} frames`);
  t.equal(cp.threaded, false, 'after the boot: inline');
  inlineFrames.length = 0;

  commit(150);
  await second();
  t.equal(inlineFrames.length, 1, 'checkpointed inline');
  t.ok(inlineFrames[0]! > 100 && inlineFrames[0]! < 256, `below the bar: ${inlineFrames[0]} frames`);
  t.equal(cp.threaded, false, 'fewer than 256 frames in a second: still inline');

  commit(400);
  await second();
  t.equal(inlineFrames.length, 2, 'checkpointed inline once more');
  t.ok(inlineFrames[1]! >= 256, `over the bar: ${inlineFrames[1]} frames`);
  t.equal(cp.threaded, true, 'a large checkpoint in one commit: the next ones run on the thread');

  // Three commits a second of ~150 pages each, for four seconds: far fewer than 50 commits a second, so only the
  // thread's counts of new frames can keep it past its 1.5 s of calm.
  for (let i = 0; i < 12; i++) {
    commit(150);
    await new Promise((r) => setTimeout(r, 330));
  }
  t.equal(cp.threaded, true, 'still on the thread while the pages keep coming');
  t.equal(inlineFrames.length, 2, 'no inline checkpoint meanwhile');
  const walBefore = fs.statSync(`${file}-wal`).size;
  t.ok(walBefore < 12 * 150 * 4_096, `the thread kept the WAL short: ${walBefore} bytes`);

  // Quiet: a small commit a second is not enough to keep the thread.
  for (let i = 0; i < 4; i++) {
    commit(1);
    await second();
  }
  t.equal(cp.threaded, false, 'writes calmed down: the thread stopped');
  const inlineBefore = inlineFrames.length;
  commit(1);
  await second();
  t.equal(inlineFrames.length, inlineBefore + 1, 'and checkpoints run inline again');
});

t.test("a first boot's migrations do not start the thread", async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-checkpointer-boot-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const svc = startHeraldProcess({
    dir,
    port: await freePort(),
    key: crypto.randomBytes(32).toString('hex'),
    plugins: '@herald/provider-bridge-self',
    env: { SERVICE_DISPATCH_THREAD: 'false' },
  });
  t.teardown(() => svc.child.kill('SIGKILL'));
  await untilReady(svc.base, 'the service on a new data directory');
  // The schema's hundreds of pages were written moments ago: a thread started for them would run for 5 s or more.
  const seen = new Set<string>();
  for (let i = 0; i < 15; i++) {
    for (const task of fs.readdirSync(`/proc/${svc.child.pid}/task`)) {
      try {
        seen.add(fs.readFileSync(`/proc/${svc.child.pid}/task/${task}/comm`, 'utf8').trim());
      } catch {
        /* the thread ended meanwhile */
      }
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  t.ok(seen.has('MainThread'), `the service's threads were read: ${[...seen].join(', ')}`);
  t.notOk(seen.has('WorkerThread'), 'no worker thread in the 3 s after ready');
  svc.child.kill('SIGTERM');
  t.equal(await exited(svc.child), 0, 'stops gracefully');
});

t.test("the thread does not run the process's preloaded modules", async (t) => {
  const fixtures = new URL('../fixtures/checkpointer/', import.meta.url).pathname;
  const r = spawnSync(
    process.execPath,
    ['--import', path.join(fixtures, 'preload.mjs'), path.join(fixtures, 'thread.ts')],
    { encoding: 'utf8', timeout: 30_000 },
  );
  t.equal(r.status, 0, `the fixture ran: ${r.stderr}`);
  t.match(r.stdout, /threaded=true/, 'the checkpoints moved to the thread');
  t.notMatch(r.stderr, /the preload ran in a worker thread/, 'the preload ran in the main thread only');
});
