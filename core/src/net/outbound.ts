/**
 * The SSRF-safe outbound HTTP client handed to plugins as `ctx.http`.
 *
 * Every new connection resolves its host once, checks every answer against the address policy
 * and connects to the checked address (the Host header and TLS servername keep the name), so a
 * DNS answer that changes later cannot move an open or pinned connection. Redirects are followed
 * by hand with each hop validated again; timeouts and a response size cap always apply.
 *
 * Credentials stay on their origin: a redirect to another origin drops `authorization`, `cookie`,
 * `proxy-authorization` and, for a client bound to a plugin instance (`bind()`), the headers its
 * manifest declares in `credentialHeaders` and any header carrying one of its secret values; such
 * a redirect is refused outright when its URL carries a secret value.
 */

import dns from 'node:dns';
import { STATUS_CODES } from 'node:http';
import net from 'node:net';
import { pipeline } from 'node:stream';
import zlib from 'node:zlib';
import {
  type CredentialBinding,
  Credentials,
  OUTBOUND_DNS,
  OUTBOUND_NETWORK,
  OUTBOUND_REDIRECTS,
  OUTBOUND_REFUSED,
  OUTBOUND_TIMEOUT,
  OUTBOUND_TOO_LARGE,
  OutboundError,
  UNBOUND,
} from '@herald/plugin-api';
import type { Agent, Dispatcher } from 'undici';
import type { OutboundHttp, OutboundRequestInit, OutboundResponse } from '../plugin-api/index.ts';
import { type AddressPolicy, createAddressPolicy } from './address-policy.ts';
import { hostKey, splitOutboundAllow } from './instance-allow.ts';

export type Resolver = (host: string) => Promise<{ address: string; family: 4 | 6 }[]>;

export interface OutboundOptions {
  /** CIDR ranges (or single addresses) allowed even though the policy would refuse them. */
  allowCidrs: string[];
  /** Host name resolver; default the system resolver (`dns.lookup`, all answers). */
  resolver?: Resolver;
  userAgent?: string;
  /** Defaults for the per-request limits. */
  defaults?: Partial<Pick<OutboundRequestInit, 'timeoutMs' | 'connectTimeoutMs' | 'maxResponseBytes' | 'maxRedirects'>>;
}

/** Errors of the outbound client: the contract's `OutboundError`, `code` one of its `OUTBOUND_*` constants. */
export { OutboundError };

/** An OutboundHttp that can also release its pooled connections and be bound to an instance's credentials. */
export interface OutboundClient extends OutboundHttp {
  close(): Promise<void>;
  /**
   * A view of this client for one plugin instance: the same connection pool, policy and limits,
   * with the instance's credential headers and secret values kept on their origin across
   * redirects. Build one per instance (it compiles the binding once), not per request.
   * `allow`: the instance's own outbound allow list (CIDRs, addresses or host names, checked
   * beforehand), reachable by this view only, on top of the service-wide allowance.
   */
  bind(binding: CredentialBinding, allow?: readonly string[] | null): OutboundHttp;
}

export type { CredentialBinding };

/** `http` bound to `binding` when it can be (the service's client); any other OutboundHttp (a test double) as it is. */
export function bindCredentials(
  http: OutboundHttp,
  binding: CredentialBinding,
  allow?: readonly string[] | null,
): OutboundHttp {
  const bind = (http as Partial<OutboundClient>).bind;
  return typeof bind === 'function' ? bind.call(http, binding, allow) : http;
}

/**
 * `fetch` init extended with the outbound limits and the request's credential headers
 * (non-standard fields, ignored by other fetches), for callers such as streaming LLM clients that
 * need a longer total timeout.
 */
export type OutboundFetchInit = RequestInit &
  Pick<
    OutboundRequestInit,
    'timeoutMs' | 'connectTimeoutMs' | 'maxResponseBytes' | 'maxRedirects' | 'credentialHeaders'
  >;

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

type Undici = typeof import('undici');
let undici: Promise<Undici> | undefined;
/** undici loads with the first outbound request: a service that makes none never carries it in memory. */
const loadUndici = (): Promise<Undici> => (undici ??= import('undici'));

const systemResolver: Resolver = async (host) => {
  const answers = await dns.promises.lookup(host, { all: true, order: 'verbatim' });
  return answers.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
};

interface Limits {
  timeoutMs: number;
  connectTimeoutMs: number;
  maxResponseBytes: number;
  maxRedirects: number;
}

interface Hop {
  method: string;
  headers: Record<string, string>;
  body?: string | Uint8Array;
  /** What counts as a credential of this request: the instance's binding and the request's own names. */
  creds: Credentials;
  extra?: readonly string[];
  /** Which internal addresses this request may reach: the service's allowance, plus an instance's own. */
  allow: Allowance;
}

/** The address policy a view checks with: the service-wide one, or it merged with an instance's allow list. */
interface Allowance {
  /** Identifies the list (connection pools are kept apart per list): '' for the service-wide one. */
  key: string;
  policy: AddressPolicy;
  /** Host names whose addresses are reachable whatever they are. */
  hosts: ReadonlySet<string>;
}

/** Creates the outbound client. `allowCidrs` entries are validated here (a bad entry throws). */
export function createOutboundHttp(opts: OutboundOptions): OutboundClient {
  const policy = createAddressPolicy(opts.allowCidrs);
  const serviceWide: Allowance = { key: '', policy, hosts: new Set() };
  const allowances = new Map<string, Allowance>();
  /** The allowance of an instance's list (built once per distinct list); entries that do not parse are ignored. */
  function allowanceFor(entries: readonly string[] | null | undefined): Allowance {
    const { cidrs, hosts } = splitOutboundAllow(entries);
    if (!cidrs.length && !hosts.length) return serviceWide;
    const key = JSON.stringify([[...cidrs].sort(), [...hosts].sort()]);
    let a = allowances.get(key);
    if (!a) {
      let merged: AddressPolicy;
      try {
        merged = createAddressPolicy([...opts.allowCidrs, ...cidrs]);
      } catch {
        merged = policy;
      }
      a = { key, policy: merged, hosts: new Set(hosts) };
      allowances.set(key, a);
    }
    return a;
  }
  const resolver = opts.resolver ?? systemResolver;
  const userAgent = opts.userAgent ?? 'Herald/0.1';
  const base: Limits = {
    timeoutMs: opts.defaults?.timeoutMs ?? 15_000,
    connectTimeoutMs: opts.defaults?.connectTimeoutMs ?? 5_000,
    maxResponseBytes: opts.defaults?.maxResponseBytes ?? 4 * 1024 * 1024,
    maxRedirects: opts.defaults?.maxRedirects ?? 5,
  };
  const limitsOf = (o: Partial<Limits>): Limits => ({
    timeoutMs: o.timeoutMs ?? base.timeoutMs,
    connectTimeoutMs: o.connectTimeoutMs ?? base.connectTimeoutMs,
    maxResponseBytes: o.maxResponseBytes ?? base.maxResponseBytes,
    maxRedirects: o.maxRedirects ?? base.maxRedirects,
  });

  /** Resolves once and checks every answer; the first answer is the one connected to. */
  async function resolveAllowed(
    host: string,
    timeoutMs = base.connectTimeoutMs,
    allow: Allowance = serviceWide,
  ): Promise<{ address: string; family: 4 | 6 }> {
    const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
    let answers: { address: string; family: 4 | 6 }[];
    if (net.isIP(bare)) answers = [{ address: bare, family: net.isIP(bare) === 6 ? 6 : 4 }];
    else {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new OutboundError(OUTBOUND_TIMEOUT, `resolving ${bare} timed out after ${timeoutMs} ms`)),
          timeoutMs,
        );
      });
      try {
        answers = await Promise.race([resolver(bare), timeout]);
      } catch (err) {
        if (err instanceof OutboundError) throw err;
        throw new OutboundError(
          OUTBOUND_DNS,
          `cannot resolve ${bare}: ${(err as { code?: string }).code ?? (err as Error).message}`,
          { cause: err },
        );
      } finally {
        clearTimeout(timer);
      }
    }
    if (!answers.length) throw new OutboundError(OUTBOUND_DNS, `${bare} has no address`);
    // A host name on the instance's own list may resolve to anything (a NAS's name on the LAN).
    const named = !net.isIP(bare) && allow.hosts.has(hostKey(bare));
    for (const a of answers) {
      const reason = named ? (net.isIP(a.address) ? null : 'not an IP address') : allow.policy.refusal(a.address);
      if (reason)
        throw new OutboundError(
          OUTBOUND_REFUSED,
          `refused to connect to ${bare}: ${a.address} is ${reason} (allow it with an outbound CIDR ` +
            `allow-list entry, or an administrator's outbound allow list on this provider or target)`,
        );
    }
    return allow.policy.normalize(answers[0]!.address);
  }

  // One pooled agent per connect timeout and allow list (almost always just the default one): a
  // connection an instance's own list let through is never reused by another instance.
  const agents = new Map<string, Agent>();
  function dispatcherFor(u: Undici, connectTimeoutMs: number, allow: Allowance): Dispatcher {
    const agentKey = `${connectTimeoutMs}|${allow.key}`;
    let agent = agents.get(agentKey);
    if (!agent) {
      const connector = u.buildConnector({ timeout: connectTimeoutMs, allowH2: false });
      agent = new u.Agent({
        allowH2: false,
        connect(options, callback) {
          const name = options.hostname.replace(/^\[(.*)\]$/, '$1');
          resolveAllowed(name, connectTimeoutMs, allow).then(
            ({ address }) => {
              // Connect to the checked address; TLS still verifies the certificate against the name.
              const servername =
                options.protocol === 'https:' && !net.isIP(name) ? options.servername || name : undefined;
              connector({ ...options, hostname: address, servername }, callback);
            },
            (err: Error) => callback(err, null),
          );
        },
      });
      agents.set(agentKey, agent);
    }
    return agent;
  }

  function checkScheme(url: URL): void {
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      throw new OutboundError(OUTBOUND_REFUSED, `refused ${url.protocol} URL: only http and https are allowed`);
  }

  /** Sends `hop` to `start`, following redirects by hand; returns the final response (body unread). */
  async function exchange(start: URL, hop: Hop, limits: Limits, signal: AbortSignal, redirect: RequestRedirect) {
    let url = start;
    let { method, headers, body } = hop;
    const { creds, extra } = hop;
    const u = await loadUndici();
    for (let n = 0; ; n++) {
      checkScheme(url);
      const res = await u.request(url, {
        method: method as Dispatcher.HttpMethod,
        headers,
        body,
        signal,
        dispatcher: dispatcherFor(u, limits.connectTimeoutMs, hop.allow),
      });
      const location = res.headers.location;
      if (!REDIRECT_STATUSES.has(res.statusCode) || typeof location !== 'string' || redirect === 'manual')
        return { res, url, redirected: n > 0 };
      await res.body.dump();
      if (redirect === 'error')
        throw new OutboundError(OUTBOUND_REDIRECTS, `${url.host} answered a redirect and redirects are refused`);
      if (n >= limits.maxRedirects)
        throw new OutboundError(
          OUTBOUND_REDIRECTS,
          `too many redirects (limit ${limits.maxRedirects}) starting at ${start.host}`,
        );
      const next = new URL(location, url);
      checkScheme(next);
      if (
        (res.statusCode === 303 && method !== 'HEAD') ||
        ((res.statusCode === 301 || res.statusCode === 302) && method === 'POST')
      ) {
        method = 'GET';
        body = undefined;
        headers = Object.fromEntries(
          Object.entries(headers).filter(([k]) => !/^content-(type|length|encoding)$/i.test(k)),
        );
      }
      const refusal = creds.redirectRefusal(url, next);
      if (refusal) throw new OutboundError(OUTBOUND_REDIRECTS, refusal);
      headers = creds.forHop(headers, url, next, extra);
      url = next;
    }
  }

  /** Runs `work` under the total timeout, translating low-level failures into OutboundErrors. */
  async function guarded<T>(
    url: URL,
    limits: Limits,
    outer: AbortSignal | undefined | null,
    work: (signal: AbortSignal, done: () => void) => Promise<T>,
  ): Promise<T> {
    // One controller aborts the work, on the timeout or when the caller's signal aborts. The
    // caller's signal is followed by a listener removed when the work is done, not through
    // AbortSignal.any, whose composite signal costs a send about as much as the rest of this
    // function (it is tracked with weak references until collected).
    const ac = new AbortController();
    const handle = setTimeout(
      () =>
        ac.abort(new OutboundError(OUTBOUND_TIMEOUT, `request to ${url.host} timed out after ${limits.timeoutMs} ms`)),
      limits.timeoutMs,
    );
    // A fetch body nobody reads keeps this timer until it fires; it must not keep the process alive.
    handle.unref();
    const onOuter = () => ac.abort(outer!.reason);
    if (outer) {
      if (outer.aborted) onOuter();
      else outer.addEventListener('abort', onOuter, { once: true });
    }
    const done = () => {
      clearTimeout(handle);
      outer?.removeEventListener('abort', onOuter);
    };
    try {
      return await work(ac.signal, done);
    } catch (err) {
      done();
      throw translate(err, url, ac.signal, outer);
    }
  }

  async function request(
    input: string | URL,
    init: OutboundRequestInit = {},
    creds: Credentials = UNBOUND,
    allow: Allowance = serviceWide,
  ): Promise<OutboundResponse> {
    const url = new URL(input);
    const limits = limitsOf(init);
    const headers = withDefaults(init.headers ?? {}, userAgent);
    let body = init.body;
    if (init.json !== undefined) {
      body = JSON.stringify(init.json);
      if (!hasHeader(headers, 'content-type')) headers['content-type'] = 'application/json';
    }
    const hop: Hop = {
      method: (init.method ?? (body !== undefined ? 'POST' : 'GET')).toUpperCase(),
      headers,
      body,
      creds,
      extra: init.credentialHeaders,
      allow,
    };
    return guarded(url, limits, init.signal, async (signal, done) => {
      const { res, url: finalUrl } = await exchange(url, hop, limits, signal, 'follow');
      const bytes = await readCapped(decoded(res), limits.maxResponseBytes, finalUrl);
      done();
      const flat: Record<string, string> = {};
      for (const [k, v] of Object.entries(res.headers))
        if (v !== undefined) flat[k] = Array.isArray(v) ? v.join(', ') : v;
      return {
        status: res.statusCode,
        headers: flat,
        url: finalUrl.href,
        body: bytes,
        text: () => new TextDecoder().decode(bytes),
        json: <J>() => JSON.parse(new TextDecoder().decode(bytes)) as J,
      };
    });
  }

  const safeFetch = async (
    input: string | URL | Request,
    init?: RequestInit,
    creds: Credentials = UNBOUND,
    allow: Allowance = serviceWide,
  ): Promise<Response> => {
    const req = new Request(input, init);
    const url = new URL(req.url);
    const limits = limitsOf((init ?? {}) as OutboundFetchInit);
    const headers = withDefaults(Object.fromEntries(req.headers), userAgent);
    const body = req.body ? new Uint8Array(await req.arrayBuffer()) : undefined;
    const hop: Hop = {
      method: req.method,
      headers,
      body,
      creds,
      extra: (init as OutboundFetchInit | undefined)?.credentialHeaders,
      allow,
    };
    const outer = init?.signal ?? (input instanceof Request ? input.signal : undefined);
    return guarded(url, limits, outer, async (signal, done) => {
      const { res, url: finalUrl, redirected } = await exchange(url, hop, limits, signal, req.redirect);
      const responseHeaders = new Headers();
      for (const [k, v] of Object.entries(res.headers))
        for (const item of Array.isArray(v) ? v : v === undefined ? [] : [v]) responseHeaders.append(k, item);
      let stream: ReadableStream<Uint8Array> | null = null;
      if (NULL_BODY_STATUSES.has(res.statusCode) || req.method === 'HEAD') {
        await res.body.dump();
        done();
      } else {
        stream = toWebStream(
          cappedChunks(decoded(res), limits.maxResponseBytes, finalUrl, done, (err) =>
            translate(err, finalUrl, signal, outer),
          ),
        );
      }
      const response = new Response(stream, {
        status: res.statusCode,
        statusText: res.statusText || STATUS_CODES[res.statusCode] || '',
        headers: responseHeaders,
      });
      Object.defineProperty(response, 'url', { value: finalUrl.href });
      Object.defineProperty(response, 'redirected', { value: redirected });
      return response;
    });
  };

  const view = (creds: Credentials, allow: Allowance = serviceWide): OutboundHttp => ({
    request: (input, init) => request(input, init, creds, allow),
    fetch: ((input: string | URL | Request, init?: RequestInit) =>
      safeFetch(input, init, creds, allow)) as typeof fetch,
    resolveAllowed: (host: string) => resolveAllowed(host, undefined, allow),
  });
  const root = Object.assign(view(UNBOUND), {
    async close() {
      const all = [...agents.values()];
      agents.clear();
      await Promise.all(all.map((a) => a.close()));
    },
  });
  // Not enumerable: a copy made by spreading (a test overriding one method) is an unbound plain client.
  return Object.defineProperty(root, 'bind', {
    value: (binding: CredentialBinding, allow?: readonly string[] | null) =>
      view(new Credentials(binding), allowanceFor(allow)),
    enumerable: false,
  }) as OutboundClient;
}

function hasHeader(headers: Record<string, string>, name: string): boolean {
  return Object.keys(headers).some((k) => k.toLowerCase() === name);
}

function withDefaults(headers: Record<string, string>, userAgent: string): Record<string, string> {
  // Ask for identity: the size cap then counts what the server sends (decoded() copes with servers that compress
  // anyway).
  const out = Object.fromEntries(Object.entries(headers).filter(([k]) => k.toLowerCase() !== 'accept-encoding'));
  out['accept-encoding'] = 'identity';
  if (!hasHeader(out, 'user-agent')) out['user-agent'] = userAgent;
  return out;
}

type Body = NodeJS.ReadableStream & { destroy(err?: Error): void; destroyed: boolean };

/**
 * The response body with gzip / deflate / br content-encoding removed (the size cap then applies to the decoded bytes).
 */
function decoded(res: Dispatcher.ResponseData): Body {
  const encoding = String(res.headers['content-encoding'] ?? '')
    .trim()
    .toLowerCase();
  const decoder =
    encoding === 'gzip' || encoding === 'x-gzip'
      ? zlib.createGunzip()
      : encoding === 'deflate'
        ? zlib.createInflate()
        : encoding === 'br'
          ? zlib.createBrotliDecompress()
          : null;
  if (!decoder) return res.body;
  return pipeline(res.body, decoder, () => {
    /* errors surface on the decoder stream */
  });
}

/** Maps an error to what callers see: the caller's own abort stays an abort, the rest become OutboundErrors. */
function translate(err: unknown, url: URL, timer: AbortSignal, outer: AbortSignal | undefined | null): unknown {
  if (err instanceof OutboundError) return err;
  if (outer?.aborted) return outer.reason ?? err;
  if (timer.aborted && timer.reason instanceof OutboundError) return timer.reason;
  const code = (err as { code?: string }).code;
  if (code === 'UND_ERR_CONNECT_TIMEOUT')
    return new OutboundError(OUTBOUND_TIMEOUT, `connecting to ${url.host} timed out`, { cause: err });
  if (code === 'UND_ERR_RES_EXCEEDED_MAX_SIZE')
    return new OutboundError(OUTBOUND_TOO_LARGE, `response from ${url.host} is too large`, { cause: err });
  // Undici and socket messages name addresses, never the URL path or query (where secrets live).
  return new OutboundError(
    OUTBOUND_NETWORK,
    `request to ${url.host} failed: ${(err as Error)?.message ?? String(err)}`,
    { cause: err },
  );
}

function tooLarge(url: URL, max: number): OutboundError {
  return new OutboundError(OUTBOUND_TOO_LARGE, `response from ${url.host} exceeds ${max} bytes`);
}

/**
 * Reads a whole body, failing as soon as it grows past `max` bytes. Listens to the stream's
 * events rather than iterating it: an async iterator costs every response a few promises per chunk.
 */
function readCapped(body: Body, max: number, url: URL): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > max) {
        cleanup();
        // Destroying the stream may still emit an error ("aborted"): this read has already failed.
        body.on('error', () => {});
        body.destroy();
        reject(tooLarge(url, max));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve(new Uint8Array(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size)));
    };
    const onError = (err: Error) => {
      cleanup();
      reject(err);
    };
    // A stream destroyed without an error (the request aborted) closes without 'end'.
    const onClose = () => {
      cleanup();
      reject(Object.assign(new Error('the response body was closed before its end'), { code: 'UND_ERR_ABORTED' }));
    };
    const cleanup = () => {
      body.off('data', onData);
      body.off('end', onEnd);
      body.off('error', onError);
      body.off('close', onClose);
    };
    body.on('data', onData);
    body.on('end', onEnd);
    body.on('error', onError);
    body.on('close', onClose);
  });
}

/** Streams a body for `fetch`, enforcing the cap and releasing the timeout when it ends. */
async function* cappedChunks(
  body: Body,
  max: number,
  url: URL,
  done: () => void,
  translateErr: (err: unknown) => unknown,
): AsyncGenerator<Uint8Array> {
  let size = 0;
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > max) {
        body.destroy();
        throw tooLarge(url, max);
      }
      yield new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    }
  } catch (err) {
    throw translateErr(err);
  } finally {
    done();
    if (!body.destroyed) body.destroy();
  }
}

/** A byte stream over the generator; cancelling it runs the generator's cleanup. */
function toWebStream(chunks: AsyncGenerator<Uint8Array>): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const next = await chunks.next();
        if (next.done) controller.close();
        else controller.enqueue(next.value);
      } catch (err) {
        controller.error(err);
      }
    },
    async cancel() {
      await chunks.return(undefined);
    },
  });
}
