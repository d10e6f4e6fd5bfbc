/**
 * The author's test host from `@herald/plugin-api/testing`: events returned from handleWebhook are
 * checked like emitted ones, and its own outbound client (no core code) speaks the contract's codes.
 */

import http from 'node:http';
import {
  defineProvider,
  OUTBOUND_NETWORK,
  OUTBOUND_REDIRECTS,
  OUTBOUND_REFUSED,
  OUTBOUND_TOO_LARGE,
  OutboundError,
  Type,
} from '@herald/plugin-api';
import { createTestHost, createTestHttp } from '@herald/plugin-api/testing';
import t from 'tap';

const returning = (events: unknown[]) =>
  defineProvider({
    manifest: {
      id: 'returns',
      kind: 'provider',
      apiVersion: 1,
      displayName: 'Returns',
      ingest: 'webhook',
      configSchema: Type.Object({}),
      events: { seen: { payload: Type.Object({ n: Type.Number() }), quietHours: 'send', severity: 'info' } },
    },
    create: () => ({
      async handleWebhook() {
        return { events: events as never };
      },
    }),
  });
const req = { method: 'POST', headers: {}, rawBody: Buffer.from('{}'), body: {}, query: {}, ip: '127.0.0.1' };

t.test('events returned from handleWebhook are validated against the declared types and payloads', async (t) => {
  const host = createTestHost();
  const ok = await host.provider(returning([{ type: 'seen', payload: { n: 1 } }]), {});
  t.same((await ok.instance.handleWebhook!(req)).events, [{ type: 'seen', payload: { n: 1 } }], 'a valid event passes');
  const undeclared = await host.provider(returning([{ type: 'unseen', payload: {} }]), {});
  await t.rejects(undeclared.instance.handleWebhook!(req), { message: 'event type unseen is not declared by returns' });
  const invalid = await host.provider(returning([{ type: 'seen', payload: { n: 'one' } }]), {});
  await t.rejects(invalid.instance.handleWebhook!(req), { message: /^payload of seen is invalid: \/n / });
});

t.test(
  "the test host's outbound client: requests, redirects, size cap, refusals, with the contract's codes",
  async (t) => {
    const server = http.createServer((rq, rs) => {
      if (rq.url === '/hop') {
        rs.writeHead(302, { location: '/json' });
        rs.end();
        return;
      }
      if (rq.url === '/loop') {
        rs.writeHead(302, { location: '/loop' });
        rs.end();
        return;
      }
      if (rq.url === '/big') {
        rs.end('x'.repeat(5000));
        return;
      }
      let body = '';
      rq.on('data', (c) => {
        body += c;
      });
      rq.on('end', () => {
        rs.writeHead(200, { 'content-type': 'application/json', 'x-seen': rq.method ?? '' });
        rs.end(JSON.stringify({ method: rq.method, body }));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    t.teardown(() => new Promise<void>((r) => server.close(() => r())));
    const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    const h = createTestHttp();

    const r = await h.request(`${base}/json`, { json: { a: 1 } });
    t.equal(r.status, 200);
    t.same(r.json(), { method: 'POST', body: '{"a":1}' });
    t.equal(r.headers['x-seen'], 'POST', 'lower-case headers');
    const hop = await h.request(`${base}/hop`);
    t.equal(hop.url, `${base}/json`, 'redirect followed by hand');
    const code = async (p: Promise<unknown>) =>
      (
        (await p.then(
          () => undefined,
          (e: unknown) => e,
        )) as OutboundError | undefined
      )?.code;
    t.equal(await code(h.request(`${base}/loop`, { maxRedirects: 2 })), OUTBOUND_REDIRECTS);
    t.equal(await code(h.request(`${base}/big`, { maxResponseBytes: 1000 })), OUTBOUND_TOO_LARGE);
    t.equal(await code(h.request('ftp://example.test/x')), OUTBOUND_REFUSED);
    t.equal(await code(h.request('http://127.0.0.1:9/')), OUTBOUND_NETWORK);
    const refusing = createTestHttp({ refuse: (host) => host === '127.0.0.1' });
    const err = await refusing.request(`${base}/json`).catch((e: unknown) => e);
    t.type(err, OutboundError);
    t.equal((err as OutboundError).code, OUTBOUND_REFUSED);
    t.equal(await code(refusing.resolveAllowed('127.0.0.1')), OUTBOUND_REFUSED);
    t.same(await h.resolveAllowed('127.0.0.1'), { address: '127.0.0.1', family: 4 });
    t.equal(((await (await h.fetch(`${base}/json`)).json()) as { method: string }).method, 'GET', 'fetch works too');
  },
);

t.test("the test host keeps credentials on their origin exactly as the service's client does", async (t) => {
  const { createOutboundHttp } = await import('../../core/src/net/outbound.ts');
  const TOKEN = '4242:AAE-token_for_the_comparison_0123';
  const reached: { url: string; headers: http.IncomingHttpHeaders }[] = [];
  const second = http.createServer((rq, rs) => {
    reached.push({ url: rq.url ?? '', headers: rq.headers });
    rs.end('second');
  });
  await new Promise<void>((r) => second.listen(0, '127.0.0.1', r));
  const secondBase = `http://127.0.0.1:${(second.address() as { port: number }).port}`;
  const first = http.createServer((rq, rs) => {
    rs.writeHead(307, {
      location: rq.url === '/keep-path' ? `${secondBase}/bot${TOKEN}/x` : `${secondBase}/landing`,
    }).end();
  });
  await new Promise<void>((r) => first.listen(0, '127.0.0.1', r));
  const service = createOutboundHttp({ allowCidrs: ['127.0.0.1/32'] });
  t.teardown(async () => {
    await service.close();
    for (const s of [first, second]) {
      s.closeAllConnections();
      s.close();
    }
  });
  const firstBase = `http://127.0.0.1:${(first.address() as { port: number }).port}`;
  const binding = { headers: ['x-api-key'], secrets: [TOKEN] };
  const headers = { 'x-api-key': 'k', 'x-token': `t ${TOKEN}`, authorization: 'Bearer b', 'x-plain': 'p' };

  const outcome = async (h: { request: typeof service.request; fetch: typeof fetch }) => {
    reached.length = 0;
    await h.request(`${firstBase}/go`, { headers });
    await h.fetch(`${firstBase}/go`, { headers });
    const refused = await h.request(`${firstBase}/keep-path`).then(
      () => 'followed',
      (e: OutboundError) => e.code,
    );
    return {
      refused,
      reached: reached.map((r) => ({
        url: r.url,
        credentials: Object.keys(headers).filter((k) => r.headers[k] !== undefined),
      })),
    };
  };
  const inService = await outcome(service.bind(binding));
  const inTests = await outcome(createTestHttp().bind(binding));
  t.same(inService, {
    refused: OUTBOUND_REDIRECTS,
    reached: [
      { url: '/landing', credentials: ['x-plain'] },
      { url: '/landing', credentials: ['x-plain'] },
    ],
  });
  t.same(inTests, inService, 'the same headers reach the other origin, and the same redirect is refused');
});
