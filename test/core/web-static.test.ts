/**
 * The web client's files as the service serves them (core/src/web): the page revalidated on every load and
 * answering client-side routes, hashed assets cached for a year, gzip when the browser takes it, 304 for what
 * the browser holds, a missing asset a 404 (never the page), nothing outside the build folder, and the API's
 * unknown paths still problem details. Needs the client built (`npm run build:web`; `npm ci` builds it).
 */
import http from 'node:http';
import zlib from 'node:zlib';
import t from 'tap';
import { acceptsGzip, matches } from '../../core/src/web/static.ts';
import { startService } from '../helpers/service.ts';
import { ensureBuilt } from '../web/browser.ts';

ensureBuilt();

/** A GET (or HEAD) as a browser sends it, with the raw body (no transparent decompression). */
function get(
  url: string,
  headers: Record<string, string> = {},
  method = 'GET',
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

t.test('the client is served as browsers expect', async (t) => {
  const s = await startService();
  t.teardown(() => s.stop());

  const home = await get(`${s.url}/`);
  t.equal(home.status, 200);
  t.match(home.headers['content-type'], /^text\/html/);
  t.equal(home.headers['cache-control'], 'no-cache', 'the page is revalidated at every load');
  const html = home.body.toString();
  t.match(html, /<div id="app">/);
  const script = html.match(/src="\/(assets\/[^"]+\.js)"/)?.[1];
  t.ok(script, `the page names its script (${script})`);

  const route = await get(`${s.url}/trackers/some-id?x=1`);
  t.equal(route.status, 200, 'a client-side route answers with the page');
  t.equal(route.body.toString(), html);

  const js = await get(`${s.url}/${script}`);
  t.equal(js.status, 200);
  t.match(js.headers['content-type'], /^text\/javascript/);
  t.equal(js.headers['cache-control'], 'public, max-age=31536000, immutable', 'a hashed asset is kept a year');
  t.notOk(js.headers['content-encoding'], 'plain for a client that did not ask for gzip');
  t.equal(Number(js.headers['content-length']), js.body.length);

  const zipped = await get(`${s.url}/${script}`, { 'accept-encoding': 'gzip, deflate, br' });
  t.equal(zipped.headers['content-encoding'], 'gzip');
  t.match(zipped.headers.vary, /accept-encoding/i);
  t.ok(zipped.body.length < js.body.length, `gzipped ${zipped.body.length} < ${js.body.length} bytes`);
  t.same(zlib.gunzipSync(zipped.body), js.body, 'the same bytes once unzipped');
  const refused = await get(`${s.url}/${script}`, { 'accept-encoding': 'gzip;q=0, identity' });
  t.notOk(refused.headers['content-encoding'], 'gzip;q=0 means no');

  const again = await get(`${s.url}/${script}`, { 'if-none-match': js.headers.etag! });
  t.equal(again.status, 304, 'what the browser holds is not sent again');
  t.equal(again.body.length, 0);
  const pageAgain = await get(`${s.url}/`, { 'if-none-match': `W/${home.headers.etag}` });
  t.equal(pageAgain.status, 304, 'a weak validator of the page matches too');

  const head = await get(`${s.url}/${script}`, {}, 'HEAD');
  t.equal(head.status, 200);
  t.equal(head.body.length, 0, 'HEAD: headers only');

  const missing = await get(`${s.url}/assets/gone-1234.js`);
  t.equal(missing.status, 404, 'a missing asset is a 404, not the page');
  t.notMatch(missing.body.toString(), /<div id="app">/);

  for (const sneaky of [
    '/assets/../../package.json',
    '/assets/%2e%2e/%2e%2e/package.json',
    '/..%2f..%2fpackage.json',
  ]) {
    const r = await get(`${s.url}${sneaky}`);
    t.notMatch(r.body.toString(), /"name": "herald"/, `${sneaky}: nothing outside the build folder`);
  }

  const api = await s.request('GET', '/api/no-such-thing');
  t.equal(api.status, 404, 'an unknown API path is still a 404');
  t.equal(api.body.code, 'not_found');
});

t.test('Accept-Encoding and If-None-Match are read as HTTP says', async (t) => {
  t.ok(acceptsGzip('gzip'));
  t.ok(acceptsGzip('br, gzip;q=0.5'));
  t.ok(acceptsGzip('*'));
  t.ok(acceptsGzip('GZIP'));
  t.notOk(acceptsGzip(undefined));
  t.notOk(acceptsGzip('br, deflate'));
  t.notOk(acceptsGzip('gzip;q=0'));
  t.notOk(acceptsGzip('gzip; q=0.0'));
  t.ok(acceptsGzip('gzip; q=0.001'));
  t.ok(matches('"abc"', '"abc"'));
  t.ok(matches('"x", W/"abc"', '"abc"'));
  t.ok(matches('*', '"abc"'));
  t.notOk(matches('"abd"', '"abc"'));
  t.notOk(matches(undefined, '"abc"'));
});
