/**
 * A loopback fake of an Apprise API server's notify endpoints, from caronc/apprise-api's README
 * (endpoints, payload fields, response codes) and the behaviour of its views:
 * - `POST /notify/{KEY}` (KEY `[\w-]{1,128}`) notifies the services of the configuration saved
 *   under KEY, filtered by `tag` ("a, b" = a OR b, "a b" = a AND b); `POST /notify` notifies the
 *   `urls` given (spaces or commas between them);
 * - JSON payload (`Content-Type: application/json`): `body` (required), `title`, `type`
 *   (`info|success|warning|failure`), `format` (`text|markdown|html`), `tag`, `urls`;
 * - with `Accept: application/json` the answer is `{"error": null|"…", "details": [[level, time, message]…]}`
 *   (Apprise's log at `X-Apprise-Log-Level`, default WARNING), else text/plain;
 * - 200 all sent; 204 no configuration under KEY / no valid URL; 400 invalid JSON, missing body,
 *   bad type or format, unsupported tag characters; 424 one or more services failed (or none
 *   matched the tag); 431 payload too large; 500 configuration I/O error.
 * Optionally sits behind nginx basic authentication (401 with an HTML page).
 * A service is an Apprise URL of the form `json://<name>`; names starting with `down` fail.
 */
import http from 'node:http';

export interface AppriseReceived {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: any;
}
export interface Notified {
  service: string;
  title: string;
  body: string;
  type: string;
  format: string;
}

const TYPES = ['info', 'success', 'warning', 'failure'];
const FORMATS = ['text', 'markdown', 'html'];
const LEVELS = ['TRACE', 'DEBUG', 'INFO', 'WARNING', 'ERROR', 'CRITICAL'];
/** Largest JSON payload the server takes (APPRISE_UPLOAD_MAX_MEMORY_SIZE, 3 MB by default). */
export const MAX_PAYLOAD_BYTES = 3 * 1024 * 1024;

export class AppriseApiFake {
  private server = http.createServer((req, res) => this.handle(req, res));
  private port = 0;
  readonly received: AppriseReceived[] = [];
  readonly notified: Notified[] = [];
  /** Saved configurations: key → services with their tags. */
  configs = new Map<string, Array<{ url: string; tags: string[] }>>([
    [
      'homelab',
      [
        { url: 'json://phone', tags: ['alerts'] },
        { url: 'json://mail', tags: ['alerts', 'digest'] },
        { url: 'json://tv', tags: ['media'] },
      ],
    ],
  ]);
  /** nginx basic authentication in front, when set. */
  basicAuth: { user: string; pass: string } | null = null;
  /** Answer the next request with this status and body (JSON `{"error"}`). */
  failNext: { status: number; error: string; headers?: Record<string, string> } | null = null;

  async start(): Promise<this> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.port = (this.server.address() as { port: number }).port;
    return this;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((r) => this.server.close(() => r()));
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = new URL(req.url ?? '/', this.url).pathname;
      const raw = Buffer.concat(chunks);
      let body: any;
      try {
        body = JSON.parse(raw.toString('utf8'));
      } catch {
        body = undefined;
      }
      this.received.push({ method: req.method ?? '', path, headers: req.headers, body });

      if (this.basicAuth) {
        const expected = `Basic ${Buffer.from(`${this.basicAuth.user}:${this.basicAuth.pass}`).toString('base64')}`;
        if (req.headers.authorization !== expected) {
          return void res
            .writeHead(401, {
              'content-type': 'text/html',
              'www-authenticate': 'Basic realm="Apprise API Restricted Area"',
            })
            .end(
              '<html>\r\n<head><title>401 Authorization Required</title></head>\r\n<body>\r\n<center><h1>401 ' +
                'Authorization Required</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n',
            );
        }
      }
      const json = /application\/json/i.test(req.headers.accept ?? '');
      const answer = (
        status: number,
        error: string | null,
        details?: unknown[],
        headers: Record<string, string> = {},
      ) => {
        if (status === 204) return void res.writeHead(204).end();
        if (json)
          return void res
            .writeHead(status, { 'content-type': 'application/json', ...headers })
            .end(JSON.stringify(details ? { error, details } : { error }));
        res.writeHead(status, { 'content-type': 'text/plain', ...headers }).end(error ?? '');
      };
      const m = /^\/notify(?:\/([\w-]{1,128}))?\/?$/.exec(path);
      if (!m)
        return void res
          .writeHead(404, { 'content-type': 'text/html' })
          .end('<h1>Not Found</h1><p>The requested resource was not found on this server.</p>');
      if (req.method !== 'POST') return answer(405, 'Method not allowed');
      if (this.failNext) {
        const f = this.failNext;
        this.failNext = null;
        return answer(f.status, f.error, undefined, f.headers);
      }
      if (raw.length > MAX_PAYLOAD_BYTES) return answer(431, 'JSON Payload provided is to large');
      if (!/^application\/json/i.test(req.headers['content-type'] ?? '') || !body || typeof body !== 'object')
        return answer(400, 'Invalid JSON Payload provided');
      const key = m[1];

      let tag: string[][] | undefined;
      if (body.tag !== undefined) {
        if (typeof body.tag !== 'string' || !/^[\w\s,.:-]+$/.test(body.tag))
          return answer(400, 'Unsupported characters found in tag definition');
        tag = body.tag
          .split(',')
          .map((alt: string) => alt.trim().split(/\s+/).filter(Boolean))
          .filter((a: string[]) => a.length);
      }
      if (!body.body || !TYPES.includes(body.type ?? 'info')) return answer(400, 'Payload lacks minimum requirements');
      if (body.format !== undefined && !FORMATS.includes(body.format))
        return answer(400, 'An invalid body input format was specified');

      let services: Array<{ url: string; tags: string[] }>;
      if (key) {
        services = this.configs.get(key) ?? [];
        if (!services.length) return answer(204, 'There was no configuration found');
      } else {
        const urls = typeof body.urls === 'string' ? body.urls.split(/[\s,]+/).filter(Boolean) : [];
        services = urls.filter((u: string) => /^json:\/\/[\w.-]+$/.test(u)).map((u: string) => ({ url: u, tags: [] }));
        if (!services.length) return answer(204, 'There was no valid URLs provided to notify');
      }
      const matched = tag ? services.filter((s) => tag!.some((all) => all.every((t) => s.tags.includes(t)))) : services;
      const level = LEVELS.includes(String(req.headers['x-apprise-log-level'] ?? '').toUpperCase())
        ? String(req.headers['x-apprise-log-level']).toUpperCase()
        : 'WARNING';
      const details: Array<[string, string, string]> = [];
      const log = (lvl: string, msg: string) => {
        if (LEVELS.indexOf(lvl) >= LEVELS.indexOf(level)) details.push([lvl, '2026-01-01 00:00:00,000', msg]);
      };
      let ok = matched.length > 0;
      for (const s of matched) {
        const name = s.url.slice('json://'.length);
        if (name.startsWith('down')) {
          log('WARNING', `Failed to send JSON notification to ${name}: Service Unavailable error=503.`);
          ok = false;
          continue;
        }
        this.notified.push({
          service: s.url,
          title: body.title ?? '',
          body: body.body,
          type: body.type ?? 'info',
          format: body.format ?? 'text',
        });
        log('INFO', 'Sent JSON notification.');
      }
      if (!ok)
        return answer(
          424,
          key ? 'One or more notification could not be sent' : 'One or more notifications could not be sent',
          details,
        );
      answer(200, null, details);
    });
  }
}
