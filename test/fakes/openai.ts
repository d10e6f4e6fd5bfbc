/**
 * A fake OpenAI-compatible chat completions server on 127.0.0.1 (ephemeral port). It speaks the
 * real wire protocol: `POST /v1/chat/completions` with `stream: true` answers `text/event-stream`
 * with `data: {chat.completion.chunk}` lines, a usage chunk (empty `choices`) when
 * `stream_options.include_usage` is set, and `data: [DONE]`. Errors use OpenAI's error body.
 *
 * Each request is answered from a script (per-request overrides queued with `next()`), and every
 * request is recorded with whether the client aborted before the end.
 */

import type { IncomingHttpHeaders } from 'node:http';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeReply {
  /** Reply text; default `Echo: <last user message>`. */
  text?: string;
  /** Pieces the text is split into (default 3). */
  chunks?: number;
  /** Pause before each piece, in ms (slow mode). */
  delayMs?: number;
  /** Answer with a function call instead of text; arguments are sent in `pieces` fragments. */
  toolCall?: { name: string; arguments: string; id?: string; pieces?: number };
  /** Fail before streaming with this status and OpenAI's error body (429, 500, …). */
  failStatus?: number;
  /** Destroy the connection after this many content pieces (mid-stream failure). */
  dropAfter?: number;
  /** Stop sending after this many pieces and wait, connection open, until the client leaves. */
  hangAfter?: number;
  /** With hangAfter: once this resolves, the rest is sent after all (a test looks at the reply mid-stream first). */
  resumeOn?: Promise<unknown>;
  usage?: { prompt_tokens: number; completion_tokens: number };
  /** Wait this long before answering at all (a slow first byte); the wait ends early when the client leaves. */
  headerDelayMs?: number;
  /**
   * Benchmarks: each content piece is replaced, at the moment it is written, by `<t:ms>` where ms is
   * the wall-clock emission time (`performance.timeOrigin + performance.now()`), so a client can
   * compute arrival − emission per chunk. `chunks` then sets how many pieces are sent.
   */
  stamp?: boolean;
}

export interface RecordedCall {
  body: any;
  headers: IncomingHttpHeaders;
  /** True when the client closed the connection before the response was complete. */
  aborted: boolean;
  completed: boolean;
  /** True when the fake itself dropped the connection (`dropAfter`). */
  dropped: boolean;
  /** Resolves when the exchange is over (completed, dropped or aborted). */
  closed: Promise<void>;
}

export interface FakeOpenAI {
  /** Base URL to give the client (`AI_BASE_URL`), ending in `/v1`. */
  baseUrl: string;
  calls: RecordedCall[];
  /** Queues one-shot replies used, in order, before falling back to the script. */
  next(...replies: FakeReply[]): void;
  /** Replaces the default script. */
  setScript(fn: (body: any) => FakeReply): void;
  waitForCalls(n: number, ms?: number): Promise<RecordedCall[]>;
  /**
   * What `GET /v1/models` lists (default `fake-small`, `fake-large`); null answers 404, as servers without the route
   * do.
   */
  setModels(ids: string[] | null): void;
  /** How many times `GET /v1/models` was asked. */
  modelListCalls: number;
  close(): Promise<void>;
}

const lastOf = (messages: any[], role: string) => [...messages].reverse().find((m) => m.role === role);

/** Echoes, and asks for the report tool when the user mentions a report; after a tool result, links it. */
export function defaultScript(body: any): FakeReply {
  const messages: any[] = body.messages ?? [];
  const last = messages[messages.length - 1];
  if (last?.role === 'tool') {
    const result = JSON.parse(last.content);
    // The search tools: answer with what was found, so a test can see the result reached the reply.
    if (Array.isArray(result.entries))
      return { text: `From your memory: ${result.entries.map((e: any) => e.content).join(' | ') || 'nothing found'}` };
    if (Array.isArray(result.excerpts)) {
      const found = result.excerpts.map((e: any) => `${e.document} p.${e.page ?? '-'}: ${e.excerpt}`).join(' | ');
      return { text: `From your documents: ${found || 'nothing found'}` };
    }
    return {
      text: result.download_url
        ? `Your report is ready: [${result.title}](${result.download_url})`
        : `The report failed: ${result.error}`,
    };
  }
  const user = lastOf(messages, 'user')?.content ?? '';
  if (/report|отч[её]т/i.test(user))
    return {
      toolCall: { name: 'generate_health_report', arguments: JSON.stringify({ title: 'Health report' }), pieces: 3 },
    };
  return { text: `Echo: ${user}` };
}

function split(s: string, n: number): string[] {
  if (n <= 1 || s.length <= 1) return [s];
  const size = Math.ceil(s.length / n);
  const out: string[] = [];
  for (let i = 0; i < s.length; i += size) out.push(s.slice(i, i + size));
  return out;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function startFakeOpenAI(opts: { apiKey?: string } = {}): Promise<FakeOpenAI> {
  const calls: RecordedCall[] = [];
  const queue: FakeReply[] = [];
  let script = defaultScript;
  let seq = 0;
  let models: string[] | null = ['fake-small', 'fake-large'];

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void handle(req, res, Buffer.concat(chunks).toString('utf8'));
    });
  });

  const error = (res: http.ServerResponse, status: number, message: string, type: string, code: string | null) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { message, type, param: null, code } }));
  };

  async function handle(req: http.IncomingMessage, res: http.ServerResponse, raw: string) {
    if (req.method === 'GET' && req.url === '/v1/models') {
      if (opts.apiKey && req.headers.authorization !== `Bearer ${opts.apiKey}`)
        return error(res, 401, 'Incorrect API key provided.', 'invalid_request_error', 'invalid_api_key');
      fake.modelListCalls++;
      if (!models) return error(res, 404, `Unknown path ${req.url}`, 'invalid_request_error', 'unknown_url');
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(
        JSON.stringify({
          object: 'list',
          data: models.map((id) => ({ id, object: 'model', created: 1700000000, owned_by: 'fake' })),
        }),
      );
    }
    if (req.method !== 'POST' || req.url !== '/v1/chat/completions')
      return error(res, 404, `Unknown path ${req.url}`, 'invalid_request_error', 'unknown_url');
    if (opts.apiKey && req.headers.authorization !== `Bearer ${opts.apiKey}`)
      return error(res, 401, 'Incorrect API key provided.', 'invalid_request_error', 'invalid_api_key');
    let body: any;
    try {
      body = JSON.parse(raw);
    } catch {
      return error(res, 400, 'We could not parse the JSON body of your request.', 'invalid_request_error', null);
    }
    let resolveClosed!: () => void;
    const call: RecordedCall = {
      body,
      headers: req.headers,
      aborted: false,
      completed: false,
      dropped: false,
      closed: new Promise((r) => {
        resolveClosed = r;
      }),
    };
    calls.push(call);
    res.on('close', () => {
      if (!res.writableFinished) call.aborted = !call.completed && !call.dropped;
      resolveClosed();
    });
    const reply = queue.shift() ?? script(body);
    // The wait ends early when the client leaves (then nothing is answered).
    if (reply.headerDelayMs)
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, reply.headerDelayMs);
        res.once('close', () => {
          clearTimeout(timer);
          resolve();
        });
      });
    if (res.destroyed) return;

    if (reply.failStatus) {
      const rate = reply.failStatus === 429;
      if (rate) res.setHeader('retry-after', '7');
      return error(
        res,
        reply.failStatus,
        rate ? 'Rate limit reached for requests.' : 'The server had an error while processing your request.',
        rate ? 'requests' : 'server_error',
        rate ? 'rate_limit_exceeded' : null,
      );
    }

    const id = `chatcmpl-fake${++seq}`;
    const created = Math.floor(Date.now() / 1000);
    const text = reply.text ?? `Echo: ${lastOf(body.messages ?? [], 'user')?.content ?? ''}`;
    const promptTokens = reply.usage?.prompt_tokens ?? Math.ceil(JSON.stringify(body.messages ?? []).length / 4);
    const completionTokens =
      reply.usage?.completion_tokens ??
      Math.max(1, Math.ceil((reply.toolCall ? reply.toolCall.arguments : text).length / 4));
    const usage = {
      prompt_tokens: promptTokens,
      completion_tokens: completionTokens,
      total_tokens: promptTokens + completionTokens,
    };
    const withUsage = body.stream_options?.include_usage === true;

    if (!body.stream) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          id,
          object: 'chat.completion',
          created,
          model: body.model,
          choices: [
            {
              index: 0,
              message: { role: 'assistant', content: text, refusal: null },
              logprobs: null,
              finish_reason: 'stop',
            },
          ],
          usage,
        }),
      );
      call.completed = true;
      return;
    }

    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
    });
    const send = (choices: any[], extra: Record<string, unknown> = {}) => {
      if (res.destroyed) return false;
      const chunk = {
        id,
        object: 'chat.completion.chunk',
        created,
        model: body.model,
        system_fingerprint: null,
        choices,
        ...(withUsage ? { usage: null } : {}),
        ...extra,
      };
      res.write(`data: ${JSON.stringify(chunk)}\n\n`);
      return true;
    };
    // Ends the TCP stream after the pieces already written, without the final chunk: a premature close.
    const drop = () => {
      call.dropped = true;
      res.socket?.end();
    };
    const delta = (d: Record<string, unknown>, finish: string | null = null) =>
      send([{ index: 0, delta: d, logprobs: null, finish_reason: finish }]);

    delta({ role: 'assistant', content: reply.toolCall ? null : '', refusal: null });
    const pieces = reply.toolCall
      ? split(reply.toolCall.arguments, reply.toolCall.pieces ?? 2)
      : reply.stamp
        ? Array.from({ length: reply.chunks ?? 3 }, () => '')
        : split(text, reply.chunks ?? 3);
    for (let i = 0; i < pieces.length; i++) {
      if (reply.dropAfter !== undefined && i >= reply.dropAfter) return drop();
      if (reply.hangAfter !== undefined && i >= reply.hangAfter) {
        if (!reply.resumeOn) return; // left open until the client goes
        if (i === reply.hangAfter) await reply.resumeOn;
      }
      if (reply.delayMs) await sleep(reply.delayMs);
      if (res.destroyed) return;
      if (reply.toolCall) {
        const first =
          i === 0
            ? {
                id: reply.toolCall.id ?? `call_fake${seq}`,
                type: 'function',
                function: { name: reply.toolCall.name, arguments: pieces[i] },
              }
            : { function: { arguments: pieces[i] } };
        delta({ tool_calls: [{ index: 0, ...first }] });
      } else {
        delta({ content: reply.stamp ? `<t:${(performance.timeOrigin + performance.now()).toFixed(3)}>` : pieces[i] });
      }
    }
    if (reply.dropAfter !== undefined && reply.dropAfter >= pieces.length) return drop();
    delta({}, reply.toolCall ? 'tool_calls' : 'stop');
    if (withUsage) send([], { usage });
    res.write('data: [DONE]\n\n');
    call.completed = true;
    res.end();
  }

  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  const fake: FakeOpenAI = {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    calls,
    next: (...replies) => {
      queue.push(...replies);
    },
    setScript: (fn) => {
      script = fn;
    },
    async waitForCalls(n, ms = 15_000) {
      const end = Date.now() + ms;
      while (calls.length < n && Date.now() < end) await sleep(10);
      return calls;
    },
    setModels: (ids) => {
      models = ids;
    },
    modelListCalls: 0,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
  return fake;
}
