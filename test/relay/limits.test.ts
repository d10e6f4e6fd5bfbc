/**
 * The core enforces what a target's manifest declares: `maxMessageLength` / `maxTitleLength`
 * (truncate, or split into ordered parts each sent once) and `ratePerSecond` (durable pacing,
 * nothing lost). Driven through the real service: example provider webhook → test-only targets
 * loaded by directory path → a loopback sink.
 */
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import {
  EXAMPLE_HOOK_HEADERS,
  exampleChain,
  startService,
  TEST_PLUGINS,
  type TestService,
} from '../helpers/service.ts';
import { settled } from '../helpers/settle.ts';

const fixtures = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/limits');
const PLUGINS = [TEST_PLUGINS, ...['short', 'split', 'paced'].map((n) => path.join(fixtures, n))].join(',');
const hookHeaders = EXAMPLE_HOOK_HEADERS;

interface Arrival {
  body: any;
  at: number;
  status: number;
}

/** A sink that records every request (with the status it answered) and can fail chosen requests. */
async function sink(fail: (n: number) => number | undefined = () => undefined) {
  const all: Arrival[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const status = fail(all.length + 1) ?? 200;
      all.push({ body: JSON.parse(Buffer.concat(chunks).toString('utf8')), at: Date.now(), status });
      res.writeHead(status, { 'content-type': 'text/plain' });
      res.end('ok');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}/`,
    all,
    ok: () => all.filter((a) => a.status < 300),
    async waitOk(n: number, ms: number) {
      const end = Date.now() + ms;
      while (all.filter((a) => a.status < 300).length < n && Date.now() < end)
        await new Promise((r) => setTimeout(r, 25));
      return all.filter((a) => a.status < 300);
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

async function chain(s: TestService, kind: string, sinkUrl: string, locale = 'en') {
  const { target, hook } = await exampleChain(s, { kind, name: 'Limited', config: { url: sinkUrl }, locale });
  const send = async (name: string) => {
    const r = await s.request('POST', hook, {
      headers: hookHeaders,
      body: { type: 'thing_happened', payload: { name }, note: 'n' },
    });
    if (r.status !== 202) throw new Error(`webhook: ${r.status} ${r.text}`);
    return r.body.event_ids[0] as string;
  };
  return { target, send };
}

/** Most timestamps in any window of `width` ms. */
function maxInWindow(times: number[], width: number): number {
  const ts = [...times].sort((a, b) => a - b);
  let best = 0;
  for (let i = 0, j = 0; i < ts.length; i++) {
    while (ts[i]! - ts[j]! >= width) j++;
    best = Math.max(best, i - j + 1);
  }
  return best;
}

t.test(
  'a target declaring maxMessageLength 100 never receives a longer body; titles are cut at maxTitleLength',
  async (t) => {
    const s = await startService({ SERVICE_PLUGINS: PLUGINS });
    const k = await sink();
    t.teardown(async () => {
      await s.stop();
      await k.close();
    });
    const c = await chain(s, 'limits_short', k.url);
    const ids = [await c.send('front door '.repeat(30)), await c.send('short')];
    await k.waitOk(2, 10_000);
    // Settled: both deliveries recorded as sent, so a late extra message would be counted here.
    t.same(
      (await settled(s, ids)).map((d) => d.status),
      ['sent', 'sent'],
    );
    const got = k.ok();
    t.equal(got.length, 2, 'one message per event');
    const [long, short] = got.map((a) => a.body);
    t.ok(long.body.length <= 100, `body ${long.body.length} <= 100`);
    t.ok(long.body.endsWith('…'), 'a truncated body ends with an ellipsis');
    t.match(long.body, /^front door front door/);
    t.ok(long.plainBody.length <= 100, 'the plain alternative is cut too');
    t.ok(long.title.length <= 20 && long.title.endsWith('…'), `title ${JSON.stringify(long.title)} cut to 20`);
    t.equal(long.part, undefined, 'truncation sends one message');
    t.equal(short.body, 'short happened (n)', 'a body that fits is left alone');
  },
);

t.test(
  'split: parts of at most 100 go out in order, marked, and a retry does not resend an accepted part',
  async (t) => {
    const s = await startService({ SERVICE_PLUGINS: PLUGINS });
    // The channel refuses the second request (part 2) once; the retry must start from part 2.
    const k = await sink((n) => (n === 2 ? 503 : undefined));
    t.teardown(async () => {
      await s.stop();
      await k.close();
    });
    const c = await chain(s, 'limits_split', k.url, 'ru');
    const name = Array.from({ length: 40 }, (_, i) => `слово${i}`).join(' ');
    const eventId = await c.send(name);
    // Enough for one backoff (2 s at most after a first failure).
    let got: Arrival[] = [];
    for (let i = 0; i < 300; i++) {
      got = k.ok();
      if (got.length && got.length === got[0]!.body.part?.count) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    // Settled: the delivery is recorded as sent, so no part can still be on its way (a late duplicate would be counted
    // below).
    t.same(
      (await settled(s, [eventId])).map((d) => d.status),
      ['sent'],
    );
    got = k.ok();
    const count = got[0]!.body.part.count as number;
    t.ok(count >= 4, `${count} parts`);
    t.equal(got.length, count, 'every part delivered once');
    got.forEach((a, i) => {
      t.ok(a.body.body.length <= 100, `part ${i + 1}: ${a.body.body.length} <= 100`);
      t.same(a.body.part, { index: i + 1, count }, 'in order');
      t.ok(a.body.body.endsWith(`(часть ${i + 1} из ${count})`), 'marked in the target locale');
    });
    t.equal(new Set(got.map((a) => a.body.deliveryId)).size, count, 'each part has its own idempotency key');
    t.equal(k.all.filter((a) => a.body.part?.index === 1).length, 1, 'part 1 was sent once, not again on the retry');
    t.equal(k.all.filter((a) => a.body.part?.index === 2).length, 2, 'part 2 was refused once, then sent again');
    const words = got
      .map((a) => a.body.body.replace(/\n\n\(часть \d+ из \d+\)$/, ''))
      .join(' ')
      .split(/\s+/)
      .filter((w: string) => w.startsWith('слово'));
    t.same(words, name.split(' '), 'nothing lost or repeated across the parts');
    const d = await s.service.core.db.get('SELECT status, attempts, parts_sent FROM deliveries WHERE event_id = ?', [
      eventId,
    ]);
    t.match(d, { status: 'sent' });
    t.equal(Number(d!.attempts), 2);
    t.equal(Number(d!.parts_sent), count - 1, 'the row records the parts the channel accepted');
  },
);

t.test('ratePerSecond 2: a burst is paced to at most 2 a second, delivered exactly once, in order', async (t) => {
  // Watches the in-process dispatcher's give-backs (the dispatch thread runs the same Dispatcher).
  const s = await startService({ SERVICE_PLUGINS: PLUGINS, SERVICE_DISPATCH_THREAD: 'false' });
  const k = await sink();
  t.teardown(async () => {
    await s.stop();
    await k.close();
  });
  const c = await chain(s, 'limits_paced', k.url);
  const dispatcher = (s.service.core.services.get('relay') as any).dispatcher;
  let queued = 0;
  const giveBack = dispatcher.giveBack.bind(dispatcher);
  dispatcher.giveBack = (ids: string[], until: number) => {
    queued += ids.length;
    giveBack(ids, until);
  };
  // 12: more than the lane holds ahead (5 s of pace), so some rows wait in the queue and come back.
  const N = 12;
  const ids: string[] = [];
  for (let i = 0; i < N; i++) ids.push(await c.send(`burst-${i}`));
  const got = await k.waitOk(N, 30_000);
  t.equal(got.length, N, 'all delivered');
  // Settled: every delivery recorded as sent (after the sink answered it), nothing in flight.
  t.ok(
    (await settled(s, ids)).every((d) => d.status === 'sent'),
    'every delivery recorded as sent',
  );
  t.equal(k.all.length, N, 'none twice');
  t.same(
    got.map((a) => a.body.eventId),
    ids,
    'in event order',
  );
  const sent = got.map((a) => a.body.sentAt as number);
  // At the sender: sends start at least 1/2 s (+5 % margin) apart, so no 1-second window holds 3.
  t.ok(maxInWindow(sent, 1000) <= 2, `at most 2 sends in any second (got ${maxInWindow(sent, 1000)})`);
  // At the sink: arrivals can bunch by loopback and event-loop jitter; three in any 900 ms would need
  // 150 ms of jitter against a 1050 ms nominal spread. The window is shortened by that slack on purpose.
  t.ok(
    maxInWindow(
      got.map((a) => a.at),
      900,
    ) <= 2,
    'at most 2 arrivals in any 900 ms',
  );
  const span = sent[N - 1]! - sent[0]!;
  t.ok(span >= (N - 1) * 500, `spread over ${span} ms >= ${(N - 1) * 500}`);
  t.ok(queued > 0, `${queued} waiting rows went back to the durable queue instead of memory`);
  t.comment(
    `sends over ${span} ms; most in any 1 s at the sender ${maxInWindow(sent, 1000)}, at the sink ${maxInWindow(
      got.map((a) => a.at),
      1000,
    )}`,
  );
  const rows = await s.service.core.db.all('SELECT status, attempts FROM deliveries WHERE target_id = ?', [
    c.target.id,
  ]);
  t.equal(rows.length, N);
  t.ok(
    rows.every((r) => r.status === 'sent' && Number(r.attempts) === 1),
    'each sent on its one counted attempt',
  );
});

t.test(
  'the pace is kept in the database: a reserved slot holds back the next send (as after a restart or on another ' +
    'replica)',
  async (t) => {
    const s = await startService({ SERVICE_PLUGINS: PLUGINS });
    const k = await sink();
    t.teardown(async () => {
      await s.stop();
      await k.close();
    });
    const c = await chain(s, 'limits_paced', k.url);
    // As a previous run or another replica would have left it: the next slot is 2 s away.
    const tat = Date.now() + 2000;
    await s.service.core.db.run('INSERT INTO target_pacing (target_id, tat) VALUES (?, ?)', [c.target.id, tat]);
    const eventId = await c.send('after the reserved slot');
    await k.waitOk(1, 10_000);
    t.same(
      (await settled(s, [eventId])).map((d) => d.status),
      ['sent'],
    );
    const [a, ...more] = k.ok();
    t.ok(a, 'delivered');
    t.equal(more.length, 0, 'once');
    const interval = Math.ceil(500 * 1.05);
    t.ok(a!.body.sentAt >= tat - interval, `sent at ${a!.body.sentAt - (tat - interval)} ms after its slot opened`);
    const row = await s.service.core.db.get('SELECT tat FROM target_pacing WHERE target_id = ?', [c.target.id]);
    t.equal(Number(row!.tat), tat + interval, 'the send booked the slot after it');
  },
);
