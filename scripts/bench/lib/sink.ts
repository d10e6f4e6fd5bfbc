/** A loopback HTTP sink recording the first arrival time and the arrival count of every bench id. */
import { Worker } from 'node:worker_threads';
import { sleep } from './stats.ts';

export interface Sink {
  url: string;
  /** First arrival wall time of id n (0 until it arrives). */
  at: Float64Array;
  /** Arrivals of id n (more than one is a duplicate). */
  count: Int32Array;
  /** 2xx arrivals so far. */
  total(): number;
  /** Requests answered with an error status. */
  refused(): number;
  /** Bodies that carried no id. */
  unmatched(): number;
  /** Answer every request with this status from now on (200 to recover). */
  respond(status: number): void;
  /** Waits until `n` distinct ids arrived or `ms` passed; returns the distinct count. */
  waitDistinct(n: number, ms: number): Promise<number>;
  close(): Promise<void>;
}

export async function startSink(capacity: number): Promise<Sink> {
  const arrivals = new SharedArrayBuffer(capacity * 8);
  const counts = new SharedArrayBuffer(capacity * 4);
  const control = new SharedArrayBuffer(16);
  const ctl = new Int32Array(control);
  ctl[0] = 200;
  const worker = new Worker(new URL('./sink-worker.ts', import.meta.url), {
    workerData: { arrivals, counts, control },
  });
  const port = await new Promise<number>((resolve, reject) => {
    worker.once('message', (m: { port: number }) => resolve(m.port));
    worker.once('error', reject);
  });
  const count = new Int32Array(counts);
  const distinct = () => {
    let n = 0;
    for (let i = 0; i < count.length; i++) if (count[i]! > 0) n++;
    return n;
  };
  return {
    url: `http://127.0.0.1:${port}/`,
    at: new Float64Array(arrivals),
    count,
    total: () => Atomics.load(ctl, 1),
    refused: () => Atomics.load(ctl, 2),
    unmatched: () => Atomics.load(ctl, 3),
    respond: (status) => {
      Atomics.store(ctl, 0, status);
    },
    async waitDistinct(n, ms) {
      const end = Date.now() + ms;
      let d = distinct();
      while (d < n && Date.now() < end) {
        await sleep(20);
        if (Atomics.load(ctl, 1) >= n) d = distinct();
      }
      return distinct();
    },
    async close() {
      const closed = new Promise<void>((r) =>
        worker.on('message', (m: { closed?: boolean }) => {
          if (m.closed) r();
        }),
      );
      worker.postMessage('close');
      await Promise.race([closed, sleep(2000)]);
      await worker.terminate();
    },
  };
}
