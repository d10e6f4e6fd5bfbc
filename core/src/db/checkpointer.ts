import fs from 'node:fs';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type { Logger } from '../logging/logger.ts';

/**
 * The better-sqlite3 the main connection loaded (native-connect.ts, core's own). The worker must
 * open the database with the very same copy of SQLite: two copies in one process each believe they
 * are the only user of the file, and one truncating the shared-memory index the other has mapped
 * kills the process with SIGBUS.
 */
const DRIVER = createRequire(import.meta.url).resolve('better-sqlite3');

/** How often the worker checkpoints while it runs. */
const INTERVAL_MS = 250;
/** Commits in one second from which checkpoints move to the worker thread. */
const BUSY_COMMITS = 50;
/**
 * WAL frames (pages) written in one second from which checkpoints move to the worker thread: ~1 MB. A burst of
 * webhooks in large group commits writes ~2,000 a second in fewer than 50 commits, and copying them inline held the
 * event loop 45–60 ms, most of it waiting for the database file's fsync.
 */
const BUSY_FRAMES = 256;
/** The worker is stopped after this long below those rates (a thread costs ~18 MB of RSS). */
const IDLE_STOP_MS = 5_000;

/**
 * Keeps the SQLite WAL checkpointed without stalling the event loop. Once a second: when the main
 * connection wrote a little, a PASSIVE checkpoint runs inline (a few pages); when it committed often
 * or wrote many pages, checkpoints move to a worker thread (checkpoint-worker.mjs), which a checkpoint of many
 * pages would otherwise stall the loop for; the worker stops again once writes calm down. An
 * inline checkpoint is skipped when the WAL file has not changed since the last one: commits that
 * wrote nothing (a transaction that found no work) add no frames to copy. The inline checkpoint's
 * own count of frames says how much was written in its second; the worker reports what each of its
 * checkpoints found new.
 */
export class Checkpointer {
  private file: string;
  private log: Logger;
  private inline: () => Promise<number | undefined>;
  private worker?: Worker;
  private commits = 0;
  /** Frames the worker's checkpoints found new since the last check. */
  private frames = 0;
  private busyAt = 0;
  private timer: NodeJS.Timeout;
  private stopped = false;
  private idleStopMs: number;
  /** The WAL file's size and change time when the last inline checkpoint began (it copied everything up to then). */
  private checkpointedWal?: string;

  /**
   * `inline` checkpoints on the main connection and resolves to the frames the WAL held (SQLite's `log`).
   * `opts.idleStopMs` is for tests.
   */
  constructor(
    file: string,
    log: Logger,
    inline: () => Promise<number | undefined>,
    opts: { idleStopMs?: number } = {},
  ) {
    this.file = file;
    this.log = log;
    this.inline = inline;
    this.idleStopMs = opts.idleStopMs ?? IDLE_STOP_MS;
    this.timer = setInterval(() => this.check(), 1000);
    this.timer.unref();
  }

  /** Called after each commit of the main connection. */
  noteWrite(): void {
    this.commits++;
  }

  /**
   * Checkpoints inline now and counts afresh from here: called once the boot's migrations are written, so that a
   * first boot's schema (hundreds of pages in one second) does not start the thread for an idle service.
   */
  async settle(): Promise<void> {
    this.commits = 0;
    const wal = this.walState();
    try {
      await this.inline();
      this.checkpointedWal = wal;
    } catch (err) {
      this.log.debug({ err: (err as Error).message }, 'WAL checkpoint skipped');
    }
  }

  /** Whether checkpoints run on the worker thread now (for tests and diagnostics). */
  get threaded(): boolean {
    return this.worker !== undefined;
  }

  private check(): void {
    const n = this.commits;
    const frames = this.frames;
    this.commits = 0;
    this.frames = 0;
    if (this.stopped) return;
    if (n >= BUSY_COMMITS || frames >= BUSY_FRAMES) this.busyAt = Date.now();
    if (this.worker) {
      if (Date.now() - this.busyAt > this.idleStopMs) void this.halt();
      return;
    }
    if (n >= BUSY_COMMITS) this.start();
    else if (n > 0) {
      const wal = this.walState();
      if (wal !== undefined && wal === this.checkpointedWal) return;
      void this.inline().then(
        (walFrames) => {
          this.checkpointedWal = wal;
          // What this second wrote was a large checkpoint already: the next ones run off the loop.
          if (walFrames !== undefined && walFrames >= BUSY_FRAMES && !this.stopped && !this.worker) {
            this.busyAt = Date.now();
            this.start();
          }
        },
        (err: Error) => this.log.debug({ err: err.message }, 'WAL checkpoint skipped'),
      );
    }
  }

  /** The WAL file's size and change time (nanoseconds), or undefined when it cannot be read. */
  private walState(): string | undefined {
    try {
      const st = fs.statSync(`${this.file}-wal`, { bigint: true });
      return `${st.size}:${st.mtimeNs}`;
    } catch {
      return undefined;
    }
  }

  private start(): void {
    const w = new Worker(new URL('./checkpoint-worker.mjs', import.meta.url), {
      workerData: { file: this.file, intervalMs: INTERVAL_MS, driver: DRIVER },
      // Not the process's own options: a module preloaded with `--import` (an operator's instrumentation, a test's
      // fixture) has nothing to do in this thread, and would run there a second time.
      execArgv: [],
    });
    w.unref();
    w.on('message', (m: { frames?: number }) => {
      if (this.worker === w && typeof m?.frames === 'number') this.frames += m.frames;
    });
    w.on('error', (err) =>
      this.log.warn(
        { err: err.message },
        'the WAL checkpointer thread failed; checkpoints run inline until it restarts',
      ),
    );
    w.once('exit', () => {
      if (this.worker === w) this.worker = undefined;
    });
    this.worker = w;
  }

  private async halt(): Promise<void> {
    const w = this.worker;
    if (!w) return;
    this.worker = undefined;
    // Held while stopping, so that the wait itself keeps the process running.
    w.ref();
    const exited = new Promise<void>((r) => w.once('exit', () => r()));
    w.postMessage('stop');
    let t: NodeJS.Timeout | undefined;
    await Promise.race([
      exited,
      new Promise<void>((r) => {
        t = setTimeout(r, 2000);
      }),
    ]);
    clearTimeout(t);
    await w.terminate();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.halt();
  }
}
