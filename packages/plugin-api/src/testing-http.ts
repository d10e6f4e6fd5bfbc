/**
 * The test host's outbound client: the `OutboundHttp` contract over Node's global `fetch`, for
 * tests that talk to loopback fakes. It follows redirects by hand, applies the timeouts and the
 * response size cap, and throws `OutboundError`s with the same codes as the service's client. It
 * does not apply the service's address policy (everything is allowed) unless `refuse` says so.
 */
import dns from 'node:dns';
import net from 'node:net';
import {
  OutboundError, OUTBOUND_DNS, OUTBOUND_NETWORK, OUTBOUND_REDIRECTS, OUTBOUND_REFUSED, OUTBOUND_TIMEOUT, OUTBOUND_TOO_LARGE,
} from './errors.ts';
import type { OutboundHttp, OutboundRequestInit, OutboundResponse } from './index.ts';

export interface TestHttpOptions {
  /**
   * Destinations to refuse with `OUTBOUND_REFUSED`, as the service does for addresses its policy
   * forbids: return true for a host name or address to refuse it. Default: refuse nothing.
   */
  refuse?: (host: string) => boolean;
  /** Defaults for the per-request limits (15 s total, 4 MiB, 5 redirects unless given). */
  defaults?: Pick<OutboundRequestInit, 'timeoutMs' | 'maxResponseBytes' | 'maxRedirects'>;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const ORIGIN_BOUND = ['authorization', 'cookie', 'proxy-authorization'];

/** An outbound client for tests: see the module comment. */
export function createTestHttp(opts: TestHttpOptions = {}): OutboundHttp {
  const refuse = opts.refuse ?? (() => false);
  const timeoutDefault = opts.defaults?.timeoutMs ?? 15_000;
  const maxBytesDefault = opts.defaults?.maxResponseBytes ?? 4 * 1024 * 1024;
  const maxRedirectsDefault = opts.defaults?.maxRedirects ?? 5;

  const bare = (host: string) => host.replace(/^\[(.*)\]$/, '$1');
  function check(url: URL): void {
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new OutboundError(OUTBOUND_REFUSED, `refused ${url.protocol} URL: only http and https are allowed`);
    if (refuse(bare(url.hostname))) throw new OutboundError(OUTBOUND_REFUSED, `refused to connect to ${bare(url.hostname)} (refused by the test host)`);
  }

  function translate(err: unknown, url: URL, timer: AbortSignal, outer?: AbortSignal | null): unknown {
    if (err instanceof OutboundError) return err;
    if (outer?.aborted) return outer.reason ?? err;
    if (timer.aborted) return new OutboundError(OUTBOUND_TIMEOUT, `request to ${url.host} timed out`, { cause: err });
    const code = (err as { cause?: { code?: string } })?.cause?.code;
    if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return new OutboundError(OUTBOUND_DNS, `cannot resolve ${url.hostname}: ${code}`, { cause: err });
    const detail = (err as { cause?: Error })?.cause?.message ?? (err as Error)?.message ?? String(err);
    return new OutboundError(OUTBOUND_NETWORK, `request to ${url.host} failed: ${detail}`, { cause: err });
  }

  async function readCapped(res: Response, max: number, url: URL): Promise<Uint8Array> {
    const chunks: Uint8Array[] = [];
    let size = 0;
    if (res.body) {
      const reader = res.body.getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        size += value.byteLength;
        if (size > max) { await reader.cancel(); throw new OutboundError(OUTBOUND_TOO_LARGE, `response from ${url.host} exceeds ${max} bytes`); }
        chunks.push(value);
      }
    }
    const out = new Uint8Array(size);
    let at = 0;
    for (const c of chunks) { out.set(c, at); at += c.byteLength; }
    return out;
  }

  async function request(input: string | URL, init: OutboundRequestInit = {}): Promise<OutboundResponse> {
    const start = new URL(input);
    const maxRedirects = init.maxRedirects ?? maxRedirectsDefault;
    const maxBytes = init.maxResponseBytes ?? maxBytesDefault;
    let headers: Record<string, string> = { ...(init.headers ?? {}) };
    let body: string | Uint8Array | undefined = init.body;
    if (init.json !== undefined) {
      body = JSON.stringify(init.json);
      if (!Object.keys(headers).some((k) => k.toLowerCase() === 'content-type')) headers['content-type'] = 'application/json';
    }
    let method = (init.method ?? (body !== undefined ? 'POST' : 'GET')).toUpperCase();
    const timer = AbortSignal.timeout(init.timeoutMs ?? timeoutDefault);
    const signal = init.signal ? AbortSignal.any([init.signal, timer]) : timer;
    let url = start;
    try {
      for (let n = 0; ; n++) {
        check(url);
        const res = await fetch(url, { method, headers, body: body as RequestInit['body'], redirect: 'manual', signal });
        const location = res.headers.get('location');
        if (!REDIRECTS.has(res.status) || location === null) {
          const bytes = await readCapped(res, maxBytes, url);
          const flat: Record<string, string> = {};
          res.headers.forEach((v, k) => { flat[k] = v; });
          return {
            status: res.status, headers: flat, url: url.href, body: bytes,
            text: () => new TextDecoder().decode(bytes),
            json: <J>() => JSON.parse(new TextDecoder().decode(bytes)) as J,
          };
        }
        await res.body?.cancel();
        if (n >= maxRedirects) {
          throw new OutboundError(OUTBOUND_REDIRECTS, maxRedirects === 0
            ? `${url.host} answered a redirect and redirects are refused`
            : `too many redirects (limit ${maxRedirects}) starting at ${start.host}`);
        }
        const next = new URL(location, url);
        if ((res.status === 303 && method !== 'HEAD') || ((res.status === 301 || res.status === 302) && method === 'POST')) {
          method = 'GET';
          body = undefined;
          headers = Object.fromEntries(Object.entries(headers).filter(([k]) => !/^content-(type|length|encoding)$/i.test(k)));
        }
        if (next.origin !== url.origin) headers = Object.fromEntries(Object.entries(headers).filter(([k]) => !ORIGIN_BOUND.includes(k.toLowerCase())));
        url = next;
      }
    } catch (err) {
      throw translate(err, url, timer, init.signal);
    }
  }

  const testFetch = (async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const url = new URL(typeof input === 'string' || input instanceof URL ? input : input.url);
    check(url);
    const timer = AbortSignal.timeout(timeoutDefault);
    const outer = init?.signal ?? (input instanceof Request ? input.signal : undefined);
    try {
      return await fetch(input, { ...init, signal: outer ? AbortSignal.any([outer, timer]) : timer });
    } catch (err) {
      throw translate(err, url, timer, outer);
    }
  }) as typeof fetch;

  async function resolveAllowed(host: string): Promise<{ address: string; family: 4 | 6 }> {
    const name = bare(host);
    let found: { address: string; family: 4 | 6 };
    if (net.isIP(name)) found = { address: name, family: net.isIP(name) as 4 | 6 };
    else {
      try {
        const a = await dns.promises.lookup(name);
        found = { address: a.address, family: a.family as 4 | 6 };
      } catch (err) {
        throw new OutboundError(OUTBOUND_DNS, `cannot resolve ${name}: ${(err as { code?: string }).code ?? (err as Error).message}`, { cause: err });
      }
    }
    if (refuse(name) || refuse(found.address)) throw new OutboundError(OUTBOUND_REFUSED, `refused to connect to ${name}: ${found.address} (refused by the test host)`);
    return found;
  }

  return { request, fetch: testFetch, resolveAllowed };
}
