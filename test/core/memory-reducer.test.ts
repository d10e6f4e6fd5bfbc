import v8 from 'node:v8';
import t from 'tap';
import { startService, type TestService } from '../helpers/service.ts';

// Read by createService: the service counts as idle after 1 s without requests (5 s by default). Requests 100 ms apart
// keep it busy unless the machine stalls the test for 900 ms between two of them.
process.env.HERALD_MEMORY_REDUCER_IDLE_MS = '1000';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const runsOf = (s: TestService) =>
  s.logs().filter((l) => l.module === 'memory' && l.msg === 'reduced memory after idling');

async function waitForRun(s: TestService, ms: number): Promise<any[]> {
  const end = Date.now() + ms;
  while (runsOf(s).length === 0 && Date.now() < end) await sleep(50);
  return runsOf(s);
}

t.test('the idle service gives its unused heap back, once, and not while requests arrive', async (t) => {
  const s = await startService();
  t.teardown(() => s.stop());
  // Boot grew the heap (the young generation above all) well past what the service keeps alive.
  const booted = v8.getHeapStatistics();
  t.ok(
    booted.total_heap_size - booted.used_heap_size > 16 * 1024 * 1024,
    'boot left more than 16 MB of committed heap unused',
  );

  // Requests every 100 ms for two and a half times the idle delay: no collection meanwhile.
  for (let i = 0; i < 25; i++) {
    t.equal((await s.request('GET', '/api/health')).status, 200);
    await sleep(100);
  }
  t.same(runsOf(s), [], 'no collection while requests keep arriving');

  const runs = await waitForRun(s, 15_000);
  t.equal(runs.length, 1, 'collected once the service went idle');
  const run = runs[0];
  t.ok(
    run.heap_total_after_mb < run.heap_total_before_mb - 16,
    `committed heap shrank: ${run.heap_total_before_mb} → ${run.heap_total_after_mb} MB`,
  );
  t.ok(run.rss_after_mb < run.rss_before_mb, `resident memory shrank: ${run.rss_before_mb} → ${run.rss_after_mb} MB`);
  t.ok(
    v8.getHeapStatistics().total_heap_size < booted.total_heap_size - 16 * 1024 * 1024,
    'the process heap is smaller than right after boot',
  );

  await sleep(1_500);
  t.equal(runsOf(s).length, 1, 'staying idle does not collect again');
  t.equal((s.service.core.services.get('memoryReducer') as { runs: number }).runs, 1);
});

t.test('HERALD_MEMORY_REDUCER_IDLE_MS=off disables the reducer', async (t) => {
  process.env.HERALD_MEMORY_REDUCER_IDLE_MS = 'off';
  t.teardown(() => {
    process.env.HERALD_MEMORY_REDUCER_IDLE_MS = '1000';
  });
  const s = await startService();
  t.teardown(() => s.stop());
  await sleep(1_500);
  t.same(runsOf(s), []);
  t.equal((s.service.core.services.get('memoryReducer') as { runs: number }).runs, 0);
});
