/**
 * The outbound half of the floor's baselines (baseline/outbound-client.ts, ingest-ceiling.ts --relay): one
 * chat-webhook message for bench id `i`, of the size the relay bench's template renders (~300 bytes), posted as the
 * chat-webhook target posts it through the service's outbound client, under a per-send signal like the dispatcher's.
 */
import type { createOutboundHttp } from '../../../core/src/net/outbound.ts';

/** Whether the sink took the message (a 2xx). */
export async function sendChatMessage(
  http: ReturnType<typeof createOutboundHttp>,
  url: string,
  i: number | string,
): Promise<boolean> {
  const json = {
    text:
      `**GitHub bench**: 1 new commit pushed to \`main\` of bench/repo by octocat\n- benchid${i}x update the ` +
      'README with the release notes of this week (abcdef1)',
  };
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(), 30_000);
  try {
    const res = await http.request(url, {
      method: 'POST',
      json,
      signal: ac.signal,
      maxRedirects: 0,
      maxResponseBytes: 64 * 1024,
      headers: { 'idempotency-key': `bench-${i}` },
    });
    return res.status < 300;
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}
