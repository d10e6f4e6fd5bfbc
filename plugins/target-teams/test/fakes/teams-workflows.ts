/**
 * A loopback fake of a Teams Workflows webhook: the Request trigger of a Power Automate / Logic
 * Apps workflow made from Teams' "Post to a channel when a webhook request is received" template.
 *
 * Wire behaviour, as Microsoft documents the trigger and its errors:
 * - `POST /workflows/{id}/triggers/manual/paths/invoke` with the query
 *   `?api-version=2016-06-01&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0&sig={signature}` and a JSON body
 *   → `202 Accepted`, empty body, `x-ms-workflow-run-id` and friends; the run then
 *   posts each Adaptive Card attachment to the channel (here: recorded in `posted`, or in `failedRuns`
 *   when the card is not one Teams renders, as the run would fail after the 202).
 * - errors are `{"error": {"code", "message"}}`: 401 `DirectApiAuthorizationRequired` (no `sig`),
 *   401 `DirectApiInvalidAuthorizationSignature` (wrong `sig`), 403 `AuthorizationFailed` (caller
 *   not allowed), 404 `WorkflowNotFound`, 400 `InvalidRequestContent` (not JSON) and
 *   `TriggerInputSchemaMismatch` (no `attachments` array), 429 `WorkflowRequestsThrottled` with
 *   `Retry-After`, 5xx `InternalServerError`.
 */
import http from 'node:http';

export interface TeamsReceived {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: http.IncomingHttpHeaders;
  raw: string;
  body: any;
}

export const WORKFLOW_ID = '3c1e5f7a9b2d4c6e8f0a1b2c3d4e5f60';
export const SIGNATURE = 'sIgNaTuRe-AbCdEfGhIjKlMnOpQrStUvWxYz0123456';
/** Teams refuses a message over about 28 KB. */
export const TEAMS_MAX_BYTES = 28 * 1024;

export class TeamsWorkflowsFake {
  private server = http.createServer((req, res) => this.handle(req, res));
  private port = 0;
  private runs = 0;
  readonly received: TeamsReceived[] = [];
  /** Adaptive Cards the workflow runs posted to the channel. */
  readonly posted: any[] = [];
  /** Runs that failed after the 202, with the reason the run history would show. */
  readonly failedRuns: string[] = [];
  /** Answer the next `count` requests with 429 and `Retry-After: seconds`. */
  throttle: { count: number; retryAfter: string } | null = null;
  /** Answer the next request with this status and a Logic Apps error. */
  failNext: { status: number; code: string; message: string } | null = null;
  /** False: the workflow's access control refuses the caller (403). */
  callerAllowed = true;

  async start(): Promise<this> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.port = (this.server.address() as { port: number }).port;
    return this;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((r) => this.server.close(() => r()));
  }

  get base(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** The trigger's URL; `sig` overrides the signature (`null` leaves it out), `workflow` the id. */
  url(o: { sig?: string | null; workflow?: string } = {}): string {
    const q = new URLSearchParams({ 'api-version': '2016-06-01', sp: '/triggers/manual/run', sv: '1.0' });
    const sig = o.sig === undefined ? SIGNATURE : o.sig;
    if (sig !== null) q.set('sig', sig);
    return `${this.base}/workflows/${o.workflow ?? WORKFLOW_ID}/triggers/manual/paths/invoke?${q}`;
  }

  private error(
    res: http.ServerResponse,
    status: number,
    code: string,
    message: string,
    headers: Record<string, string> = {},
  ): void {
    res
      .writeHead(status, {
        'content-type': 'application/json; charset=utf-8',
        'x-ms-failure-cause': 'trigger',
        ...headers,
      })
      .end(JSON.stringify({ error: { code, message } }));
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', this.base);
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: any;
      try {
        body = JSON.parse(raw);
      } catch {
        body = undefined;
      }
      this.received.push({
        method: req.method ?? '',
        path: url.pathname,
        query: Object.fromEntries(url.searchParams),
        headers: req.headers,
        raw,
        body,
      });

      const m = /^\/workflows\/([^/]+)\/triggers\/manual\/paths\/invoke$/.exec(url.pathname);
      if (!m)
        return this.error(res, 404, 'TriggerNotFound', `The workflow trigger at '${url.pathname}' could not be found.`);
      const sig = url.searchParams.get('sig');
      if (!sig)
        return this.error(
          res,
          401,
          'DirectApiAuthorizationRequired',
          'The request must be authenticated only by Shared Access scheme.',
        );
      if (m[1] !== WORKFLOW_ID)
        return this.error(res, 404, 'WorkflowNotFound', `The workflow '${m[1]}' could not be found.`);
      if (sig !== SIGNATURE)
        return this.error(
          res,
          401,
          'DirectApiInvalidAuthorizationSignature',
          'The provided authentication token is not valid.',
        );
      if (!this.callerAllowed)
        return this.error(
          res,
          403,
          'AuthorizationFailed',
          "The client IP address '203.0.113.9' is not in the allowed caller IP address ranges specified in the " +
            "workflow's access control configuration.",
        );
      if (this.throttle && this.throttle.count > 0) {
        this.throttle.count--;
        return this.error(
          res,
          429,
          'WorkflowRequestsThrottled',
          `Number of requests for workflow '${WORKFLOW_ID}' exceeded the limit of '100' over time window of ` +
            `'00:01:00'.`,
          { 'retry-after': this.throttle.retryAfter },
        );
      }
      if (this.failNext) {
        const f = this.failNext;
        this.failNext = null;
        return this.error(res, f.status, f.code, f.message);
      }
      if (req.method !== 'POST')
        return this.error(
          res,
          405,
          'TriggerRequestMethodNotValid',
          `The HTTP method for this request is not valid: expected 'Post' and actual '${req.method}'.`,
        );
      if (!/^application\/json\b/i.test(req.headers['content-type'] ?? '') || body === undefined) {
        return this.error(
          res,
          400,
          'InvalidRequestContent',
          `The input body for trigger 'manual' of type 'Request' must be of type JSON, but was of type ` +
            `'${req.headers['content-type'] ?? 'application/octet-stream'}'.`,
        );
      }
      if (!body || typeof body !== 'object' || !Array.isArray(body.attachments)) {
        return this.error(
          res,
          400,
          'TriggerInputSchemaMismatch',
          "The input body for trigger 'manual' of type 'Request' did not match its schema definition. Error " +
            "details: 'Required properties are missing from object: attachments.'.",
        );
      }
      const runId = `08584${String(++this.runs).padStart(15, '0')}CU${String(this.runs % 100).padStart(2, '0')}`;
      res
        .writeHead(202, {
          'x-ms-workflow-run-id': runId,
          'x-ms-correlation-id': `c0ffee00-0000-4000-8000-${String(this.runs).padStart(12, '0')}`,
          'x-ms-trigger-history-name': runId,
          'x-ms-workflow-id': WORKFLOW_ID,
          'x-ms-workflow-version': '08584700000000000000',
          'content-length': '0',
        })
        .end();
      this.run(raw, body);
    });
  }

  /** What the template's run does with the trigger body: post each Adaptive Card, or fail. */
  private run(raw: string, body: any): void {
    if (Buffer.byteLength(raw, 'utf8') > TEAMS_MAX_BYTES) {
      this.failedRuns.push('RequestEntityTooLarge: the message is larger than Teams allows');
      return;
    }
    for (const a of body.attachments) {
      const card = a?.content;
      if (a?.contentType !== 'application/vnd.microsoft.card.adaptive') {
        this.failedRuns.push(`unsupported attachment ${a?.contentType}`);
        continue;
      }
      if (card?.type !== 'AdaptiveCard' || !['1.0', '1.1', '1.2', '1.3', '1.4', '1.5'].includes(card.version)) {
        this.failedRuns.push('not an Adaptive Card of a version Teams renders');
        continue;
      }
      if (
        !Array.isArray(card.body) ||
        !card.body.length ||
        card.body.some((b: any) => b.type === 'TextBlock' && (typeof b.text !== 'string' || !b.text))
      ) {
        this.failedRuns.push('the card has no body or an empty TextBlock');
        continue;
      }
      this.posted.push(card);
    }
  }
}
