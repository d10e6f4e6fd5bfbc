/**
 * One costly job (reading a PDF, drawing a report) in a worker thread of its own, with a bounded
 * heap and a time limit, so that a hostile or huge input costs that thread instead of the service's
 * event loop; and a gate that lets a few such jobs run at a time while the others wait their turn.
 */
import { Worker } from 'node:worker_threads';

/** Runs at most `limit()` jobs at a time (read at each call, so a limit can be changed at run time). */
export function gate(limit: () => number): <T>(work: () => Promise<T>) => Promise<T> {
  let running = 0;
  const waiting: (() => void)[] = [];
  return async (work) => {
    if (running >= limit()) await new Promise<void>((resolve) => waiting.push(resolve));
    running++;
    try {
      return await work();
    } finally {
      running--;
      waiting.shift()?.();
    }
  };
}

export interface WorkerJob<M, T> {
  /** The worker's module; it posts exactly one message. */
  url: URL;
  workerData: unknown;
  seconds: number;
  heapMb: number;
  /** The thread's message, read into the result, or into the error to throw. */
  read(message: M): T | Error;
  /** The error when the thread runs out of its time or its heap. */
  costly(): Error;
  /** The error when the thread fails (`err`) or ends without answering (no `err`). */
  crashed(err?: Error): Error;
}

/** Starts the thread and settles with its answer; the thread is terminated whatever the outcome. */
export function runWorker<M, T>(job: WorkerJob<M, T>): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const worker = new Worker(job.url, {
      workerData: job.workerData,
      resourceLimits: { maxOldGenerationSizeMb: job.heapMb, maxYoungGenerationSizeMb: 16 },
      stdout: true,
      stderr: true,
    });
    let settled = false;
    const finish = (outcome: T | Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      void worker.terminate();
      if (outcome instanceof Error) reject(outcome);
      else resolve(outcome);
    };
    const timer = setTimeout(() => finish(job.costly()), job.seconds * 1000);
    worker.once('message', (m: M) => finish(job.read(m)));
    worker.once('error', (err: Error & { code?: string }) =>
      finish(err.code === 'ERR_WORKER_OUT_OF_MEMORY' ? job.costly() : job.crashed(err)),
    );
    worker.once('exit', () => finish(job.crashed()));
  });
}
