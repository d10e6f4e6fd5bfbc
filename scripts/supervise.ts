/**
 * A minimal supervisor for hosts without systemd or a container runtime: runs the service and starts it again when it
 * exits asking for a restart (exit code 75, after apply-restart) or crashes (70 after an uncaught exception, or a
 * signal). An exit 1 within 5 s of the start is a refused start (bad configuration): not restarted.
 * `npm run start:supervised`. SIGTERM, SIGINT and SIGHUP (the terminal gone) are passed on and end the supervisor with
 * the service, which stops gracefully on each.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { SERVICE_ENV, SERVICE_NODE_FLAGS } from './node-flags.ts';

const RESTART = 75;
const main = fileURLToPath(new URL('../core/dist/main.js', import.meta.url));
let child: ChildProcess | undefined;
let stopping = false;
let crashes = 0;

function run(): void {
  const startedAt = Date.now();
  child = spawn(process.execPath, [...SERVICE_NODE_FLAGS, main], {
    stdio: 'inherit',
    // SERVICE_ENV's values unless the operator set their own (an empty one counts as unset, as in `npm start`).
    env: {
      ...process.env,
      ...Object.fromEntries(Object.entries(SERVICE_ENV).map(([k, v]) => [k, process.env[k] || v])),
      HERALD_SUPERVISOR: '1',
    },
  });
  child.on('exit', (code, signal) => {
    if (stopping) process.exit(code ?? 0);
    if (code === 0) process.exit(0);
    if (code === 1 && Date.now() - startedAt < 5000) {
      process.stderr.write('herald-supervisor: the service refused to start; not restarting\n');
      process.exit(1);
    }
    crashes = code === RESTART || Date.now() - startedAt > 60_000 ? 0 : crashes + 1;
    const delay = code === RESTART ? 0 : Math.min(30_000, 500 * 2 ** crashes);
    process.stderr.write(`herald-supervisor: service exited (${signal ?? code}); starting it again in ${delay} ms\n`);
    setTimeout(run, delay);
  });
}

for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) {
  process.on(sig, () => {
    stopping = true;
    if (child && child.exitCode === null) child.kill(sig);
    else process.exit(0);
  });
}
run();
