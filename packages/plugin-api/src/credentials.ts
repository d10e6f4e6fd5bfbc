/**
 * Which request headers and URLs carry a plugin instance's credentials, so that the outbound
 * clients (the service's `ctx.http` and the test host's) keep them on the origin they were meant
 * for. One implementation for both clients: a plugin behaves the same in its tests as in the service.
 *
 * @internal Used by the core and the test host; plugins declare their headers with the manifest's
 * `credentialHeaders` (or a request's `credentialHeaders`) and never call this module.
 */
import { SECRET_KEY } from './index.ts';

/** Headers that never follow a redirect to another origin, whatever a plugin declares. */
export const ORIGIN_BOUND_HEADERS: readonly string[] = ['authorization', 'cookie', 'proxy-authorization'];

/**
 * Secret values shorter than this are matched only against a whole header value, never inside a
 * longer header value or a URL: a short value (a PIN, a port-like number) would match unrelated text.
 */
export const MIN_EMBEDDED_SECRET_LENGTH = 8;

/** The credentials of one plugin instance, as the outbound client bound to it sees them. @internal */
export interface CredentialBinding {
  /** Header names the plugin declares as credentials (the manifest's `credentialHeaders`); any case. */
  headers?: readonly (string | undefined)[];
  /** The instance's secret values: its `Secret()` config fields and the token of its messaging bot. */
  secrets?: readonly (string | undefined)[];
}

/** A header name as RFC 9110 allows it (a token). */
export const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * A binding compiled once per instance: the header names as a lower-case set and the secrets
 * split by length, so the per-redirect checks allocate nothing beyond the new header object.
 * @internal
 */
export class Credentials {
  private readonly names: ReadonlySet<string>;
  /** Secrets long enough to look for inside header values and URLs. */
  private readonly embedded: readonly string[];
  /** Every secret, for exact header-value matches. */
  private readonly exact: ReadonlySet<string>;

  constructor(binding: CredentialBinding = {}) {
    const names = new Set(ORIGIN_BOUND_HEADERS);
    for (const h of binding.headers ?? []) if (typeof h === 'string' && h) names.add(h.toLowerCase());
    this.names = names;
    const secrets = [
      ...new Set((binding.secrets ?? []).filter((s): s is string => typeof s === 'string' && s.trim() !== '')),
    ];
    this.exact = new Set(secrets);
    this.embedded = secrets.filter((s) => s.length >= MIN_EMBEDDED_SECRET_LENGTH);
  }

  /** True when a header with this name and value carries a credential (`extra`: the request's own declared names). */
  isCredential(name: string, value: string, extra?: readonly string[]): boolean {
    const lower = name.toLowerCase();
    if (this.names.has(lower)) return true;
    if (extra) for (const e of extra) if (e.toLowerCase() === lower) return true;
    if (this.exact.has(value) || this.exact.has(value.trim())) return true;
    for (const s of this.embedded) if (value.includes(s)) return true;
    return false;
  }

  /** `headers` without its credential headers: what may follow a redirect to another origin. */
  strip(headers: Record<string, string>, extra?: readonly string[]): Record<string, string> {
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries(headers)) if (!this.isCredential(k, v, extra)) out[k] = v;
    return out;
  }

  /** True when `url` (as written or percent-decoded) contains one of the instance's secret values. */
  inUrl(url: URL): boolean {
    if (!this.embedded.length) return false;
    const href = url.href;
    let decoded = href;
    try {
      decoded = decodeURIComponent(href);
    } catch {
      /* a malformed escape: the raw form is checked */
    }
    return this.embedded.some((s) => href.includes(s) || decoded.includes(s));
  }

  /**
   * Why a redirect from `from` to `to` must not be followed, or undefined when it may be: a
   * redirect to another origin whose URL carries a secret (a token in the path, a key in the query).
   */
  redirectRefusal(from: URL, to: URL): string | undefined {
    if (from.origin === to.origin || !this.inUrl(to)) return undefined;
    return (
      `${from.host} redirected to ${to.host} with a credential in the URL; the redirect is refused so the ` +
      'credential stays on its origin'
    );
  }

  /** The headers for the next hop: unchanged on the same origin, without credentials on another. */
  forHop(headers: Record<string, string>, from: URL, to: URL, extra?: readonly string[]): Record<string, string> {
    return from.origin === to.origin ? headers : this.strip(headers, extra);
  }
}

/** The binding with only the fixed list: for clients not bound to an instance. @internal */
export const UNBOUND = new Credentials();

/**
 * The values of every `Secret()` field of `schema` found in `config` (strings only), walking
 * objects, arrays and unions the way {@link secretPaths} does.
 * @internal
 */
export function secretValues(schema: unknown, config: unknown): string[] {
  const out = new Set<string>();
  const walk = (s: any, v: unknown): void => {
    if (!s || typeof s !== 'object' || v === undefined || v === null) return;
    if (s[SECRET_KEY] === true) {
      if (typeof v === 'string' && v) out.add(v);
      return;
    }
    if (s.properties && typeof v === 'object')
      for (const [k, sub] of Object.entries(s.properties)) walk(sub, (v as Record<string, unknown>)[k]);
    if (s.items && Array.isArray(v)) for (const item of v) walk(s.items, item);
    for (const key of ['anyOf', 'oneOf', 'allOf'] as const)
      if (Array.isArray(s[key])) for (const sub of s[key]) walk(sub, v);
  };
  walk(schema, config);
  return [...out];
}
