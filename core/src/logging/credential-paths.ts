import { MASK } from './redact.ts';

/**
 * A route path as segments: a literal, `null` for a credential parameter (any value is masked), or
 * a pattern for a credential parameter declared with a regular expression (`/:topic(^[-_A-Za-z0-9]{16,64}$)`):
 * only a segment of that shape is masked, so a root route's mask leaves `/favicon.ico` readable.
 */
type Pattern = (string | null | RegExp)[];

const same = (a: string | null | RegExp, b: string | null | RegExp): boolean =>
  a instanceof RegExp || b instanceof RegExp ? String(a) === String(b) : a === b;

/**
 * URL paths whose segments are credentials (a webhook token, a bot's path id), as the routes that
 * own them declare. A URL is matched by its shape, so the segment is masked also when the request
 * matched no route (a GET on a webhook address). The logger applies it to every logged request.
 */
export class CredentialPaths {
  private patterns: Pattern[] = [];

  /** `url` is a route path (`/api/hooks/:token`); `params` the names of its credential parameters. */
  add(url: string, params: string[]): void {
    const pattern = url.split('/').map((s): string | null | RegExp => {
      if (!s.startsWith(':')) return s;
      const open = s.indexOf('(');
      if (!params.includes(open < 0 ? s.slice(1) : s.slice(1, open))) return s;
      return open < 0 ? null : new RegExp(s.slice(open + 1, s.lastIndexOf(')')));
    });
    if (!this.patterns.some((p) => p.length === pattern.length && p.every((s, i) => same(s, pattern[i]!))))
      this.patterns.push(pattern);
  }

  /** The URL with every credential segment replaced by the mask; the query string is left to the text redaction. */
  mask(url: string): string {
    if (!this.patterns.length) return url;
    const q = url.indexOf('?');
    const segments = (q < 0 ? url : url.slice(0, q)).split('/');
    for (const p of this.patterns) {
      if (
        p.length !== segments.length ||
        !p.every((s, i) => s === null || (s instanceof RegExp ? s.test(segments[i]!) : s === segments[i]))
      )
        continue;
      return (
        segments.map((s, i) => (p[i] === null || p[i] instanceof RegExp ? MASK : s)).join('/') +
        (q < 0 ? '' : url.slice(q))
      );
    }
    return url;
  }
}
