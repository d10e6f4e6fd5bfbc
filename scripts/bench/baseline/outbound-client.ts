/**
 * Baseline for bench:floor: the service's own outbound HTTP client (core/src/net/outbound.ts, the
 * one target plugins send through: SSRF checks, pinned address, timeouts, capped response) posting
 * a chat-webhook message per request to the loopback sink, `concurrency` at a time. Run as a child
 * process; prints one JSON line: requests, failures and its own CPU time per request (µs) over the
 * measured part (after `warm` requests). Args: <sink url> <n> <warm> <concurrency>.
 */
import { createOutboundHttp } from '../../../core/src/net/outbound.ts';

const [url, nArg, warmArg, cArg] = process.argv.slice(2);
const n = Number(nArg);
const warm = Number(warmArg);
const concurrency = Number(cArg);
const http = createOutboundHttp({ allowCidrs: ['127.0.0.0/8'], userAgent: 'Herald/bench' });

let failed = 0;
async function run(from: number, count: number): Promise<void> {
  let next = from;
  const end = from + count;
  const worker = async () => {
    while (next < end) {
      const i = next++;
      // A mattermost message of the size the relay bench's template renders (~300 bytes).
      const json = {
        text:
          `**GitHub bench**: 1 new commit pushed to \`main\` of bench/repo by octocat\n- benchid${i}x update the ` +
          'README with the release notes of this week (abcdef1)',
      };
      // As the chat-webhook target calls it under the dispatcher's per-send signal.
      const ac = new AbortController();
      const timer = setTimeout(() => ac.abort(), 30_000);
      try {
        const res = await http.request(url!, {
          method: 'POST',
          json,
          signal: ac.signal,
          maxRedirects: 0,
          maxResponseBytes: 64 * 1024,
          headers: { 'idempotency-key': `bench-${i}` },
        });
        if (res.status >= 300) failed++;
      } catch {
        failed++;
      } finally {
        clearTimeout(timer);
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

await run(0, warm);
const cpu0 = process.cpuUsage();
await run(warm, n);
const cpu = process.cpuUsage(cpu0);
process.stdout.write(`${JSON.stringify({ n, failed, cpuUsPerRequest: (cpu.user + cpu.system) / n })}\n`);
process.exit(0);
