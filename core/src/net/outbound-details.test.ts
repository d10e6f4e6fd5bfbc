/**
 * The outbound client's details beyond core/src/net/outbound.test.ts: the headers it sends, its
 * default limits and the ones a caller sets, DNS failures, the system resolver, an instance's own
 * allow list (host names and ranges, connection pools kept apart), redirect methods and modes, and
 * what `fetch` and `request` give back. Loopback servers only.
 */

import dns from 'node:dns';
import { getEventListeners } from 'node:events';
import http from 'node:http';
import net from 'node:net';
import tls from 'node:tls';
import zlib from 'node:zlib';
import type { Test } from 'tap';
import t from 'tap';
import type { Resolver } from './outbound.ts';
import { bindCredentials, createOutboundHttp, type OutboundError } from './outbound.ts';

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  /** Header names as sent, lower-cased, repeats kept. */
  names: string[];
  body: string;
}

/** A loopback server; `handler` answers, every request is recorded; `sockets` counts the connections opened. */
async function server(tt: Test, handler: (req: http.IncomingMessage, res: http.ServerResponse) => void) {
  const seen: Seen[] = [];
  const stats = { sockets: 0, closed: 0 };
  const srv = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => {
      seen.push({
        method: req.method!,
        url: req.url!,
        headers: req.headers,
        names: req.rawHeaders.filter((_, i) => i % 2 === 0).map((n) => n.toLowerCase()),
        body,
      });
      handler(req, res);
    });
  });
  srv.on('connection', (socket) => {
    stats.sockets++;
    socket.on('close', () => {
      stats.closed++;
    });
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  tt.teardown(() => {
    srv.closeAllConnections();
    srv.close();
  });
  const port = (srv.address() as { port: number }).port;
  return { port, base: `http://127.0.0.1:${port}`, seen, stats };
}

function client(tt: Test, opts: Parameters<typeof createOutboundHttp>[0]) {
  const h = createOutboundHttp(opts);
  tt.teardown(() => h.close());
  return h;
}

/** A resolver that answers every name with `address` and records the names it was asked. */
function fixed(address: string): Resolver & { calls: string[] } {
  const calls: string[] = [];
  const fn = async (host: string) => {
    calls.push(host);
    return [{ address, family: address.includes(':') ? (6 as const) : (4 as const) }];
  };
  return Object.assign(fn, { calls });
}

const codeOf = (err: unknown) => (err as OutboundError).code;

t.test('the headers sent: user agent, identity encoding, JSON content type, method', async (tt) => {
  const { base, seen } = await server(tt, (req, res) => {
    res.setHeader('set-cookie', ['a=1', 'b=2']);
    res.setHeader('x-multi', 'one');
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ path: req.url }));
  });
  const h = client(tt, { allowCidrs: ['127.0.0.1/32'] });
  const r = await h.request(`${base}/plain`, { headers: { 'Accept-Encoding': 'gzip, br' } });
  tt.equal(r.status, 200);
  tt.same(r.json(), { path: '/plain' }, 'json() parses the body');
  tt.equal(r.headers['set-cookie'], 'a=1, b=2', 'a repeated response header is joined');
  tt.equal(r.headers['x-multi'], 'one');
  tt.equal(r.url, `${base}/plain`);
  let got = seen.at(-1)!;
  tt.equal(got.method, 'GET', 'GET without a body');
  tt.equal(got.headers['user-agent'], 'Herald/0.1', 'the default user agent');
  tt.equal(got.headers['accept-encoding'], 'identity', "identity replaces the caller's encodings");

  await h.request(`${base}/ua`, { headers: { 'User-Agent': 'Mine/2' } });
  tt.equal(seen.at(-1)!.headers['user-agent'], 'Mine/2', "the caller's own user agent, any case, is kept");
  const count = (name: string) => seen.at(-1)!.names.filter((n) => n === name).length;
  tt.equal(count('user-agent'), 1, 'and no second one added');

  await h.request(`${base}/json`, { json: { a: 1 } });
  got = seen.at(-1)!;
  tt.same(
    [got.method, got.body, got.headers['content-type']],
    ['POST', '{"a":1}', 'application/json'],
    'POST with a body',
  );
  await h.request(`${base}/json`, { method: 'put', json: [1], headers: { 'Content-Type': 'application/vnd.x+json' } });
  got = seen.at(-1)!;
  tt.same(
    [got.method, got.body, got.headers['content-type']],
    ['PUT', '[1]', 'application/vnd.x+json'],
    "the method upper-cased; the caller's content type, any case, kept",
  );
  tt.equal(count('content-type'), 1, 'and no second one added');
  await h.request(`${base}/body`, { body: 'raw' });
  tt.same([seen.at(-1)!.method, seen.at(-1)!.body], ['POST', 'raw']);

  const named = client(tt, { allowCidrs: ['127.0.0.1/32'], userAgent: 'Custom/1' });
  await named.request(`${base}/custom`);
  tt.equal(seen.at(-1)!.headers['user-agent'], 'Custom/1', 'the configured user agent');
  await named.fetch(`${base}/custom`, { headers: { 'accept-encoding': 'gzip' } });
  tt.equal(seen.at(-1)!.headers['user-agent'], 'Custom/1', 'fetch sends it too');
  tt.equal(seen.at(-1)!.headers['accept-encoding'], 'identity');
});

t.test('limits: the defaults, the ones the client is built with, and the per-request ones', async (tt) => {
  const { base, seen } = await server(tt, (req, res) => {
    const m = /^\/loop\/(\d+)$/.exec(req.url!);
    if (m) return res.writeHead(302, { location: Number(m[1]) > 0 ? `/loop/${Number(m[1]) - 1}` : '/end' }).end();
    const size = /^\/bytes\/(\d+)$/.exec(req.url!);
    if (size) return res.end(Buffer.alloc(Number(size[1]), 120));
    if (req.url === '/silent') return;
    res.end('end');
  });
  const plain = client(tt, { allowCidrs: ['127.0.0.1/32'] });
  // Five redirects are followed by default, a sixth is refused.
  tt.equal((await plain.request(`${base}/loop/4`)).text(), 'end', 'five redirects');
  let err = await plain.request(`${base}/loop/5`).catch((e) => e);
  tt.equal(codeOf(err), 'OUTBOUND_REDIRECTS', 'six redirects');
  tt.equal(err.message, `too many redirects (limit 5) starting at 127.0.0.1:${base.split(':')[2]}`);
  const mib4 = 4 * 1024 * 1024;
  tt.equal((await plain.request(`${base}/bytes/${mib4}`)).body.length, mib4, '4 MiB by default');
  err = await plain.request(`${base}/bytes/${mib4 + 1}`).catch((e) => e);
  tt.equal(codeOf(err), 'OUTBOUND_TOO_LARGE', 'one byte more');
  tt.match(err.message, new RegExp(`^response from 127\\.0\\.0\\.1:\\d+ exceeds ${mib4} bytes$`));

  const tight = client(tt, {
    allowCidrs: ['127.0.0.1/32'],
    defaults: { maxRedirects: 1, maxResponseBytes: 10, timeoutMs: 300, connectTimeoutMs: 150 },
  });
  tt.equal((await tight.request(`${base}/loop/0`)).text(), 'end', 'one redirect');
  err = await tight.request(`${base}/loop/1`).catch((e) => e);
  tt.equal(codeOf(err), 'OUTBOUND_REDIRECTS', 'two redirects with maxRedirects 1');
  tt.match(err.message, /limit 1/);
  tt.equal((await tight.request(`${base}/bytes/10`)).body.length, 10);
  tt.equal(codeOf(await tight.request(`${base}/bytes/11`).catch((e) => e)), 'OUTBOUND_TOO_LARGE');
  tt.equal((await tight.request(`${base}/bytes/11`, { maxResponseBytes: 11 })).body.length, 11, 'per request');
  tt.equal((await tight.request(`${base}/loop/1`, { maxRedirects: 2 })).text(), 'end');
  let started = Date.now();
  err = await tight.request(`${base}/silent`).catch((e) => e);
  tt.equal(codeOf(err), 'OUTBOUND_TIMEOUT');
  tt.equal(err.message, `request to 127.0.0.1:${base.split(':')[2]} timed out after 300 ms`);
  tt.ok(Date.now() - started < 5000);
  const slowDns = client(tt, {
    allowCidrs: [],
    resolver: () => new Promise(() => {}),
    defaults: { connectTimeoutMs: 150 },
  });
  started = Date.now();
  err = await slowDns.request('http://slow-dns.test/').catch((e) => e);
  tt.equal(codeOf(err), 'OUTBOUND_TIMEOUT', "the client's connect timeout covers resolution");
  tt.equal(err.message, 'resolving slow-dns.test timed out after 150 ms');
  tt.ok(Date.now() - started < 5000);
  err = await slowDns.resolveAllowed('slow-dns.test').catch((e) => e);
  tt.equal(err.message, 'resolving slow-dns.test timed out after 150 ms', 'resolveAllowed uses it too');
  tt.ok(seen.length > 0);
});

t.test('DNS failures and IP literals', async (tt) => {
  const failing = createOutboundHttp({
    allowCidrs: [],
    resolver: async (host) => {
      if (host === 'coded.test') throw Object.assign(new Error('lookup failed'), { code: 'ENOTFOUND' });
      if (host === 'empty.test') return [];
      throw new Error('no such name');
    },
  });
  let err = await failing.resolveAllowed('coded.test').catch((e) => e);
  tt.equal(codeOf(err), 'OUTBOUND_DNS');
  tt.equal(err.message, 'cannot resolve coded.test: ENOTFOUND', 'the resolver error code');
  tt.equal(err.cause.code, 'ENOTFOUND');
  err = await failing.resolveAllowed('plain.test').catch((e) => e);
  tt.equal(err.message, 'cannot resolve plain.test: no such name', 'or its message');
  err = await failing.resolveAllowed('empty.test').catch((e) => e);
  tt.equal(codeOf(err), 'OUTBOUND_DNS');
  tt.equal(err.message, 'empty.test has no address');
  err = await failing.request('http://empty.test/').catch((e) => e);
  tt.equal(codeOf(err), 'OUTBOUND_DNS', 'a request fails the same way');

  const resolver = fixed('8.8.8.8');
  const h = createOutboundHttp({ allowCidrs: ['127.0.0.1/32'], resolver });
  tt.same(await h.resolveAllowed('[::ffff:127.0.0.1]'), { address: '127.0.0.1', family: 4 }, 'a bracketed literal');
  tt.same(await h.resolveAllowed('2606:4700:4700::1111'), { address: '2606:4700:4700::1111', family: 6 });
  tt.same(await h.resolveAllowed('1.1.1.1'), { address: '1.1.1.1', family: 4 });
  tt.same(resolver.calls, [], 'literals are not resolved');
  tt.same(await h.resolveAllowed('[::1'), { address: '8.8.8.8', family: 4 }, 'half a bracket is a name');
  tt.same(await h.resolveAllowed('::1]'), { address: '8.8.8.8', family: 4 });
  tt.same(resolver.calls, ['[::1', '::1]']);
  err = await h.resolveAllowed('[10.0.0.1]').catch((e) => e);
  tt.equal(codeOf(err), 'OUTBOUND_REFUSED');
  tt.equal(
    err.message,
    'refused to connect to 10.0.0.1: 10.0.0.1 is a private address (allow it with an outbound CIDR allow-list ' +
      "entry, or an administrator's outbound allow list on this provider or target)",
  );
});

t.test('the system resolver, when none is given', async (tt) => {
  const open = createOutboundHttp({ allowCidrs: ['127.0.0.0/8', '::1/128'] });
  const got = await open.resolveAllowed('localhost');
  tt.ok(got.address === '127.0.0.1' || got.address === '::1', got.address);
  tt.equal(got.family, got.address.includes(':') ? 6 : 4, 'the family of the answer');
  const closed = createOutboundHttp({ allowCidrs: [] });
  tt.equal(codeOf(await closed.resolveAllowed('localhost').catch((e) => e)), 'OUTBOUND_REFUSED');
  tt.equal(
    codeOf(await closed.resolveAllowed('no-such-host.invalid').catch((e) => e)),
    'OUTBOUND_DNS',
    'a name that does not resolve',
  );
});

t.test("an instance's own allow list: its host names and ranges, for its view only", async (tt) => {
  const answers: Record<string, string> = {
    'nas.test': '10.0.0.5',
    'other.test': '10.0.0.6',
    'odd.test': 'not-an-address',
    '10.0.0.1': '10.0.0.1',
  };
  const resolver: Resolver = async (host) => [{ address: answers[host.toLowerCase()] ?? '93.184.216.34', family: 4 }];
  const root = client(tt, { allowCidrs: ['127.0.0.1/32'], resolver });
  const inst = root.bind({}, ['NAS.test.', '192.168.0.0/16', 'odd.test', '10.0.0.1.']);
  tt.same(await inst.resolveAllowed('nas.test'), { address: '10.0.0.5', family: 4 }, 'a listed name, any spelling');
  tt.same(await inst.resolveAllowed('NAS.TEST'), { address: '10.0.0.5', family: 4 });
  tt.same(await inst.resolveAllowed('192.168.3.4'), { address: '192.168.3.4', family: 4 }, 'a listed range');
  tt.same(await inst.resolveAllowed('127.0.0.1'), { address: '127.0.0.1', family: 4 }, 'the service-wide list too');
  tt.equal(codeOf(await inst.resolveAllowed('other.test').catch((e) => e)), 'OUTBOUND_REFUSED', 'an unlisted name');
  const odd = await inst.resolveAllowed('odd.test').catch((e) => e);
  tt.equal(codeOf(odd), 'OUTBOUND_REFUSED', 'a listed name must still resolve to an IP address');
  tt.match(odd.message, /not-an-address is not an IP address/);
  tt.equal(
    codeOf(await inst.resolveAllowed('10.0.0.1').catch((e) => e)),
    'OUTBOUND_REFUSED',
    'an IP literal is never taken for a listed name',
  );
  for (const h of [root, root.bind({}), root.bind({}, []), root.bind({}, null), root.bind({}, ['  '])]) {
    tt.equal(codeOf(await h.resolveAllowed('nas.test').catch((e) => e)), 'OUTBOUND_REFUSED', 'other views');
    tt.equal(codeOf(await h.resolveAllowed('192.168.3.4').catch((e) => e)), 'OUTBOUND_REFUSED');
    tt.same(await h.resolveAllowed('127.0.0.1'), { address: '127.0.0.1', family: 4 });
  }
  // Lists that differ only in their ranges, or only in their names, are different allowances.
  const lan = root.bind({}, ['192.168.0.0/16']);
  const dmz = root.bind({}, ['172.16.0.0/12']);
  tt.same(await lan.resolveAllowed('192.168.3.4'), { address: '192.168.3.4', family: 4 });
  tt.same(await dmz.resolveAllowed('172.16.0.1'), { address: '172.16.0.1', family: 4 });
  tt.equal(codeOf(await dmz.resolveAllowed('192.168.3.4').catch((e) => e)), 'OUTBOUND_REFUSED', 'not the first list');
  const nas = root.bind({}, ['192.168.0.0/16', 'nas.test']);
  const other = root.bind({}, ['192.168.0.0/16', 'other.test']);
  tt.same(await nas.resolveAllowed('nas.test'), { address: '10.0.0.5', family: 4 });
  tt.same(await other.resolveAllowed('other.test'), { address: '10.0.0.6', family: 4 });
  tt.equal(codeOf(await other.resolveAllowed('nas.test').catch((e) => e)), 'OUTBOUND_REFUSED', 'not the other names');
  // The same list in another order is the same allowance; a list with an entry that does not parse keeps its names.
  const again = root.bind({}, ['10.0.0.1.', '192.168.0.0/16', 'odd.test', 'nas.test']);
  tt.same(await again.resolveAllowed('192.168.3.4'), { address: '192.168.3.4', family: 4 });
  const broken = root.bind({}, ['172.16.0.0/99', 'nas.test']);
  tt.same(await broken.resolveAllowed('nas.test'), { address: '10.0.0.5', family: 4 });
  tt.equal(codeOf(await broken.resolveAllowed('172.16.0.1').catch((e) => e)), 'OUTBOUND_REFUSED');
  tt.same(await broken.resolveAllowed('127.0.0.1'), { address: '127.0.0.1', family: 4 }, 'service-wide still');
});

t.test("a connection an instance's list let through is not reused by another view", async (tt) => {
  const { port, stats } = await server(tt, (_q, res) => res.end('ok'));
  const root = client(tt, { allowCidrs: [] });
  const inst = root.bind({}, ['127.0.0.1/32']);
  const twin = root.bind({}, ['127.0.0.1/32']);
  tt.equal((await inst.request(`http://127.0.0.1:${port}/a`)).text(), 'ok');
  await new Promise((r) => setTimeout(r, 20));
  tt.equal(codeOf(await root.request(`http://127.0.0.1:${port}/b`).catch((e) => e)), 'OUTBOUND_REFUSED');
  tt.equal(codeOf(await root.fetch(`http://127.0.0.1:${port}/b`).catch((e) => e)), 'OUTBOUND_REFUSED');
  tt.equal((await twin.request(`http://127.0.0.1:${port}/c`)).text(), 'ok', 'the same list shares the pool');
  tt.equal(stats.sockets, 1, 'one connection for both views of the same list');
  await root.close();
  tt.equal((await inst.request(`http://127.0.0.1:${port}/d`)).text(), 'ok', 'close() empties the pools; new ones open');
  tt.equal(stats.sockets, 2);
});

t.test('redirects: which method and body go on, and the modes of fetch', async (tt) => {
  const { base, seen } = await server(tt, (req, res) => {
    const m = /^\/(\d{3})$/.exec(req.url!);
    if (m) return res.writeHead(Number(m[1]), { location: '/landing' }).end();
    if (req.url === '/no-location') return res.writeHead(302).end('stay');
    res.end(`landed ${req.method}`);
  });
  const h = client(tt, { allowCidrs: ['127.0.0.1/32'] });
  const hop = async (status: number, method: string) => {
    seen.length = 0;
    await h.request(`${base}/${status}`, {
      method,
      body: method === 'HEAD' ? undefined : 'data',
      headers: { 'content-type': 'text/plain', 'x-keep': 'yes' },
    });
    return seen.map((s) => [s.method, s.body, s.headers['content-type'] ?? null, s.headers['x-keep']]);
  };
  tt.same(
    await hop(302, 'POST'),
    [
      ['POST', 'data', 'text/plain', 'yes'],
      ['GET', '', null, 'yes'],
    ],
    '302 turns POST into GET without the body and its headers',
  );
  tt.same(await hop(301, 'POST'), [
    ['POST', 'data', 'text/plain', 'yes'],
    ['GET', '', null, 'yes'],
  ]);
  tt.same(
    await hop(301, 'PUT'),
    [
      ['PUT', 'data', 'text/plain', 'yes'],
      ['PUT', 'data', 'text/plain', 'yes'],
    ],
    '301 keeps any other method',
  );
  tt.same(await hop(302, 'DELETE'), [
    ['DELETE', 'data', 'text/plain', 'yes'],
    ['DELETE', 'data', 'text/plain', 'yes'],
  ]);
  tt.same(
    await hop(303, 'PUT'),
    [
      ['PUT', 'data', 'text/plain', 'yes'],
      ['GET', '', null, 'yes'],
    ],
    '303 turns any method into GET',
  );
  tt.same(
    await hop(303, 'HEAD'),
    [
      ['HEAD', '', 'text/plain', 'yes'],
      ['HEAD', '', 'text/plain', 'yes'],
    ],
    'but HEAD stays HEAD',
  );
  tt.same(await hop(308, 'POST'), [
    ['POST', 'data', 'text/plain', 'yes'],
    ['POST', 'data', 'text/plain', 'yes'],
  ]);

  const stay = await h.request(`${base}/no-location`);
  tt.same([stay.status, stay.text()], [302, 'stay'], 'a redirect status without a location is the answer');
  const err = await h.fetch(`${base}/302`, { redirect: 'error' }).catch((e) => e);
  tt.equal(codeOf(err), 'OUTBOUND_REDIRECTS');
  tt.equal(err.message, `127.0.0.1:${base.split(':')[2]} answered a redirect and redirects are refused`);
  const followed = await h.fetch(`${base}/302`);
  tt.same([followed.status, followed.redirected, followed.url], [200, true, `${base}/landing`]);
  const direct = await h.fetch(`${base}/landing`);
  tt.same([direct.redirected, direct.url, await direct.text()], [false, `${base}/landing`, 'landed GET']);
  const scheme = await h.request('gopher://127.0.0.1/').catch((e) => e);
  tt.equal(scheme.message, 'refused gopher: URL: only http and https are allowed');
});

t.test('fetch: bodiless answers, status text, decoding, and the caller’s abort reason', async (tt) => {
  const big = 'y'.repeat(3000);
  const { base } = await server(tt, (req, res) => {
    if (req.url === '/empty') return res.writeHead(204).end();
    if (req.url === '/named') return res.writeHead(200, 'Fine Thanks').end('x');
    if (req.url === '/teapot') return res.writeHead(299, '').end('x');
    if (req.url === '/silent') return;
    const enc = /^\/enc\/(.+)$/.exec(req.url!)?.[1];
    if (enc) {
      const raw = Buffer.from(big);
      const body = enc.toLowerCase().includes('gzip')
        ? zlib.gzipSync(raw)
        : enc === 'deflate'
          ? zlib.deflateSync(raw)
          : enc === 'br'
            ? zlib.brotliCompressSync(raw)
            : raw;
      return res.writeHead(200, { 'content-encoding': decodeURIComponent(enc) }).end(body);
    }
    res.end('body');
  });
  const h = client(tt, { allowCidrs: ['127.0.0.1/32'] });
  const empty = await h.fetch(`${base}/empty`);
  tt.equal(empty.status, 204);
  tt.equal(empty.body, null, 'a 204 has no body');
  const head = await h.fetch(`${base}/x`, { method: 'HEAD' });
  tt.equal(head.body, null, 'nor does an answer to HEAD');
  tt.equal(await head.text(), '');
  tt.equal((await h.fetch(`${base}/x`)).statusText, 'OK');
  tt.equal((await h.fetch(`${base}/teapot`)).statusText, '', 'no reason phrase and none known');
  for (const enc of ['gzip', 'x-gzip', 'deflate', 'br', '%20GZip%20']) {
    tt.equal((await h.request(`${base}/enc/${enc}`)).text(), big, `request decodes ${enc}`);
    tt.equal(await (await h.fetch(`${base}/enc/${enc}`)).text(), big, `fetch decodes ${enc}`);
    tt.equal(
      codeOf(await h.request(`${base}/enc/${enc}`, { maxResponseBytes: 2999 }).catch((e) => e)),
      'OUTBOUND_TOO_LARGE',
      'the cap counts decoded bytes',
    );
  }
  const reason = new Error('stopped by the caller');
  const ac = new AbortController();
  const pending = h.request(`${base}/silent`, { signal: ac.signal });
  setTimeout(() => ac.abort(reason), 20);
  tt.equal(await pending.catch((e) => e), reason, "the caller's abort reason is what the request fails with");
  const ac2 = new AbortController();
  const fpending = h.fetch(`${base}/silent`, { signal: ac2.signal });
  setTimeout(() => ac2.abort(reason), 20);
  tt.equal(await fpending.catch((e) => e), reason, 'fetch too');
  const req = new Request(`${base}/silent`, { signal: AbortSignal.abort(reason) });
  tt.equal(await h.fetch(req).catch((e) => e), reason, "a Request's own signal counts");
});

t.test('the system resolver asks for every answer in the order given, and keeps each family', async (tt) => {
  const lookups = dns.promises as unknown as { lookup: unknown };
  const real = lookups.lookup;
  const asked: unknown[] = [];
  lookups.lookup = async (host: string, options: unknown) => {
    asked.push([host, options]);
    return [
      { address: '2606:4700:4700::1111', family: 6 },
      { address: '1.1.1.1', family: 4 },
    ];
  };
  tt.teardown(() => {
    lookups.lookup = real;
  });
  const h = createOutboundHttp({ allowCidrs: [] });
  tt.same(await h.resolveAllowed('dual.test'), { address: '2606:4700:4700::1111', family: 6 }, 'the first answer');
  tt.same(asked, [['dual.test', { all: true, order: 'verbatim' }]]);
  lookups.lookup = async () => [
    { address: '1.1.1.1', family: 4 },
    { address: '::1', family: 6 },
  ];
  tt.equal(codeOf(await h.resolveAllowed('dual.test').catch((e) => e)), 'OUTBOUND_REFUSED', 'every answer is checked');
});

t.test('pools: one per allow list and connect timeout, whatever the order of the list', async (tt) => {
  const { port, stats } = await server(tt, (_q, res) => res.end('ok'));
  const root = client(tt, { allowCidrs: ['127.0.0.1/32'] });
  const url = `http://127.0.0.1:${port}/`;
  const pause = () => new Promise((r) => setTimeout(r, 20));
  tt.equal((await root.request(url)).text(), 'ok');
  await pause();
  for (const view of [root.bind({}), root.bind({}, []), root.bind({}, ['', ' '])]) {
    tt.equal((await view.request(url)).text(), 'ok');
    await pause();
  }
  tt.equal(stats.sockets, 1, 'a view with no list of its own shares the service-wide pool');
  const a = root.bind({}, ['10.1.0.0/16', '10.2.0.0/16', 'a.test', 'b.test']);
  const b = root.bind({}, ['b.test', '10.2.0.0/16', 'a.test', '10.1.0.0/16']);
  tt.equal((await a.request(url)).text(), 'ok');
  await pause();
  tt.equal((await b.request(url)).text(), 'ok');
  tt.equal(stats.sockets, 2, 'the same list in another order shares its pool');

  // A pooled connection of another connect timeout is not reused: the slow name times out.
  const slow = client(tt, {
    allowCidrs: ['127.0.0.1/32'],
    resolver: async () => {
      await new Promise((r) => setTimeout(r, 150));
      return [{ address: '127.0.0.1', family: 4 }];
    },
  });
  const named = `http://slow.test:${port}/`;
  tt.equal((await slow.request(named)).text(), 'ok', 'a resolver slower than 100 ms is fine by default');
  await pause();
  const err = await slow.request(named, { connectTimeoutMs: 50 }).catch((e) => e);
  tt.equal(codeOf(err), 'OUTBOUND_TIMEOUT', 'a shorter connect timeout opens (and resolves) its own connection');
});

t.test('bindCredentials, and bind() is not copied with the client', async (tt) => {
  const resolver: Resolver = async () => [{ address: '10.0.0.5', family: 4 }];
  const root = client(tt, { allowCidrs: [], resolver });
  const bound = bindCredentials(root, {}, ['nas.test']);
  tt.same(await bound.resolveAllowed('nas.test'), { address: '10.0.0.5', family: 4 }, 'bound with its allow list');
  tt.equal(codeOf(await root.resolveAllowed('nas.test').catch((e) => e)), 'OUTBOUND_REFUSED');
  const double = { ...root, resolveAllowed: async () => ({ address: '1.2.3.4', family: 4 as const }) };
  tt.notOk('bind' in double, 'a spread copy has no bind');
  tt.equal(bindCredentials(double, {}, ['nas.test']), double, 'a client without bind is given back as it is');
  tt.notOk(Object.keys(root).includes('bind'));
});

t.test('a method switch drops exactly the content headers', async (tt) => {
  const { base, seen } = await server(tt, (req, res) => {
    if (req.url === '/move') return res.writeHead(302, { location: '/to' }).end('moved away, see /to');
    res.end('there');
  });
  const h = client(tt, { allowCidrs: ['127.0.0.1/32'] });
  const r = await h.request(`${base}/move`, {
    method: 'POST',
    body: 'x',
    headers: {
      'Content-Type': 'text/plain',
      'CONTENT-ENCODING': 'identity',
      'content-language': 'en',
      'x-content-type': 'kept',
      'content-types': 'kept',
    },
  });
  tt.equal(r.text(), 'there');
  const last = seen.at(-1)!.headers;
  tt.same(
    [
      last['content-type'],
      last['content-encoding'],
      last['content-language'],
      last['x-content-type'],
      last['content-types'],
    ],
    [undefined, undefined, 'en', 'kept', 'kept'],
  );
});

t.test('fetch: request credential headers, listeners released, status text', async (tt) => {
  const second = await server(tt, (_q, res) => res.end('second'));
  const { base } = await server(tt, (req, res) => {
    if (req.url === '/away') return res.writeHead(302, { location: `http://127.0.0.1:${second.port}/x` }).end();
    if (req.url === '/empty') return res.writeHead(204).end();
    if (req.url === '/named') return res.writeHead(200, 'Fine Thanks').end('x');
    res.end('streamed body');
  });
  const h = client(tt, { allowCidrs: ['127.0.0.1/32'] });
  const res = await h.fetch(`${base}/away`, {
    headers: { 'x-session': 's1', 'x-other': 'o' },
    credentialHeaders: ['X-Session'],
  } as RequestInit);
  tt.equal(await res.text(), 'second');
  tt.same(
    [second.seen[0]!.headers['x-session'], second.seen[0]!.headers['x-other']],
    [undefined, 'o'],
    "fetch's own credential headers stay on their origin",
  );
  tt.equal((await h.fetch(`${base}/named`)).statusText, 'Fine Thanks', "the server's reason phrase");
  // Each Request made from the signal adds a listener of its own (held until it is collected): the
  // client's own listener must be gone once the answer is complete, leaving at most that one.
  const kept = new AbortController();
  const added = async (work: () => Promise<unknown>) => {
    const before = getEventListeners(kept.signal, 'abort').length;
    await work();
    return getEventListeners(kept.signal, 'abort').length - before;
  };
  tt.ok((await added(() => h.fetch(`${base}/empty`, { signal: kept.signal }))) <= 1, 'a bodiless answer');
  tt.ok(
    (await added(async () => (await h.fetch(`${base}/body`, { signal: kept.signal })).body!.cancel())) <= 1,
    'a cancelled body',
  );
  tt.ok(
    (await added(async () =>
      tt.equal(await (await h.fetch(`${base}/body`, { signal: kept.signal })).text(), 'streamed body'),
    )) <= 1,
    'a body read to its end',
  );
});

t.test('connection failures: the connect timeout and a refused connection, named by host only', async (tt) => {
  // Accepts TCP but never answers a TLS ClientHello: the handshake is part of the connect timeout.
  const mute = net.createServer(() => {});
  await new Promise<void>((r) => mute.listen(0, '127.0.0.1', r));
  const mutePort = (mute.address() as { port: number }).port;
  const sockets = new Set<net.Socket>();
  mute.on('connection', (s) => sockets.add(s));
  tt.teardown(() => {
    for (const s of sockets) s.destroy();
    mute.close();
  });
  const h = client(tt, { allowCidrs: ['127.0.0.1/32'] });
  const started = Date.now();
  let err = await h.request(`https://127.0.0.1:${mutePort}/secret`, { connectTimeoutMs: 200 }).catch((e) => e);
  tt.equal(codeOf(err), 'OUTBOUND_TIMEOUT');
  tt.equal(err.message, `connecting to 127.0.0.1:${mutePort} timed out`);
  tt.equal(err.cause.code, 'UND_ERR_CONNECT_TIMEOUT');
  tt.ok(Date.now() - started < 5000);

  const closed = http.createServer();
  await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
  const closedPort = (closed.address() as { port: number }).port;
  await new Promise<void>((r) => closed.close(() => r()));
  err = await h.request(`http://127.0.0.1:${closedPort}/secret`).catch((e) => e);
  tt.equal(codeOf(err), 'OUTBOUND_NETWORK');
  tt.equal(err.message, `request to 127.0.0.1:${closedPort} failed: connect ECONNREFUSED 127.0.0.1:${closedPort}`);
  tt.equal(err.cause.code, 'ECONNREFUSED', 'the cause kept');
});

t.test('TLS to an IP literal sends no server name', async (tt) => {
  const names: string[] = [];
  let hellos = 0;
  const srv = tls.createServer({
    SNICallback: (name, cb) => {
      names.push(name);
      cb(new Error('no certificate'), null as never);
    },
  });
  srv.on('tlsClientError', () => {
    hellos++;
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  tt.teardown(() => srv.close());
  const port = (srv.address() as { port: number }).port;
  const h = client(tt, { allowCidrs: ['127.0.0.1/32'] });
  for (const host of ['127.0.0.1', '[::ffff:127.0.0.1]']) {
    tt.equal(codeOf(await h.request(`https://${host}:${port}/`).catch((e) => e)), 'OUTBOUND_NETWORK', host);
  }
  tt.equal(hellos, 2, 'both handshakes reached the server');
  tt.same(names, [], 'neither named a server');
});

t.test('TLS offers HTTP/1.1 only', async (tt) => {
  const offered: string[][] = [];
  const srv = tls.createServer({
    ALPNCallback: ({ protocols }) => {
      offered.push(protocols);
      return undefined;
    },
  });
  srv.on('tlsClientError', () => {});
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  tt.teardown(() => srv.close());
  const h = client(tt, { allowCidrs: ['127.0.0.1/32'] });
  const port = (srv.address() as { port: number }).port;
  tt.equal(codeOf(await h.request(`https://127.0.0.1:${port}/`).catch((e) => e)), 'OUTBOUND_NETWORK');
  tt.same(offered, [['http/1.1']], 'no h2 in the ALPN offer');
});

t.test("an unread fetch body's timer does not keep the process alive", async (tt) => {
  const { base } = await server(tt, (_q, res) => res.end('never read'));
  const h = client(tt, { allowCidrs: ['127.0.0.1/32'] });
  const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
  const before = timers();
  const res = await h.fetch(`${base}/`, { timeoutMs: 60_000 } as RequestInit);
  tt.equal(timers(), before, 'no referenced timer added');
  await res.text();
});

t.test('a finished resolution leaves no timer behind', async (tt) => {
  const h = createOutboundHttp({ allowCidrs: [], resolver: fixed('1.1.1.1') });
  const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
  const before = timers();
  tt.same(await h.resolveAllowed('one.test'), { address: '1.1.1.1', family: 4 });
  tt.equal(timers(), before, 'the resolution timeout is cleared');
  const failing = createOutboundHttp({
    allowCidrs: [],
    resolver: async () => {
      throw new Error('no');
    },
  });
  await failing.resolveAllowed('two.test').catch(() => {});
  tt.equal(timers(), before, 'also when the resolver fails');
});

t.test('connections are closed: by close(), and when a body is refused or cancelled', async (tt) => {
  const big = 'z'.repeat(200_000);
  const { base, stats } = await server(tt, (req, res) => {
    if (req.url === '/cut') {
      res.writeHead(200, { 'content-length': '100' });
      res.write('only part');
      setTimeout(() => res.socket?.destroy(), 20);
      return;
    }
    if (req.url === '/big') {
      // Written slowly enough that the client has refused it before the end.
      res.write(big);
      setTimeout(() => res.end(big), 300);
      return;
    }
    res.end('small');
  });
  const wait = async (what: () => boolean) => {
    for (let i = 0; i < 100 && !what(); i++) await new Promise((r) => setTimeout(r, 10));
    return what();
  };
  const h = createOutboundHttp({ allowCidrs: ['127.0.0.1/32'] });
  tt.equal((await h.request(`${base}/`)).text(), 'small');
  tt.equal(stats.closed, 0, 'the connection is pooled');
  await h.close();
  tt.ok(await wait(() => stats.closed === 1), 'close() closes the pooled connection');

  const h2 = client(tt, { allowCidrs: ['127.0.0.1/32'] });
  let closedBefore = stats.closed;
  tt.equal(codeOf(await h2.request(`${base}/big`, { maxResponseBytes: 1000 }).catch((e) => e)), 'OUTBOUND_TOO_LARGE');
  tt.ok(await wait(() => stats.closed === closedBefore + 1), 'a body over the cap is dropped with its connection');
  closedBefore = stats.closed;
  const res = await h2.fetch(`${base}/big`, { maxResponseBytes: 1000 } as RequestInit);
  tt.equal(codeOf(await res.text().catch((e) => e)), 'OUTBOUND_TOO_LARGE');
  tt.ok(await wait(() => stats.closed === closedBefore + 1), 'fetch too');
  closedBefore = stats.closed;
  const cancelled = await h2.fetch(`${base}/big`);
  await cancelled.body!.cancel();
  tt.ok(await wait(() => stats.closed === closedBefore + 1), 'and a cancelled fetch body');
  tt.equal(
    await h2.fetch(`${base}/`, { maxResponseBytes: 5 } as RequestInit).then((r) => r.text()),
    'small',
    'exactly the cap',
  );

  const cut = await h2.request(`${base}/cut`).catch((e) => e);
  tt.equal(codeOf(cut), 'OUTBOUND_NETWORK', 'a body cut short is a network error');
  tt.not(cut.cause?.code, 'UND_ERR_ABORTED', "undici's own error, not the guard for a body closed without one");
  tt.match(cut.message, /^request to 127\.0\.0\.1:\d+ failed: /);
});

t.test("a redirect's scheme is refused before its credentials are looked at", async (tt) => {
  const TOKEN = 'bot-token-0123456789abcdef';
  const { base } = await server(tt, (_q, res) => res.writeHead(302, { location: `ftp://127.0.0.1/${TOKEN}` }).end());
  const h = client(tt, { allowCidrs: ['127.0.0.1/32'] }).bind({ secrets: [TOKEN] });
  const err = await h.request(`${base}/${TOKEN}`).catch((e) => e);
  tt.equal(codeOf(err), 'OUTBOUND_REFUSED');
  tt.equal(err.message, 'refused ftp: URL: only http and https are allowed');
});
