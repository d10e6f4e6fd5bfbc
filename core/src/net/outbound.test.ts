import { getEventListeners } from 'node:events';
import http from 'node:http';
import tls from 'node:tls';
import zlib from 'node:zlib';
import type { Test } from 'tap';
import t from 'tap';
import type { Resolver } from './outbound.ts';
import { createOutboundHttp, type OutboundError } from './outbound.ts';

interface Seen {
  method: string;
  url: string;
  host?: string;
  body: string;
  auth?: string;
}

/** A loopback server; `handler` answers, every request is recorded. */
async function server(tt: Test, handler: (req: http.IncomingMessage, res: http.ServerResponse, body: string) => void) {
  const seen: Seen[] = [];
  const srv = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => {
      seen.push({ method: req.method!, url: req.url!, host: req.headers.host, body, auth: req.headers.authorization });
      handler(req, res, body);
    });
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  tt.teardown(() => {
    srv.closeAllConnections();
    srv.close();
  });
  return { port: (srv.address() as { port: number }).port, seen };
}

/** A resolver answering from a fixed script and counting its calls. */
function scripted(answers: string[]): Resolver & { calls: string[] } {
  const calls: string[] = [];
  const fn = async (host: string) => {
    calls.push(host);
    const a = answers[Math.min(calls.length - 1, answers.length - 1)]!;
    return [{ address: a, family: a.includes(':') ? (6 as const) : (4 as const) }];
  };
  return Object.assign(fn, { calls });
}

function client(tt: Test, opts: Parameters<typeof createOutboundHttp>[0]) {
  const h = createOutboundHttp(opts);
  tt.teardown(() => h.close());
  return h;
}

const codeOf = (err: unknown) => (err as OutboundError).code;

t.test('the connection goes to the first answer; a later loopback answer is refused', async (tt) => {
  const { port, seen } = await server(tt, (_q, res) => {
    res.setHeader('connection', 'close');
    res.end('ok');
  });
  const resolver = scripted(['127.0.0.1', '127.0.0.2']);
  const h = client(tt, { allowCidrs: ['127.0.0.1/32'], resolver });
  // `pin.test` has no real DNS record: a success proves undici connected to the resolved address.
  const first = await h.request(`http://pin.test:${port}/one`);
  tt.equal(first.status, 200);
  tt.equal(first.text(), 'ok');
  tt.equal(seen[0]!.host, `pin.test:${port}`, 'Host header keeps the name');
  tt.same(resolver.calls, ['pin.test'], 'resolved exactly once');
  const err = await h.request(`http://pin.test:${port}/two`).catch((e) => e);
  tt.equal(codeOf(err), 'OUTBOUND_REFUSED');
  tt.match(err.message, /127\.0\.0\.2 is a loopback address/);
  tt.equal(seen.length, 1, 'the refused request never reached a server');
});

t.test('an open connection stays on its pinned address when DNS changes', async (tt) => {
  const { port } = await server(tt, (_q, res) => res.end('ok'));
  const resolver = scripted(['127.0.0.1', '10.0.0.1']);
  const h = client(tt, { allowCidrs: ['127.0.0.1/32'], resolver });
  tt.equal((await h.request(`http://keep.test:${port}/a`)).status, 200);
  await new Promise((r) => setTimeout(r, 20)); // let undici hand the idle socket back to its pool
  tt.equal((await h.request(`http://keep.test:${port}/b`)).status, 200);
  tt.same(resolver.calls, ['keep.test']);
});

t.test('TLS to the pinned address still presents the host name (SNI)', async (tt) => {
  let sni: string | undefined;
  // No certificate: the handshake fails after the ClientHello, which is all this needs to see.
  const srv = tls.createServer({
    SNICallback: (name, cb) => {
      sni = name;
      cb(new Error('no certificate'), null as never);
    },
  });
  srv.on('tlsClientError', () => {});
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  tt.teardown(() => srv.close());
  const resolver = scripted(['127.0.0.1']);
  const h = client(tt, { allowCidrs: ['127.0.0.1/32'], resolver });
  const err = await h.request(`https://secure.test:${(srv.address() as { port: number }).port}/`).catch((e) => e);
  tt.equal(codeOf(err), 'OUTBOUND_NETWORK');
  tt.equal(sni, 'secure.test');
  tt.same(resolver.calls, ['secure.test']);
});

t.test('every internal range is refused, in every spelling', async (tt) => {
  const refused = [
    '10.1.2.3',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '127.0.0.1',
    '127.255.0.9',
    '::1',
    '169.254.169.254',
    'fe80::1',
    '100.64.0.1',
    '100.127.255.254',
    'fd00::1',
    'fc00::5',
    '0.0.0.0',
    '::',
    '224.0.0.1',
    'ff02::1',
    '255.255.255.255',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:10.0.0.1',
    '::ffff:169.254.169.254',
    '64:ff9b::a9fe:a9fe',
    '2002:c0a8:0101::1',
    // IPv4-translated (::ffff:0:0/96), local-use NAT64 and Teredo (client 127.0.0.1 and 10.0.0.1, bits inverted).
    '::ffff:0:127.0.0.1',
    '::ffff:0:7f00:1',
    '::ffff:0:10.0.0.1',
    '::ffff:0:a9fe:a9fe',
    '64:ff9b:1::a00:1',
    '64:ff9b:1:ffff::1',
    '2001:0:4136:e378:8000:63bf:80ff:fffe',
    '2001::f5ff:fffe',
  ];
  for (const address of refused) {
    const h = createOutboundHttp({ allowCidrs: [], resolver: scripted([address]) });
    const err = await h.resolveAllowed('victim.test').catch((e) => e);
    tt.equal(codeOf(err), 'OUTBOUND_REFUSED', `${address} refused`);
  }
  for (const address of [
    '93.184.216.34',
    '1.1.1.1',
    '100.128.0.1',
    '172.32.0.1',
    '2606:4700:4700::1111',
    '::ffff:0:5db8:d822',
    '2001:0:4136:e378:8000:63bf:a247:27dd',
  ]) {
    const h = createOutboundHttp({ allowCidrs: [], resolver: scripted([address]) });
    tt.same(
      await h.resolveAllowed('public.test'),
      { address, family: address.includes(':') ? 6 : 4 },
      `${address} allowed`,
    );
  }
});

t.test('IP literals are checked without a resolver', async (tt) => {
  const resolver = scripted(['8.8.8.8']);
  const h = client(tt, { allowCidrs: [], resolver });
  for (const url of [
    'http://127.0.0.1/',
    'http://[::1]/',
    'http://[::ffff:127.0.0.1]:8080/',
    'http://[::ffff:0:127.0.0.1]/',
    'http://169.254.169.254/latest/meta-data/',
    'http://0.0.0.0/',
  ]) {
    tt.equal(codeOf(await h.request(url).catch((e) => e)), 'OUTBOUND_REFUSED', url);
  }
  tt.same(resolver.calls, []);
});

t.test('an answer set with one internal address is refused', async (tt) => {
  const h = createOutboundHttp({
    allowCidrs: [],
    resolver: async () => [
      { address: '93.184.216.34', family: 4 },
      { address: '10.0.0.1', family: 4 },
    ],
  });
  tt.equal(codeOf(await h.resolveAllowed('mixed.test').catch((e) => e)), 'OUTBOUND_REFUSED');
});

t.test('allowCidrs lets exactly the listed range through', async (tt) => {
  const { port } = await server(tt, (_q, res) => res.end('hi'));
  const h = client(tt, { allowCidrs: ['127.0.0.1/32'] });
  tt.equal((await h.request(`http://127.0.0.1:${port}/`)).text(), 'hi');
  tt.same(await h.resolveAllowed('::ffff:127.0.0.1'), { address: '127.0.0.1', family: 4 });
  tt.equal(codeOf(await h.resolveAllowed('127.0.0.2').catch((e) => e)), 'OUTBOUND_REFUSED');
  tt.throws(() => createOutboundHttp({ allowCidrs: ['10.0.0.0/33'] }), /invalid prefix/);
});

t.test('a redirect chain ending on an internal address is refused', async (tt) => {
  const { port, seen } = await server(tt, (req, res) => {
    const to = req.url === '/a' ? '/b' : 'http://169.254.169.254/latest/meta-data/';
    res.writeHead(302, { location: to }).end();
  });
  const h = client(tt, { allowCidrs: ['127.0.0.1/32'], resolver: scripted(['127.0.0.1']) });
  const err = await h.request(`http://hop.test:${port}/a`).catch((e) => e);
  tt.equal(codeOf(err), 'OUTBOUND_REFUSED');
  tt.same(
    seen.map((s) => s.url),
    ['/a', '/b'],
  );
});

t.test('redirects are re-resolved and re-checked per new host', async (tt) => {
  const { port } = await server(tt, (req, res) => {
    if (req.headers.host?.startsWith('start.test'))
      res.writeHead(301, { location: `http://internal.test:${port}/x` }).end();
    else res.end('reached');
  });
  const resolver: Resolver = async (host) => [
    { address: host === 'start.test' ? '127.0.0.1' : '192.168.0.10', family: 4 },
  ];
  const h = client(tt, { allowCidrs: ['127.0.0.1/32'], resolver });
  const err = await h.request(`http://start.test:${port}/`).catch((e) => e);
  tt.equal(codeOf(err), 'OUTBOUND_REFUSED');
  tt.match(err.message, /internal\.test: 192\.168\.0\.10 is a private address/);
});

t.test('redirect limit, 303 switch to GET, 307 keeps the body, credentials stay on their origin', async (tt) => {
  const { port, seen } = await server(tt, (req, res) => {
    const m = /^\/loop\/(\d+)$/.exec(req.url!);
    if (m) return res.writeHead(302, { location: `/loop/${Number(m[1]) + 1}` }).end();
    if (req.url === '/see-other') return res.writeHead(303, { location: '/landing' }).end();
    if (req.url === '/temp') return res.writeHead(307, { location: '/landing' }).end();
    if (req.url === '/elsewhere') return res.writeHead(302, { location: `http://other.test:${port}/landing` }).end();
    res.end('landed');
  });
  const h = client(tt, { allowCidrs: ['127.0.0.1/32'], resolver: scripted(['127.0.0.1']) });
  const base = `http://r.test:${port}`;
  const err = await h.request(`${base}/loop/0`, { maxRedirects: 3 }).catch((e) => e);
  tt.equal(codeOf(err), 'OUTBOUND_REDIRECTS');
  tt.equal(seen.length, 4, 'first request plus three redirects');
  tt.equal(codeOf(await h.request(`${base}/loop/0`, { maxRedirects: 0 }).catch((e) => e)), 'OUTBOUND_REDIRECTS');

  seen.length = 0;
  const r = await h.request(`${base}/see-other`, { method: 'POST', json: { a: 1 } });
  tt.equal(r.text(), 'landed');
  tt.equal(r.url, `${base}/landing`);
  tt.same(
    seen.map((s) => [s.method, s.url, s.body]),
    [
      ['POST', '/see-other', '{"a":1}'],
      ['GET', '/landing', ''],
    ],
  );

  seen.length = 0;
  await h.request(`${base}/temp`, { method: 'POST', body: 'keep me' });
  tt.same(
    seen.map((s) => [s.method, s.body]),
    [
      ['POST', 'keep me'],
      ['POST', 'keep me'],
    ],
  );

  seen.length = 0;
  await h.request(`${base}/elsewhere`, { headers: { Authorization: 'Bearer secret' } });
  tt.same(
    seen.map((s) => s.auth),
    ['Bearer secret', undefined],
    'Authorization dropped on the cross-origin hop',
  );
});

t.test('only http and https', async (tt) => {
  const { port } = await server(tt, (_q, res) => res.writeHead(302, { location: 'file:///etc/passwd' }).end());
  const h = client(tt, { allowCidrs: ['127.0.0.1/32'] });
  tt.equal(codeOf(await h.request('ftp://example.com/x').catch((e) => e)), 'OUTBOUND_REFUSED');
  tt.equal(codeOf(await h.request(`http://127.0.0.1:${port}/`).catch((e) => e)), 'OUTBOUND_REFUSED');
});

t.test('timeouts always fire', async (tt) => {
  const { port } = await server(tt, (req, res) => {
    if (req.url === '/stall-body') {
      res.writeHead(200);
      res.write('partial');
    }
    if (req.url === '/ok') res.end('ok');
    // '/silent' never answers at all.
  });
  const h = client(tt, { allowCidrs: ['127.0.0.1/32'] });
  let started = Date.now();
  let err = await h.request(`http://127.0.0.1:${port}/silent`, { timeoutMs: 200 }).catch((e) => e);
  tt.equal(codeOf(err), 'OUTBOUND_TIMEOUT');
  tt.ok(Date.now() - started < 2000, 'gave up quickly');
  err = await h.request(`http://127.0.0.1:${port}/stall-body`, { timeoutMs: 200 }).catch((e) => e);
  tt.equal(codeOf(err), 'OUTBOUND_TIMEOUT', 'a body that stops arriving times out too');

  const res = await h.fetch(`http://127.0.0.1:${port}/stall-body`, { timeoutMs: 200 } as RequestInit);
  tt.equal(res.status, 200);
  tt.equal(codeOf(await res.text().catch((e) => e)), 'OUTBOUND_TIMEOUT', 'fetch body read times out');

  const hanging = createOutboundHttp({ allowCidrs: [], resolver: () => new Promise(() => {}) });
  started = Date.now();
  err = await hanging.request('http://slow-dns.test/', { connectTimeoutMs: 100 }).catch((e) => e);
  tt.equal(codeOf(err), 'OUTBOUND_TIMEOUT', 'resolution counts toward the connect timeout');
  tt.ok(Date.now() - started < 2000);

  const outer = new AbortController();
  const pending = h.request(`http://127.0.0.1:${port}/silent`, { signal: outer.signal });
  outer.abort();
  tt.equal((await pending.catch((e) => e)).name, 'AbortError', "the caller's abort stays an abort");

  const before = new AbortController();
  before.abort();
  tt.equal(
    (await h.request(`http://127.0.0.1:${port}/silent`, { signal: before.signal }).catch((e) => e)).name,
    'AbortError',
    'a signal aborted beforehand fails the request at once',
  );

  // A caller that keeps one signal for many requests (a plugin's own stop signal) is left with no
  // listener once each request is done, answered, failed or timed out.
  const kept = new AbortController();
  for (let i = 0; i < 5; i++)
    tt.equal((await h.request(`http://127.0.0.1:${port}/ok`, { signal: kept.signal })).status, 200);
  await h.request(`http://127.0.0.1:${port}/silent`, { signal: kept.signal, timeoutMs: 100 }).catch(() => {});
  tt.equal(getEventListeners(kept.signal, 'abort').length, 0, "no listener left on the caller's signal");
});

t.test('the response body cap', async (tt) => {
  const big = 'x'.repeat(5000);
  const { port } = await server(tt, (req, res) => {
    if (req.url === '/chunked') {
      res.write(big.slice(0, 2500));
      setTimeout(() => res.end(big.slice(2500)), 10);
    } else if (req.url === '/gzip') {
      res.writeHead(200, { 'content-encoding': 'gzip' }).end(zlib.gzipSync(big));
    } else res.end(big);
  });
  const h = client(tt, { allowCidrs: ['127.0.0.1/32'] });
  for (const path of ['/sized', '/chunked', '/gzip']) {
    tt.equal(
      codeOf(await h.request(`http://127.0.0.1:${port}${path}`, { maxResponseBytes: 1000 }).catch((e) => e)),
      'OUTBOUND_TOO_LARGE',
      path,
    );
  }
  tt.equal((await h.request(`http://127.0.0.1:${port}/gzip`)).text(), big, 'compressed bodies are decoded');
  tt.equal(
    (await h.request(`http://127.0.0.1:${port}/sized`, { maxResponseBytes: 5000 })).body.length,
    5000,
    'exactly the cap is fine',
  );
  const res = await h.fetch(`http://127.0.0.1:${port}/chunked`, { maxResponseBytes: 1000 } as RequestInit);
  tt.equal(codeOf(await res.text().catch((e) => e)), 'OUTBOUND_TOO_LARGE', 'fetch enforces the cap while streaming');
});

t.test('fetch is a real fetch with the same protections', async (tt) => {
  const { port, seen } = await server(tt, (req, res, body) => {
    if (req.url === '/go') return res.writeHead(308, { location: '/json' }).end();
    res.setHeader('set-cookie', ['a=1', 'b=2']);
    res.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify({ got: body }));
  });
  const h = client(tt, { allowCidrs: ['127.0.0.1/32'], resolver: scripted(['127.0.0.1']) });
  const res = await h.fetch(
    new Request(`http://f.test:${port}/go`, {
      method: 'POST',
      body: JSON.stringify({ q: 1 }),
      headers: { 'content-type': 'application/json' },
    }),
  );
  tt.ok(res instanceof Response);
  tt.equal(res.status, 201);
  tt.equal(res.url, `http://f.test:${port}/json`);
  tt.equal(res.redirected, true);
  tt.same(res.headers.getSetCookie(), ['a=1', 'b=2']);
  tt.same(await res.json(), { got: '{"q":1}' });
  tt.same(
    seen.map((s) => s.method),
    ['POST', 'POST'],
  );
  const manual = await h.fetch(`http://f.test:${port}/go`, { redirect: 'manual' });
  tt.equal(manual.status, 308);
  const blocked = createOutboundHttp({ allowCidrs: [] });
  tt.equal(codeOf(await blocked.fetch(`http://127.0.0.1:${port}/json`).catch((e) => e)), 'OUTBOUND_REFUSED');
});

t.test('errors do not echo the path or query, where secrets live', async (tt) => {
  const h = client(tt, { allowCidrs: ['127.0.0.1/32'] });
  const srv = http.createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address() as { port: number };
  await new Promise<void>((r) => srv.close(() => r()));
  const err = await h.request(`http://127.0.0.1:${port}/bot123:SECRET/send?token=SECRET`).catch((e) => e);
  tt.equal(codeOf(err), 'OUTBOUND_NETWORK');
  tt.notMatch(err.message, /SECRET/);
  const refused = await createOutboundHttp({ allowCidrs: [] })
    .request('http://10.0.0.1/hook/SECRET')
    .catch((e) => e);
  tt.notMatch(refused.message, /SECRET/);
});

/**
 * Two loopback origins: `first` answers every request with a redirect built by `to`, `second` records what reached it.
 */
async function twoOrigins(tt: Test, to: (secondBase: string, req: http.IncomingMessage) => string, status = 302) {
  const reached: { url: string; headers: http.IncomingHttpHeaders }[] = [];
  const second = await server(tt, (req, res) => {
    reached.push({ url: req.url!, headers: req.headers });
    res.end('second');
  });
  const secondBase = `http://127.0.0.1:${second.port}`;
  const first = await server(tt, (req, res) => {
    if (req.url!.startsWith('/same/')) return res.end('first');
    res.writeHead(status, { location: to(secondBase, req) }).end();
  });
  return { firstBase: `http://127.0.0.1:${first.port}`, secondBase, firstSeen: first.seen, reached };
}

t.test('a bound client keeps declared credential headers and secret-carrying headers on their origin', async (tt) => {
  const o = await twoOrigins(tt, (b, req) => (req.url === '/to-same' ? '/same/x' : `${b}/landing`));
  const root = client(tt, { allowCidrs: ['127.0.0.1/32'] });
  const SECRET = 'immich-api-key-0123456789';
  const h = root.bind({ headers: ['X-Api-Key'], secrets: [SECRET, 'pin1'] });
  const headers = {
    'x-api-key': SECRET,
    'X-Custom-Auth': `Token ${SECRET}`,
    'x-pin': 'pin1',
    'x-short': 'pin12',
    authorization: 'Bearer abc',
    'x-request-id': 'r-1',
    accept: 'application/json',
  };
  const res = await h.request(`${o.firstBase}/go`, { headers });
  tt.equal(res.text(), 'second');
  const got = o.reached[0]!.headers;
  tt.equal(got['x-api-key'], undefined, 'the declared header (any case) is dropped on the cross-origin hop');
  tt.equal(got['x-custom-auth'], undefined, 'a header whose value contains a secret value is dropped');
  tt.equal(got['x-pin'], undefined, 'a short secret value counts when it is the whole header value');
  tt.equal(got['x-short'], 'pin12', 'but not inside a longer value');
  tt.equal(got.authorization, undefined, 'the fixed list still applies');
  tt.equal(got['x-request-id'], 'r-1', 'other headers go along');
  tt.equal(got.accept, 'application/json');
  tt.equal(o.firstSeen[0]!.auth, 'Bearer abc', 'the first origin got everything');

  o.reached.length = 0;
  await h.request(`${o.firstBase}/go`, {
    headers: { 'x-session': 'only-this-request' },
    credentialHeaders: ['X-Session'],
  });
  tt.equal(o.reached[0]!.headers['x-session'], undefined, 'a request can declare its own credential headers');

  // A same-origin redirect keeps every header.
  const seenBefore = o.firstSeen.length;
  tt.equal((await h.request(`${o.firstBase}/to-same`, { headers })).text(), 'first');
  tt.same(
    o.firstSeen.slice(seenBefore).map((s) => s.auth),
    ['Bearer abc', 'Bearer abc'],
  );

  // fetch applies the same rules.
  o.reached.length = 0;
  const fres = await h.fetch(`${o.firstBase}/go`, { headers: { 'x-api-key': SECRET, 'x-other': 'kept' } });
  tt.equal(await fres.text(), 'second');
  tt.equal(o.reached[0]!.headers['x-api-key'], undefined, 'fetch drops the declared header too');
  tt.equal(o.reached[0]!.headers['x-other'], 'kept');

  // The unbound client knows only the fixed list: this is why every instance gets a bound one.
  o.reached.length = 0;
  await root.request(`${o.firstBase}/go`, { headers: { 'x-api-key': SECRET } });
  tt.equal(o.reached[0]!.headers['x-api-key'], SECRET);
});

t.test('a redirect to another origin whose URL carries a secret is refused', async (tt) => {
  const TOKEN = '123456:AAE-secret_bot_token_0123456789';
  const o = await twoOrigins(
    tt,
    (b, req) =>
      req.url!.startsWith('/hop/')
        ? `/same${req.url}`
        : req.url!.includes('/plain')
          ? `${b}/elsewhere`
          : `${b}${req.url}`,
    307,
  );
  const h = client(tt, { allowCidrs: ['127.0.0.1/32'] }).bind({ secrets: [TOKEN] });
  const err = await h
    .request(`${o.firstBase}/bot${TOKEN}/sendMessage`, { method: 'POST', json: { text: 'hi' } })
    .catch((e) => e);
  tt.equal(codeOf(err), 'OUTBOUND_REDIRECTS');
  tt.match(err.message, /credential in the URL/);
  tt.notMatch(err.message, /AAE-secret/, 'the refusal does not name the secret');
  const ferr = await h.fetch(`${o.firstBase}/bot${encodeURIComponent(TOKEN)}/getMe`).catch((e) => e);
  tt.equal(codeOf(ferr), 'OUTBOUND_REDIRECTS', 'fetch refuses it too, percent-encoded or not');
  tt.same(o.reached, [], 'the second origin never saw a request');

  // A cross-origin redirect that leaves the secret behind is followed; a same-origin one always is.
  tt.equal((await h.request(`${o.firstBase}/bot${TOKEN}/plain`)).text(), 'second');
  tt.same(
    o.reached.map((r) => r.url),
    ['/elsewhere'],
  );
  const same = await h.request(`${o.firstBase}/hop/bot${TOKEN}`);
  tt.equal(same.text(), 'first');
  tt.equal(same.url, `${o.firstBase}/same/hop/bot${TOKEN}`, 'a same-origin redirect may carry the token');
});
