/**
 * Debian's `prometheus` server, a real process on loopback, scrapes the service's `/api/metrics`
 * every second. Its own HTTP API must then say the target is up (no scrape error: the exposition
 * parses) and return Herald's metrics, a counter bumped by an event among them.
 */

import { writeFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { ensureBinary, freePort, getJson, scratch, startPeer, waitFor } from '../helpers/peers.ts';
import { startService, TEST_PLUGINS } from '../helpers/service.ts';
import { chain, create } from './support.ts';

t.test('prometheus scrapes /api/metrics: the target is up and Herald metrics are queryable', async (t) => {
  const bin = ensureBinary('/usr/bin/prometheus');
  const s = await startService({ SERVICE_PLUGINS: TEST_PLUGINS });
  const tmp = scratch('prometheus');
  let prom: ReturnType<typeof startPeer> | undefined;
  t.teardown(async () => {
    await prom?.stop();
    tmp.cleanup();
    await s.stop();
  });

  const herald = new URL(s.url).host;
  const file = path.join(tmp.dir, 'prometheus.yml');
  writeFileSync(
    file,
    [
      'global:',
      '  scrape_interval: 1s',
      '  scrape_timeout: 1s',
      'scrape_configs:',
      '  - job_name: herald',
      '    metrics_path: /api/metrics',
      '    static_configs:',
      `      - targets: ['${herald}']`,
      '',
    ].join('\n'),
  );
  const port = await freePort();
  const api = `http://127.0.0.1:${port}/api/v1`;
  prom = startPeer(bin, [
    `--config.file=${file}`,
    `--storage.tsdb.path=${path.join(tmp.dir, 'data')}`,
    `--web.listen-address=127.0.0.1:${port}`,
    '--log.level=warn',
  ]);
  // Prometheus applies its targets a few seconds after it starts; meanwhile, one event, so
  // service_event_log_total has a series to find.
  const target = await create(s, '/api/targets', {
    kind: 'recorder',
    name: 'Rec',
    config: { url: 'http://127.0.0.1:9/' },
    locale: 'en',
  });
  const { hook } = await chain(s, {
    provider: { kind: 'example', name: 'Example', config: { shared_token: 'sharedtoken1' } },
    target,
  });
  const fired = await s.request('POST', hook, {
    headers: { 'x-example-token': 'sharedtoken1' },
    body: { type: 'thing_happened', payload: { name: 'door' } },
  });
  t.equal(fired.status, 202, fired.text);

  const query = async (q: string) =>
    (await getJson(`${api}/query?query=${encodeURIComponent(q)}`))?.data?.result as
      | { metric: Record<string, string>; value: [number, string] }[]
      | undefined;

  const up = await waitFor(
    'prometheus to report the target up',
    async () => {
      const r = await query('up{job="herald"}');
      return r?.length && r[0]!.value[1] === '1' ? r : undefined;
    },
    20_000,
    prom,
  );
  t.equal(up[0]!.metric.instance, herald, 'the scraped instance is the service');

  const targets = await getJson(`${api}/targets`);
  const active = targets.data.activeTargets.find((x: any) => x.labels.job === 'herald');
  t.equal(active.health, 'up');
  t.equal(active.lastError, '', 'the scrape parsed without error');

  const events = await waitFor(
    'service_event_log_total in prometheus',
    async () => {
      const r = await query('service_event_log_total{job="herald",event_type="thing_happened"}');
      return r?.length ? r : undefined;
    },
    10_000,
    prom,
  );
  t.equal(Number(events[0]!.value[1]), 1, 'the event counter as Herald counted it');
  const pending = await query('service_deferred_pending{job="herald"}');
  t.equal(pending?.length, 1, 'a Herald gauge too');
  const names = (await getJson(`${api}/label/__name__/values`))?.data as string[];
  t.ok(
    names.includes('service_dispatch_duration_seconds_bucket') || names.includes('process_cpu_seconds_total'),
    'the default and histogram series are stored',
  );
});
