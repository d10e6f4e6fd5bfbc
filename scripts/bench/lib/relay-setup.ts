/** The relay chain the benchmarks drive: code host provider → tracker → chat-webhook target (mattermost) → sink. */

import { BENCH_SECRET, delivery } from './codehost.ts';
import { Api, freePort, type Herald, type HeraldOptions, heraldOptions, spawnHerald, tempDir } from './herald.ts';
import type { LoadResult, Req } from './load.ts';
import type { Sink } from './sink.ts';
import { type Dist, dist } from './stats.ts';

export const RELAY_PLUGINS = '@herald/provider-bridge-self,@herald/provider-codehost,@herald/target-chat-webhook';

export interface Chain {
  herald: Herald;
  api: Api;
  hookUrl: string;
  opts: HeraldOptions;
  targetId: string;
}

/** Starts a fresh service and configures the chain through the API. */
export async function startChain(
  sinkUrl: string,
  env: Record<string, string> = {},
  entry: HeraldOptions['entry'] = 'source',
): Promise<Chain> {
  const opts = heraldOptions(tempDir('relay'), await freePort(), RELAY_PLUGINS, env, entry);
  const herald = spawnHerald(opts);
  await herald.ready();
  const api = new Api(herald.url);
  await api.setup();
  const p = await api.ok('POST', '/api/providers', {
    kind: 'codehost',
    name: 'GitHub bench',
    config: { host: 'github', webhook_secret: BENCH_SECRET },
  });
  const tr = await api.ok('POST', '/api/trackers', { provider_id: p.id, name: 'All pushes' });
  const tg = await api.ok('POST', '/api/targets', {
    kind: 'chat_webhook',
    name: 'Mattermost sink',
    config: { format: 'mattermost', url: sinkUrl },
    locale: 'en',
  });
  await api.ok('PUT', `/api/trackers/${tr.id}/targets/${tg.id}`);
  return { herald, api, hookUrl: `${herald.url}${new URL(p.webhook_url).pathname}`, opts, targetId: tg.id };
}

/** Signed deliveries for ids [from, from + n). */
export function deliveries(from: number, n: number): Req[] {
  return Array.from({ length: n }, (_, i) => delivery(from + i));
}

export interface Outcome {
  sent: number;
  accepted: number;
  rejected: number;
  delivered: number;
  lost: number;
  duplicates: number;
  /** Delivered events per second: ids delivered / (last arrival − first send). */
  rate: number;
  latency: Dist;
  lastArrival: number;
}

/** Matches what the load generator sent (ids from `from`) with what the sink saw. */
export function outcome(load: LoadResult, sink: Sink, from: number): Outcome {
  let accepted = 0;
  let rejected = 0;
  let delivered = 0;
  let lost = 0;
  let duplicates = 0;
  let last = 0;
  const lat: number[] = [];
  for (let i = 0; i < load.status.length; i++) {
    const id = from + i;
    const ok = load.status[i]! >= 200 && load.status[i]! < 300;
    if (load.sentAt[i]) {
      if (ok) accepted++;
      else rejected++;
    }
    const c = sink.count[id]!;
    if (c > 0) {
      delivered++;
      if (c > 1) duplicates += c - 1;
      last = Math.max(last, sink.at[id]!);
      lat.push(sink.at[id]! - load.sentAt[i]!);
    } else if (ok) lost++;
  }
  return {
    sent: load.status.length,
    accepted,
    rejected,
    delivered,
    lost,
    duplicates,
    rate: delivered / ((last - load.started) / 1000),
    latency: dist(lat),
    lastArrival: last,
  };
}
