/**
 * A stop says each of its steps in the log when the step is done (DEBUG), so that a stop that does not end shows where
 * it waits: the HTTP server, the jobs, each feature's drain and stop, the plugin instances, then the database.
 */
import t from 'tap';
import { startService } from '../helpers/service.ts';

t.test("a stop logs each step once it is done, the database's close last", async (t) => {
  const s = await startService();
  await s.stop();
  const steps = s
    .logs()
    .map((l) => String(l.msg ?? ''))
    .filter((m) => m.startsWith('shutdown: '));
  for (const step of ['HTTP server close done', 'jobs stop done', 'plugin instances stop done'])
    t.ok(steps.includes(`shutdown: ${step}`), step);
  t.ok(
    steps.some((m) => / drain done$/.test(m)) && steps.some((m) => / stop done$/.test(m) && !m.includes('jobs')),
    "the features' drains and stops",
  );
  t.equal(steps.at(-1), 'shutdown: closing the database', 'the database is closed last');
  t.ok(steps.indexOf('shutdown: plugin instances stop done') < steps.length - 1, 'after the plugin instances');
});
