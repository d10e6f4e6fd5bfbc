/**
 * Posts in flight per webhook: the core may start the manifest's 16 sends to one target at once,
 * but the instance posts only as many as the service takes (Slack 1, Discord 5, Mattermost 16);
 * the rest wait, unposted, in the order they were started. A send stopped while it waits posts
 * nothing. So a process killed mid-burst has at most these many posts it may repeat.
 */

import { RetryableSendError } from '@herald/plugin-api';
import { createTestHost } from '@herald/plugin-api/testing';
import t from 'tap';
import type { SinkFormat } from '../test/fakes/chat-webhook-sink.ts';
import { ChatWebhookSink } from '../test/fakes/chat-webhook-sink.ts';
import plugin, { IN_FLIGHT, MANIFEST_CONCURRENCY } from './index.ts';

/** Polls until `fn` is true (requests arrive over loopback asynchronously), bounded. */
async function until(fn: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 1000 && !fn(); i++) await new Promise((r) => setTimeout(r, 5));
  if (!fn()) throw new Error(`timed out waiting for ${what}`);
}

async function setup(tt: { teardown(fn: () => unknown): void }, format: SinkFormat) {
  const sink = await new ChatWebhookSink().start();
  tt.teardown(() => sink.close());
  const host = createTestHost();
  const harness = await host.target(plugin, { format, url: sink.url(format) });
  return { sink, harness };
}

t.test('the manifest allows 16 at once; each service takes its own number', async (tt) => {
  tt.equal(plugin.manifest.limits?.concurrency, MANIFEST_CONCURRENCY);
  tt.equal(MANIFEST_CONCURRENCY, 16);
  tt.same(IN_FLIGHT, { slack: 1, discord: 5, mattermost: 16 });
});

for (const format of ['slack', 'discord', 'mattermost'] as const) {
  t.test(
    `${format}: 16 sends started at once post ${IN_FLIGHT[format]} at a time, in the order started`,
    async (tt) => {
      const { sink, harness } = await setup(tt, format);
      sink.hold = true;
      const sends = Array.from({ length: MANIFEST_CONCURRENCY }, (_, i) =>
        harness.instance.send(harness.message({ deliveryId: `d${i}`, plainTitle: `Event ${i}`, title: `Event ${i}` }), {
          signal: harness.abort.signal,
          attempt: 1,
        }),
      );
      const limit = IN_FLIGHT[format];
      for (let answered = 0; answered < MANIFEST_CONCURRENCY; ) {
        const expected = Math.min(limit, MANIFEST_CONCURRENCY - answered);
        await until(() => sink.held === expected, `${expected} held posts`);
        tt.equal(sink.received.length, answered + expected, `${answered + expected} posted after ${answered} answered`);
        answered += sink.release(1);
      }
      await Promise.all(sends);
      tt.equal(sink.peakHeld, limit, `never more than ${limit} in flight`);
      tt.same(
        sink.received.map((r) => r.idempotencyKey),
        Array.from({ length: MANIFEST_CONCURRENCY }, (_, i) => `d${i}`),
        'posted in the order the sends were started',
      );
    },
  );
}

t.test('a send stopped while it waits for its turn posts nothing and can be retried', async (tt) => {
  const { sink, harness } = await setup(tt, 'slack');
  sink.hold = true;
  const send = (id: string, signal: AbortSignal) =>
    harness.instance.send(harness.message({ deliveryId: id }), { signal, attempt: 1 });
  const first = send('first', harness.abort.signal);
  const stop = new AbortController();
  const waiting = send('waiting', stop.signal);
  const third = send('third', harness.abort.signal);
  await until(() => sink.held === 1, 'the first post');
  stop.abort(new Error('the send took longer than 30 s'));
  const err = await waiting.then(
    () => undefined,
    (e: unknown) => e,
  );
  tt.ok(err instanceof RetryableSendError, 'retryable');
  tt.match(
    (err as Error).message,
    new RegExp(
      /^Slack webhook: the send was stopped \(the send took longer than 30 s\) /.source +
        /while it waited for an earlier post to this webhook to finish; nothing was posted\.$/.source,
    ),
  );
  sink.release();
  await first;
  await until(() => sink.held === 1, 'the third post');
  sink.release();
  await third;
  tt.same(
    sink.received.map((r) => r.idempotencyKey),
    ['first', 'third'],
    'the stopped send never reached the service',
  );
});
