import t from 'tap';
import { waitFor } from '../helpers/wait.ts';
import type { Harness, StreamResult } from './support.ts';
import { harness, named, newChat, newUser, send, text } from './support.ts';

const history = async ({ svc }: Harness, token: string, chat: string) =>
  (await svc.request('GET', `/api/v1/chats/${chat}/messages`, { token })).body.messages as any[];
const quota = async ({ svc }: Harness, token: string) =>
  (await svc.request('GET', '/api/v1/chats/quota', { token })).body;

t.test(
  'a client that disconnects mid-stream aborts the model call; the partial reply is saved as interrupted with tokens',
  async (t) => {
    const h = await harness(t);
    const u = await newUser(h.svc);
    const chat = await newChat(h.svc, u.token);
    const full = 'one two three four five six seven eight nine ten';
    // Two pieces, then the model waits for the client to leave (with the rest 80 ms apart, the reply could come
    // complete on a loaded machine before the service saw the client leave).
    h.ai.next({ text: full, chunks: 10, hangAfter: 2 });
    const r = await send(h.svc, u.token, chat, 'count to ten', {
      abortWhen: (ev) => ev.filter((e) => e.event === 'delta').length >= 2,
    });
    t.equal(r.status, 200);
    t.notOk(named(r, 'done').length, 'no done event reached the client');

    let closed = false;
    void h.ai.calls[0]!.closed.then(() => {
      closed = true;
    });
    await waitFor('the service to close the model call', () => closed);
    t.equal(h.ai.calls[0]!.aborted, true, 'the upstream request was aborted before its end');
    t.equal(h.ai.calls[0]!.completed, false);

    const msgs = await waitFor('both messages saved', async () => {
      const m = await history(h, u.token, chat);
      return m.length === 2 ? m : undefined;
    });
    const [userMsg, reply] = msgs;
    t.equal(userMsg.content, 'count to ten', 'the user message stays');
    t.equal(reply.status, 'interrupted');
    t.ok(
      reply.content.length > 0 && full.startsWith(reply.content) && reply.content !== full,
      `partial text saved: "${reply.content}"`,
    );
    t.equal(reply.usage.estimated, true, 'no usage chunk came, so the tokens are estimated');
    t.ok(reply.usage.prompt_tokens > 0 && reply.usage.completion_tokens > 0);
    t.equal(reply.usage.total_tokens, reply.usage.prompt_tokens + reply.usage.completion_tokens);
    const q = await quota(h, u.token);
    t.equal(q.messages_used, 1);
    t.equal(q.tokens_used, reply.usage.total_tokens, 'the tokens spent are counted once');
  },
);

t.test('a client that leaves while the model has not answered yet still aborts it and is recorded', async (t) => {
  const h = await harness(t);
  const u = await newUser(h.svc);
  const chat = await newChat(h.svc, u.token);
  h.ai.next({ headerDelayMs: 30_000, text: 'too late' });
  // The client leaves once the model is asked (a fixed 150 ms was sometimes before the service asked it, on a loaded
  // machine), and the model's headers are 30 s away (600 ms could pass before the service saw the client leave, on a
  // loaded machine, and the reply then came complete); the fake stops waiting when the call is closed.
  const asked = h.ai.waitForCalls(1);
  const r = await send(h.svc, u.token, chat, 'are you there', { abortOn: asked });
  t.equal(r.status, 0, 'the client gave up before any response');
  t.equal((await asked).length, 1, 'the model was asked');
  await h.ai.calls[0]!.closed;
  t.equal(h.ai.calls[0]!.aborted, true);
  const msgs = await waitFor('both messages saved', async () => {
    const m = await history(h, u.token, chat);
    return m.length === 2 ? m : undefined;
  });
  t.equal(msgs[1].status, 'interrupted');
  t.equal(msgs[1].content, '');
  t.equal((await quota(h, u.token)).tokens_used, msgs[1].usage.total_tokens);
});

t.test(
  'a model answering 500 before streaming gives 502 problem details; the user message is kept and marked',
  async (t) => {
    const h = await harness(t);
    const u = await newUser(h.svc);
    const chat = await newChat(h.svc, u.token);
    h.ai.next({ failStatus: 500 });
    const r = await send(h.svc, u.token, chat, 'hello');
    t.equal(r.status, 502);
    t.equal(r.problem.code, 'model_unavailable');
    t.match(r.problem.detail, /HTTP 500/);
    t.equal(h.ai.calls.length, 1, 'no silent retries');
    const msgs = await history(h, u.token, chat);
    t.same(
      msgs.map((m) => [m.role, m.status]),
      [
        ['user', 'complete'],
        ['assistant', 'error'],
      ],
    );
    t.equal(msgs[0].content, 'hello');
    t.match(msgs[1].error, /HTTP 500/);
    const q = await quota(h, u.token);
    t.equal(q.messages_used, 0, 'nothing was produced, so the message is given back');
    t.equal(q.tokens_used, 0);

    // The failed exchange leaves no empty assistant turn in the next request's history.
    const ok = await send(h.svc, u.token, chat, 'again');
    t.equal(ok.status, 200);
    t.same(
      h.ai.calls[1]!.body.messages.map((m: any) => [m.role, m.content]),
      [
        ['user', 'hello'],
        ['user', 'again'],
      ],
    );
  },
);

t.test('a model rate limit before streaming gives 503 with Retry-After', async (t) => {
  const h = await harness(t);
  const u = await newUser(h.svc);
  const chat = await newChat(h.svc, u.token);
  h.ai.next({ failStatus: 429 });
  const r = await send(h.svc, u.token, chat, 'hello');
  t.equal(r.status, 503);
  t.equal(r.problem.code, 'model_rate_limited');
  t.equal(r.headers.get('retry-after'), '7');
});

t.test('a wrong model key gives 502 and never shows the key', async (t) => {
  const h = await harness(t, { AI_API_KEY: 'sk-wrong-secret-key' });
  const u = await newUser(h.svc);
  const chat = await newChat(h.svc, u.token);
  const r = await send(h.svc, u.token, chat, 'hello');
  t.equal(r.status, 502);
  t.equal(r.problem.code, 'model_auth_failed');
  t.notMatch(JSON.stringify(r.problem), /sk-wrong-secret-key/);
  t.notMatch(h.svc.logText(), /sk-wrong-secret-key/);
});

t.test(
  'the model dropping the connection mid-stream gives an error event and saves the partial reply once',
  async (t) => {
    const h = await harness(t);
    const u = await newUser(h.svc);
    const chat = await newChat(h.svc, u.token);
    h.ai.next({ text: 'AAAA BBBB CCCC DDDD', chunks: 4, dropAfter: 2 });
    const r = await send(h.svc, u.token, chat, 'tell me');
    t.equal(r.status, 200);
    t.same(
      r.events.map((e) => e.event),
      ['start', 'delta', 'delta', 'error'],
    );
    const err = named(r, 'error')[0]!.data;
    t.type(err.detail, 'string');
    t.type(err.code, 'string');
    t.equal(err.message.status, 'error');
    t.equal(err.message.content, text(r));
    const msgs = await history(h, u.token, chat);
    t.equal(msgs.length, 2);
    t.equal(msgs[1].status, 'error');
    t.equal(msgs[1].content, 'AAAA BBBB ');
    t.equal(msgs[1].usage.estimated, true);
    const q = await quota(h, u.token);
    t.equal(q.messages_used, 1);
    t.equal(q.tokens_used, msgs[1].usage.total_tokens);
  },
);

t.test(
  'shutting down mid-stream aborts the model call and saves the partial reply before the database closes',
  async (t) => {
    const fs = await import('node:fs');
    const os = await import('node:os');
    const path = await import('node:path');
    const { startService, readStoppedDatabase } = await import('../helpers/service.ts');
    const { startFakeOpenAI } = await import('../fakes/openai.ts');
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-assistant-'));
    const ai = await startFakeOpenAI();
    t.teardown(async () => {
      await ai.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    });
    const svc = await startService(
      {
        SERVICE_PLUGINS: '@herald/provider-bridge-self',
        AI_BASE_URL: ai.baseUrl,
        AI_API_KEY: 'k',
        SERVICE_GRACEFUL_SHUTDOWN_SECONDS: '1',
        SERVICE_LOG_LEVEL: 'WARNING',
      },
      { dataDir },
    );
    const u = await newUser(svc);
    const chat = await newChat(svc, u.token);
    ai.next({ text: 'first half, second half', chunks: 2, hangAfter: 1 });
    // The service stops once the first half has reached the client (a fixed 100 ms after the model was asked could
    // come before the service had it, on a loaded machine).
    let firstHalf = false;
    const streaming = send(svc, u.token, chat, 'hold on', {
      abortWhen: (events) => {
        firstHalf ||= text({ events } as StreamResult) === 'first half, ';
        return false;
      },
    });
    await waitFor('the first half of the reply to reach the client', () => firstHalf);
    await svc.stop();
    const r = await streaming;
    t.equal(named(r, 'done').length, 0);
    t.ok(r.terminated, 'the client saw the connection end');
    t.equal(ai.calls[0]!.aborted, true, 'the model call was aborted');
    const row = await readStoppedDatabase<{ status: string; content: string }>(
      dataDir,
      `SELECT status, content FROM chat_messages WHERE chat_id = ? AND role = 'assistant'`,
      [chat],
    );
    t.same(row, { status: 'interrupted', content: 'first half, ' });
  },
);
