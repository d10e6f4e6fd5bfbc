/**
 * Baseline for bench:floor: the service's own outbound HTTP client (core/src/net/outbound.ts, the
 * one target plugins send through: SSRF checks, pinned address, timeouts, capped response) posting
 * a chat-webhook message per request to the loopback sink, `concurrency` at a time. Run as a child
 * process; prints one JSON line: requests, failures and its own CPU time per request (µs) over the
 * measured part (after `warm` requests). Args: <sink url> <n> <warm> <concurrency>.
 */
import { createOutboundHttp } from '../../../core/src/net/outbound.ts';
import { sendChatMessage } from '../lib/chat-send.ts';

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
      if (!(await sendChatMessage(http, url!, i))) failed++;
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
