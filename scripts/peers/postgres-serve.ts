/**
 * Keeps one throwaway PostgreSQL cluster up for a whole test run (scripts/test.sh): writes its
 * maintenance URL to the file named by the first argument, then waits. SIGTERM or SIGINT, or the
 * parent shell going away, stops the cluster and removes its folder.
 */
import fs from 'node:fs';
import { startPostgres } from './postgres.ts';

const out = process.argv[2];
if (!out) {
  process.stderr.write('usage: postgres-serve.ts <url-file>\n');
  process.exit(2);
}
const parent = process.ppid;
const pg = await startPostgres();
const stop = () => {
  try {
    pg.stopSync();
  } finally {
    process.exit(0);
  }
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
fs.writeFileSync(out, pg.url());
// Orphaned (the shell that started us was killed): clean up rather than leave a server running.
setInterval(() => {
  if (process.ppid !== parent) stop();
}, 1000);
