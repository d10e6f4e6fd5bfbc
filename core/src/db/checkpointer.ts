import { Worker } from 'node:worker_threads';
import type { Logger } from '../logging/logger.ts';

/** How often the WAL is checkpointed from the worker. */
const INTERVAL_MS = 250;

/**
 * Starts the WAL checkpointer thread for an SQLite file (see checkpoint-worker.mjs); returns its
 * stop function. The thread does not keep the process alive.
 */
export function startCheckpointer(file: string, log: Logger): () => Promise<void> {
  const worker = new Worker(new URL('./checkpoint-worker.mjs', import.meta.url), { workerData: { file, intervalMs: INTERVAL_MS } });
  worker.unref();
  worker.on('error', (err) => log.warn({ err: err.message }, 'the WAL checkpointer stopped; the connection checkpoints by itself from now on'));
  return async () => {
    // Held while stopping, so that the wait itself keeps the process running.
    worker.ref();
    const exited = new Promise<void>((r) => worker.once('exit', () => r()));
    worker.postMessage('stop');
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([exited, new Promise<void>((r) => { timer = setTimeout(r, 2000); })]);
    clearTimeout(timer);
    await worker.terminate();
  };
}
