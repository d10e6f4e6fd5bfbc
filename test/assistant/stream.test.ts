import t from 'tap';
import { harness, named, newChat, newUser, send, text } from './support.ts';

t.test('a message streams start, deltas and done, with the SSE headers, and is saved with its usage', async (t) => {
  const { svc, ai } = await harness(t);
  const u = await newUser(svc);
  const chat = await newChat(svc, u.token);
  ai.next({ text: 'Hello there, friend.', chunks: 4, usage: { prompt_tokens: 30, completion_tokens: 6 } });
  const r = await send(svc, u.token, chat, 'Hi!');
  t.equal(r.status, 200);
  t.match(r.headers.get('content-type'), /^text\/event-stream/);
  t.equal(r.headers.get('cache-control'), 'no-cache');
  t.equal(r.headers.get('connection'), 'keep-alive');
  t.equal(r.headers.get('x-accel-buffering'), 'no');
  t.same(
    r.events.map((e) => e.event),
    ['start', 'delta', 'delta', 'delta', 'delta', 'done'],
  );
  const start = r.events[0]!.data;
  t.equal(start.user_message.content, 'Hi!');
  t.equal(start.user_message.role, 'user');
  t.equal(text(r), 'Hello there, friend.');
  const done = named(r, 'done')[0]!.data.message;
  t.equal(done.id, start.assistant_message_id);
  t.equal(done.status, 'complete');
  t.equal(done.content, 'Hello there, friend.');
  t.same(done.usage, { prompt_tokens: 30, completion_tokens: 6, total_tokens: 36, estimated: false });
  t.equal(done.context_version, 0);

  const call = ai.calls[0]!;
  t.equal(call.body.stream, true);
  t.same(call.body.stream_options, { include_usage: true });
  t.equal(call.headers.authorization, 'Bearer test-key');

  const hist = await svc.request('GET', `/api/v1/chats/${chat}/messages`, { token: u.token });
  t.same(
    hist.body.messages.map((m: any) => [m.role, m.content, m.status]),
    [
      ['user', 'Hi!', 'complete'],
      ['assistant', 'Hello there, friend.', 'complete'],
    ],
  );
  const quota = await svc.request('GET', '/api/v1/chats/quota', { token: u.token });
  t.equal(quota.body.messages_used, 1);
  t.equal(quota.body.tokens_used, 36);
});

t.test('a reply in Russian with emoji, one UTF-16 unit a delta, streams and is saved whole', async (t) => {
  const { svc, ai } = await harness(t);
  const u = await newUser(svc);
  const chat = await newChat(svc, u.token);
  // Every code unit its own delta: each emoji's surrogate pair is cut across two deltas, each sent escaped alone.
  const reply = 'Привет 😀, мир! Ёлка 🎄 — «готово».';
  ai.next({ text: reply, chunks: reply.length });
  const r = await send(svc, u.token, chat, 'Привет');
  t.equal(r.status, 200);
  t.equal(named(r, 'delta').length, reply.length, 'one delta a code unit, each a chunk of its own');
  t.equal(text(r), reply, 'the deltas joined by the client');
  t.equal(named(r, 'done')[0]!.data.message.content, reply, 'the saved reply, as done reports it');
  const hist = await svc.request('GET', `/api/v1/chats/${chat}/messages`, { token: u.token });
  t.equal(hist.body.messages.at(-1).content, reply, 'the saved reply, read back');
});

t.test('a slow reply gets keep-alive comments between events', async (t) => {
  const before = process.env.HERALD_SSE_KEEPALIVE_MS;
  process.env.HERALD_SSE_KEEPALIVE_MS = '40';
  t.teardown(() => {
    if (before === undefined) delete process.env.HERALD_SSE_KEEPALIVE_MS;
    else process.env.HERALD_SSE_KEEPALIVE_MS = before;
  });
  const { svc, ai } = await harness(t);
  const u = await newUser(svc);
  const chat = await newChat(svc, u.token);
  ai.next({ text: 'slow but sure', chunks: 2, delayMs: 200 });
  const r = await send(svc, u.token, chat, 'take your time');
  t.ok(r.comments.filter((c) => c === 'keep-alive').length >= 2, `keep-alive comments arrived (${r.comments.length})`);
  t.equal(text(r), 'slow but sure');
  t.equal(named(r, 'done').length, 1);
});

t.test('bad input is refused before anything is counted or sent to the model', async (t) => {
  const { svc, ai } = await harness(t);
  const u = await newUser(svc);
  const other = await newUser(svc);
  const chat = await newChat(svc, u.token);
  const theirs = await newChat(svc, other.token);

  for (const content of ['', '   \n ', 'x'.repeat(32_001)]) {
    const r = await send(svc, u.token, chat, content);
    t.equal(r.status, 422, `content of ${content.length} chars is refused`);
    t.equal(r.problem.status, 422);
    t.type(r.problem.detail, 'string');
  }
  const wrongType = await svc.request('POST', `/api/v1/chats/${chat}/messages`, {
    token: u.token,
    body: { content: 5 },
  });
  t.equal(wrongType.status, 422);
  const extra = await svc.request('POST', `/api/v1/chats/${chat}/messages`, {
    token: u.token,
    body: { content: 'hi', role: 'system' },
  });
  t.equal(extra.status, 422, 'unknown fields are refused');
  t.equal((await send(svc, u.token, 'not-a-uuid', 'hi')).status, 404);
  t.equal((await send(svc, u.token, '0190a000-0000-7000-8000-000000000000', 'hi')).status, 404);
  const foreign = await send(svc, u.token, theirs, 'hi');
  t.equal(foreign.status, 404, "another user's chat does not exist for the caller");
  t.equal(foreign.problem.code, 'not_found');
  t.equal((await svc.request('POST', `/api/v1/chats/${chat}/messages`, { body: { content: 'hi' } })).status, 401);

  t.equal(ai.calls.length, 0, 'the model was never called');
  const quota = await svc.request('GET', '/api/v1/chats/quota', { token: u.token });
  t.equal(quota.body.messages_used, 0);
  const hist = await svc.request('GET', `/api/v1/chats/${chat}/messages`, { token: u.token });
  t.same(hist.body.messages, []);

  const longest = await send(svc, u.token, chat, 'y'.repeat(32_000));
  t.equal(longest.status, 200, '32,000 characters is still accepted');
  t.equal(named(longest, 'done').length, 1);
});

t.test('without AI_API_KEY the message route answers 503 with a clear detail; the rest works', async (t) => {
  const { svc, ai } = await harness(t, { AI_API_KEY: '' });
  const u = await newUser(svc);
  const chat = await newChat(svc, u.token);
  const r = await send(svc, u.token, chat, 'hello?');
  t.equal(r.status, 503);
  t.equal(r.problem.code, 'assistant_not_configured');
  t.match(r.problem.detail, /AI_API_KEY/);
  t.match(r.headers.get('content-type'), /application\/problem\+json/);
  t.equal(ai.calls.length, 0);
  t.equal((await svc.request('GET', `/api/v1/chats/${chat}`, { token: u.token })).status, 200);
  t.equal((await svc.request('GET', '/api/v1/chats/quota', { token: u.token })).body.messages_used, 0);
});
