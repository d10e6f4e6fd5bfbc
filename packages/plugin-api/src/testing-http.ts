/**
 * The test host's outbound client: the `OutboundHttp` contract over Node's global `fetch`, for
 * tests that talk to loopback fakes. It follows redirects by hand (for `fetch` too), applies the
 * timeouts and the response size cap, keeps credentials on their origin exactly as the service's
 * client does (see the manifest's `credentialHeaders`) and throws `OutboundError`s with the same
 * codes. It does not apply the service's address policy (everything is allowed) unless `refuse`
 * says so.
 */
import dns from 'node:dns';
import net from 'node:net';
import { type CredentialBinding, Credentials, UNBOUND } from './credentials.ts';
import {
  OUTBOUND_DNS,
  OUTBOUND_NETWORK,
  OUTBOUND_REDIRECTS,
  OUTBOUND_REFUSED,
  OUTBOUND_TIMEOUT,
  OUTBOUND_TOO_LARGE,
  OutboundError,
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
  /**
   * The credentials this client keeps on their origin: declared header names and secret values.
   * The test host binds the client it gives each instance to the manifest's `credentialHeaders`
   * and the instance's `Secret()` values (and bot token), as the service does.
   */
  credentials?: CredentialBinding;
}

/** The test host's client: an `OutboundHttp` that can also be bound to an instance's credentials. */
export interface TestHttp extends OutboundHttp {
  /** The same client (same options) keeping `binding`'s credentials on their origin. */
  bind(binding: CredentialBinding): OutboundHttp;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** An outbound client for tests: see the module comment. */
export function createTestHttp(opts: TestHttpOptions = {}): TestHttp {
  const base = client(opts, opts.credentials ? new Credentials(opts.credentials) : UNBOUND);
  // Not enumerable: a test that spreads this client to override a method (`{ ...http, resolveAllowed }`)
  // gets a plain client that is used as it is, rather than one whose bind() would drop the override.
  return Object.defineProperty(base, 'bind', {
    value: (binding: CredentialBinding) => client(opts, new Credentials(binding)),
    enumerable: false,
  }) as TestHttp;
}

function client(opts: TestHttpOptions, creds: Credentials): OutboundHttp {
  const refuse = opts.refuse ?? (() => false);
  const timeoutDefault = opts.defaults?.timeoutMs ?? 15_000;
  const maxBytesDefault = opts.defaults?.maxResponseBytes ?? 4 * 1024 * 1024;
  const maxRedirectsDefault = opts.defaults?.maxRedirects ?? 5;

  const bare = (host: string) => host.replace(/^\[(.*)\]$/, '$1');
  function check(url: URL): void {
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      throw new OutboundError(OUTBOUND_REFUSED, `refused ${url.protocol} URL: only http and https are allowed`);
    if (refuse(bare(url.hostname)))
      throw new OutboundError(
        OUTBOUND_REFUSED,
        `refused to connect to ${bare(url.hostname)} (refused by the test host)`,
      );
  }

  function translate(err: unknown, url: URL, timer: AbortSignal, outer?: AbortSignal | null): unknown {
    if (err instanceof OutboundError) return err;
    if (outer?.aborted) return outer.reason ?? err;
    if (timer.aborted) return new OutboundError(OUTBOUND_TIMEOUT, `request to ${url.host} timed out`, { cause: err });
    const code = (err as { cause?: { code?: string } })?.cause?.code;
    if (code === 'ENOTFOUND' || code === 'EAI_AGAIN')
      return new OutboundError(OUTBOUND_DNS, `cannot resolve ${url.hostname}: ${code}`, { cause: err });
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
        if (size > max) {
          await reader.cancel();
          throw new OutboundError(OUTBOUND_TOO_LARGE, `response from ${url.host} exceeds ${max} bytes`);
        }
        chunks.push(value);
      }
    }
    const out = new Uint8Array(size);
    let at = 0;
    for (const c of chunks) {
      out.set(c, at);
      at += c.byteLength;
    }
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
      if (!Object.keys(headers).some((k) => k.toLowerCase() === 'content-type'))
        headers['content-type'] = 'application/json';
    }
    let method = (init.method ?? (body !== undefined ? 'POST' : 'GET')).toUpperCase();
    const timer = AbortSignal.timeout(init.timeoutMs ?? timeoutDefault);
    const signal = init.signal ? AbortSignal.any([init.signal, timer]) : timer;
    let url = start;
    try {
      for (let n = 0; ; n++) {
        check(url);
        const res = await fetch(url, {
          method,
          headers,
          body: body as RequestInit['body'],
          redirect: 'manual',
          signal,
        });
        const location = res.headers.get('location');
        if (!REDIRECTS.has(res.status) || location === null) {
          const bytes = await readCapped(res, maxBytes, url);
          const flat: Record<string, string> = {};
          res.headers.forEach((v, k) => {
            flat[k] = v;
          });
          return {
            status: res.status,
            headers: flat,
            url: url.href,
            body: bytes,
            text: () => new TextDecoder().decode(bytes),
            json: <J>() => JSON.parse(new TextDecoder().decode(bytes)) as J,
          };
        }
        await res.body?.cancel();
        if (n >= maxRedirects) {
          throw new OutboundError(
            OUTBOUND_REDIRECTS,
            maxRedirects === 0
              ? `${url.host} answered a redirect and redirects are refused`
              : `too many redirects (limit ${maxRedirects}) starting at ${start.host}`,
          );
        }
        ({ url, method, body, headers } = nextHop(
          url,
          location,
          res.status,
          method,
          body,
          headers,
          init.credentialHeaders,
        ));
      }
    } catch (err) {
      throw translate(err, url, timer, init.signal);
    }
  }

  /**
   * The next request after a redirect answer, as the service's client makes it; throws when it must not be
   * followed.
   */
  function nextHop<B>(
    url: URL,
    location: string,
    status: number,
    method: string,
    body: B | undefined,
    headers: Record<string, string>,
    extra?: readonly string[],
  ) {
    const next = new URL(location, url);
    check(next);
    if ((status === 303 && method !== 'HEAD') || ((status === 301 || status === 302) && method === 'POST')) {
      method = 'GET';
      body = undefined;
      headers = Object.fromEntries(
        Object.entries(headers).filter(([k]) => !/^content-(type|length|encoding)$/i.test(k)),
      );
    }
    const refusal = creds.redirectRefusal(url, next);
    if (refusal) throw new OutboundError(OUTBOUND_REDIRECTS, refusal);
    return { url: next, method, body, headers: creds.forHop(headers, url, next, extra) };
  }

  const testFetch = (async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const req = new Request(input, init);
    const start = new URL(req.url);
    let url = start;
    const extra = (init as { credentialHeaders?: string[] } | undefined)?.credentialHeaders;
    const maxRedirects = (init as { maxRedirects?: number } | undefined)?.maxRedirects ?? maxRedirectsDefault;
    const timer = AbortSignal.timeout((init as { timeoutMs?: number } | undefined)?.timeoutMs ?? timeoutDefault);
    const outer = init?.signal ?? (input instanceof Request ? input.signal : undefined);
    const signal = outer ? AbortSignal.any([outer, timer]) : timer;
    try {
      let method = req.method;
      let headers: Record<string, string> = Object.fromEntries(req.headers);
      let body: Uint8Array | undefined = req.body ? new Uint8Array(await req.arrayBuffer()) : undefined;
      // Redirects by hand, like the service's client: Node's own fetch would carry declared credential headers along.
      for (let n = 0; ; n++) {
        check(url);
        const res = await fetch(url, {
          method,
          headers,
          body: body as RequestInit['body'],
          redirect: 'manual',
          signal,
        });
        const location = res.headers.get('location');
        if (!REDIRECTS.has(res.status) || location === null || req.redirect === 'manual') {
          Object.defineProperty(res, 'url', { value: url.href });
          Object.defineProperty(res, 'redirected', { value: n > 0 });
          return res;
        }
        await res.body?.cancel();
        if (req.redirect === 'error')
          throw new OutboundError(OUTBOUND_REDIRECTS, `${url.host} answered a redirect and redirects are refused`);
        if (n >= maxRedirects)
          throw new OutboundError(
            OUTBOUND_REDIRECTS,
            `too many redirects (limit ${maxRedirects}) starting at ${start.host}`,
          );
        ({ url, method, body, headers } = nextHop(url, location, res.status, method, body, headers, extra));
      }
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
        throw new OutboundError(
          OUTBOUND_DNS,
          `cannot resolve ${name}: ${(err as { code?: string }).code ?? (err as Error).message}`,
          { cause: err },
        );
      }
    }
    if (refuse(name) || refuse(found.address))
      throw new OutboundError(
        OUTBOUND_REFUSED,
        `refused to connect to ${name}: ${found.address} (refused by the test host)`,
      );
    return found;
  }

  return { request, fetch: testFetch, resolveAllowed };
}
