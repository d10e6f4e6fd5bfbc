import { MASK } from './redact.ts';

/** A route path as segments; `null` marks a credential parameter. */
type Pattern = (string | null)[];

/**
 * URL paths whose segments are credentials (a webhook token, a bot's path id), as the routes that
 * own them declare. A URL is matched by its shape, so the segment is masked also when the request
 * matched no route (a GET on a webhook address). The logger applies it to every logged request.
 */
export class CredentialPaths {
  private patterns: Pattern[] = [];

  /** `url` is a route path (`/api/hooks/:token`); `params` the names of its credential parameters. */
  add(url: string, params: string[]): void {
    const pattern = url.split('/').map((s) => (s.startsWith(':') && params.includes(s.slice(1).replace(/\(.*$/, '')) ? null : s));
    if (!this.patterns.some((p) => p.length === pattern.length && p.every((s, i) => s === pattern[i]))) this.patterns.push(pattern);
  }

  /** The URL with every credential segment replaced by the mask; the query string is left to the text redaction. */
  mask(url: string): string {
    if (!this.patterns.length) return url;
    const q = url.indexOf('?');
    const segments = (q < 0 ? url : url.slice(0, q)).split('/');
    for (const p of this.patterns) {
      if (p.length !== segments.length || !p.every((s, i) => s === null || s === segments[i])) continue;
      return segments.map((s, i) => (p[i] === null ? MASK : s)).join('/') + (q < 0 ? '' : url.slice(q));
    }
    return url;
  }
}
