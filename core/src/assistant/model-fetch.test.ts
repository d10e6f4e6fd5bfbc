import http from 'node:http';
import type { Test } from 'tap';
import t from 'tap';
import { waitFor } from '../../../test/helpers/peers.ts';
import { createModelTransport } from './model-fetch.ts';
import type { ChunkSource } from './model-stream.ts';

/** A loopback server answering with `handler`; counts connections and closed responses. */
async function server(tt: Test, handler: (req: http.IncomingMessage, res: http.ServerResponse, body: string) => void) {
  const stats = {
    connections: 0,
    closedEarly: 0,
    finished: 0,
    bodies: [] as string[],
    auth: [] as (string | undefined)[],
  };
  const srv = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => {
      stats.bodies.push(body);
      stats.auth.push(req.headers.authorization);
      res.on('close', () => {
        if (!res.writableFinished) stats.closedEarly++;
      });
      res.on('finish', () => {
        stats.finished++;
      });
      handler(req, res, body);
    });
  });
  srv.on('connection', () => {
    stats.connections++;
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  tt.teardown(() => {
    srv.closeAllConnections();
    srv.close();
  });
  return { url: `http://127.0.0.1:${(srv.address() as { port: number }).port}/v1/chat/completions`, stats };
}

/**
 * What the server must see is waited for (up to 5 s), not slept for: a process held on a loaded machine runs its late
 * timer before the socket events already received.
 */
const until = (what: string, done: () => boolean) => waitFor(what, done, 5_000);

async function transport(tt: Test) {
  const tr = await createModelTransport({ headersTimeoutMs: 5000, bodyTimeoutMs: 5000 });
  tt.teardown(() => tr.close());
  return tr;
}

/** Reads a ChunkSource to its end. */
const readAll = (src: ChunkSource) =>
  new Promise<string>((resolve, reject) => {
    let s = '';
    src.start({
      data: (c) => {
        s += c.toString('utf8');
      },
      end: () => resolve(s),
      error: reject,
    });
  });

const post = {
  method: 'POST',
  headers: { authorization: 'Bearer k', 'content-type': 'application/json' },
  body: '{"stream":true}',
};

t.test('a 2xx answer resolves at its headers; its body comes as chunks, queued until read', async (t) => {
  const { url, stats } = await server(t, (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'x-request-id': 'req_1' });
    res.write('data: one\n\n');
    setTimeout(() => res.end('data: two\n\n'), 30);
  });
  const tr = await transport(t);
  const res = await tr.fetch(url, post);
  t.equal(res.status, 200);
  t.equal(res.headers.get('x-request-id'), 'req_1');
  t.same(stats.bodies, ['{"stream":true}'], 'the body was sent');
  t.same(stats.auth, ['Bearer k'], 'the headers were sent');
  const src = tr.bodyOf(res)!;
  t.ok(src, 'the body is reachable once');
  t.equal(tr.bodyOf(res), undefined);
  await new Promise((r) => setTimeout(r, 10));
  t.equal(await readAll(src), 'data: one\n\ndata: two\n\n', 'a chunk that came before reading is not lost');
});

t.test('an error status resolves with the whole error body, as the SDK expects', async (t) => {
  const { url } = await server(t, (_req, res) => {
    res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '7' });
    res.end(JSON.stringify({ error: { message: 'Rate limit reached.', type: 'requests' } }));
  });
  const tr = await transport(t);
  const res = await tr.fetch(url, post);
  t.equal(res.status, 429);
  t.equal(res.headers.get('retry-after'), '7');
  t.same(await res.json(), { error: { message: 'Rate limit reached.', type: 'requests' } });
  t.equal(tr.bodyOf(res), undefined);
});

t.test('an abort before the headers rejects and closes the request', async (t) => {
  const { url, stats } = await server(t, () => {
    /* never answers */
  });
  const tr = await transport(t);
  const ctl = new AbortController();
  const pending = tr.fetch(url, { ...post, signal: ctl.signal });
  setTimeout(() => ctl.abort(), 50);
  await t.rejects(pending, { name: 'AbortError' });
  await until('the request closed', () => stats.closedEarly > 0).catch(() => {});
  t.equal(stats.closedEarly, 1, 'the server saw the request go away');
});

t.test('destroy stops a streaming response at once; discard lets it finish and reuses the connection', async (t) => {
  let n = 0;
  const { url, stats } = await server(t, (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write('data: first\n\n');
    // The first answer never ends by itself; the others end shortly.
    if (++n > 1) setTimeout(() => res.end('data: [DONE]\n\n'), 20);
  });
  const tr = await transport(t);
  const a = tr.bodyOf(await tr.fetch(url, post))!;
  const got: string[] = [];
  a.start({ data: (c) => got.push(c.toString()), end: () => got.push('end'), error: () => got.push('error') });
  await until('the first chunk', () => got.length > 0);
  a.destroy();
  await until('the request closed', () => stats.closedEarly > 0).catch(() => {});
  await new Promise((r) => setTimeout(r, 50));
  t.same(got, ['data: first\n\n'], 'nothing is delivered after destroy');
  t.equal(stats.closedEarly, 1, 'the upstream request was aborted');

  const b = tr.bodyOf(await tr.fetch(url, post))!;
  b.discard();
  await until('the discarded answer finished', () => stats.finished > 0);
  await new Promise((r) => setTimeout(r, 50));
  const c = tr.bodyOf(await tr.fetch(url, post))!;
  t.match(await readAll(c), /data: \[DONE\]/);
  t.equal(stats.connections, 2, 'the discarded response ran to its end and its connection was reused');
});

t.test('the connection failing mid-body is an error for the reader', async (t) => {
  const { url } = await server(t, (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write('data: one\n\n');
    setTimeout(() => res.socket?.destroy(), 20);
  });
  const tr = await transport(t);
  const src = tr.bodyOf(await tr.fetch(url, post))!;
  await t.rejects(readAll(src));
});
