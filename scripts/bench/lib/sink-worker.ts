/**
 * The loopback sink, in its own thread so that recording arrivals does not wait on the load
 * generator. Each request body is searched for `benchid<n>x`; the arrival time of id n goes into a
 * shared array and its count is incremented. The status to answer is read from shared memory.
 */
import http from 'node:http';
import { parentPort, workerData } from 'node:worker_threads';

const { arrivals, counts, control } = workerData as {
  arrivals: SharedArrayBuffer;
  counts: SharedArrayBuffer;
  control: SharedArrayBuffer;
};
const at = new Float64Array(arrivals);
const count = new Int32Array(counts);
// control[0]: status to answer; [1]: total 2xx arrivals; [2]: requests refused; [3]: bodies without an id
const ctl = new Int32Array(control);
const ID = /benchid(\d+)x/;

const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const status = Atomics.load(ctl, 0);
    if (status >= 300) {
      Atomics.add(ctl, 2, 1);
      res.writeHead(status, { 'content-type': 'text/plain', 'retry-after': '1' });
      res.end('unavailable');
      return;
    }
    const now = performance.timeOrigin + performance.now();
    const m = ID.exec(Buffer.concat(chunks).toString('utf8'));
    const id = m ? Number(m[1]) : -1;
    if (id >= 0 && id < count.length) {
      if (Atomics.add(count, id, 1) === 0) at[id] = now;
    } else Atomics.add(ctl, 3, 1);
    Atomics.add(ctl, 1, 1);
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '2' });
    res.end('ok');
  });
});
server.keepAliveTimeout = 30_000;
server.listen(0, '127.0.0.1', () => parentPort!.postMessage({ port: (server.address() as { port: number }).port }));
parentPort!.on('message', (m: string) => {
  if (m === 'close') {
    server.closeAllConnections();
    server.close(() => parentPort!.postMessage({ closed: true }));
  }
});
