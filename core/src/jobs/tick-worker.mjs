// Bree runs this in a worker thread on each tick; the job itself runs in the main thread, where the
// database connection, the plugin instances and the leader lease live.
import { parentPort } from 'node:worker_threads';
parentPort.postMessage({ tick: true });
parentPort.postMessage('done');
