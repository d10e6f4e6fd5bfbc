/**
 * Chat controls through the real service and the fake model: regenerate (alternatives, quota),
 * edit and resend (branches), retry after a failure, archived chats, model choice and per-model
 * usage, and report attachments that outlive a reload and vanish with the report.
 */

import { createParser } from 'eventsource-parser';
import t from 'tap';
import type { TestService } from '../helpers/service.ts';
import type { Harness, StreamResult } from './support.ts';
import { adminToken, harness, named, newChat, newUser, send } from './support.ts';

/** Posts to a streaming route other than the plain send (regenerate, edit) and reads the answer. */
async function post(svc: TestService, token: string, path: string, body?: unknown): Promise<StreamResult> {
  const res = await fetch(`${svc.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const out: StreamResult = { status: res.status, headers: res.headers, events: [], comments: [] };
  const text = await res.text();
  if (!res.headers.get('content-type')?.startsWith('text/event-stream')) {
    try {
      out.problem = JSON.parse(text);
    } catch {
      out.problem = text;
    }
    return out;
  }
  const parser = createParser({
    onEvent: (e) => {
      out.events.push({ event: e.event ?? 'message', data: JSON.parse(e.data) });
    },
  });
  parser.feed(text);
  return out;
}

const history = async ({ svc }: Harness, token: string, chat: string) =>
  (await svc.request('GET', `/api/v1/chats/${chat}/messages`, { token })).body.messages as any[];
const quota = async ({ svc }: Harness, token: string) =>
  (await svc.request('GET', '/api/v1/chats/quota', { token })).body;
const sent = (h: Harness, i: number) =>
  h.ai.calls[i]!.body.messages.filter((m: any) => m.role !== 'system').map((m: any) => `${m.role}:${m.content}`);

t.test(
  'regenerate writes another reply, keeps the earlier one as an alternative, and counts in the quota',
  async (t) => {
    const h = await harness(t);
    const u = await newUser(h.svc);
    const chat = await newChat(h.svc, u.token);
    h.ai.next({ text: 'first answer', usage: { prompt_tokens: 10, completion_tokens: 5 } });
    t.equal((await send(h.svc, u.token, chat, 'question one')).status, 200);
    const [q1, a1] = await history(h, u.token, chat);
    t.same(a1.alternatives, [a1.id], 'a single reply has no alternatives');

    h.ai.next({ text: 'second answer', usage: { prompt_tokens: 20, completion_tokens: 7 } });
    const r = await post(h.svc, u.token, `/api/v1/chats/${chat}/messages/${a1.id}/regenerate`);
    t.equal(r.status, 200, r.problem?.detail);
    t.equal(named(r, 'start')[0]!.data.user_message.id, q1.id, 'the same question is answered again');
    t.equal(named(r, 'done')[0]!.data.message.content, 'second answer');
    t.same(sent(h, 1), ['user:question one'], 'the model is asked the question alone, not the reply being replaced');

    let msgs = await history(h, u.token, chat);
    t.same(
      msgs.map((m) => m.content),
      ['question one', 'second answer'],
      'one question, the new reply shown',
    );
    const a2 = msgs[1];
    t.same(a2.alternatives, [a1.id, a2.id], 'both replies are alternatives, oldest first');
    t.equal(a2.parent_id, q1.id);

    const q = await quota(h, u.token);
    t.equal(q.messages_used, 2, 'the regenerated reply counts as a message');
    t.equal(q.tokens_used, 15 + 27, 'and its tokens count');

    // Flip back to the first reply: the next question follows it, and the model sees it.
    t.equal(
      (await h.svc.request('POST', `/api/v1/chats/${chat}/messages/${a1.id}/show`, { token: u.token })).status,
      204,
    );
    msgs = await history(h, u.token, chat);
    t.same(
      msgs.map((m) => m.content),
      ['question one', 'first answer'],
    );
    t.same(msgs[1].alternatives, [a1.id, a2.id]);
    h.ai.next({ text: 'third' });
    await send(h.svc, u.token, chat, 'question two');
    t.same(
      sent(h, 2),
      ['user:question one', 'assistant:first answer', 'user:question two'],
      'the history sent uses the chosen alternative',
    );

    // Another user cannot regenerate or flip this chat's messages.
    const v = await newUser(h.svc);
    t.equal((await post(h.svc, v.token, `/api/v1/chats/${chat}/messages/${a1.id}/regenerate`)).status, 404);
    t.equal(
      (await h.svc.request('POST', `/api/v1/chats/${chat}/messages/${a2.id}/show`, { token: v.token })).status,
      404,
    );
    // A question is not regenerated; an unknown message is 404.
    t.equal(
      (await post(h.svc, u.token, `/api/v1/chats/${chat}/messages/${q1.id}/regenerate`)).problem.code,
      'not_regenerable',
    );
    t.equal(
      (await post(h.svc, u.token, `/api/v1/chats/${chat}/messages/0190a000-0000-7000-8000-000000000000/regenerate`))
        .problem.code,
      'message_not_found',
    );
  },
);

t.test(
  'flipping back to an alternative shows the conversation below it as it was left, not its newest branch',
  async (t) => {
    const h = await harness(t);
    const u = await newUser(h.svc);
    const chat = await newChat(h.svc, u.token);
    const show = async (id: string) =>
      t.equal(
        (await h.svc.request('POST', `/api/v1/chats/${chat}/messages/${id}/show`, { token: u.token })).status,
        204,
      );
    const shown = async () => (await history(h, u.token, chat)).map((m) => m.content);
    h.ai.next({ text: 'A1' });
    await send(h.svc, u.token, chat, 'Q1');
    const a1 = (await history(h, u.token, chat))[1];
    h.ai.next({ text: 'A2' });
    await post(h.svc, u.token, `/api/v1/chats/${chat}/messages/${a1.id}/regenerate`);
    // Below A2: a second question with two replies, and the user settles on the older one.
    h.ai.next({ text: 'R1' });
    await send(h.svc, u.token, chat, 'Q2');
    const r1 = (await history(h, u.token, chat))[3];
    h.ai.next({ text: 'R2' });
    await post(h.svc, u.token, `/api/v1/chats/${chat}/messages/${r1.id}/regenerate`);
    t.same(await shown(), ['Q1', 'A2', 'Q2', 'R2']);
    await new Promise((r) => setTimeout(r, 5));
    await show(r1.id);
    t.same(await shown(), ['Q1', 'A2', 'Q2', 'R1'], 'the older reply chosen');
    await new Promise((r) => setTimeout(r, 5));
    await show(a1.id);
    t.same(await shown(), ['Q1', 'A1'], 'the first alternative has nothing below it');
    await new Promise((r) => setTimeout(r, 5));
    const a2 = (await history(h, u.token, chat))[1].alternatives[1];
    await show(a2);
    t.same(await shown(), ['Q1', 'A2', 'Q2', 'R1'], 'back on A2: the reply last on screen below it, not the newest');
    h.ai.next({ text: 'R3' });
    await send(h.svc, u.token, chat, 'Q3');
    t.same(
      sent(h, h.ai.calls.length - 1),
      ['user:Q1', 'assistant:A2', 'user:Q2', 'assistant:R1', 'user:Q3'],
      'and that is the history the model gets',
    );
  },
);

t.test('regenerate is refused over the quota, like a new message', async (t) => {
  const h = await harness(t);
  const u = await newUser(h.svc, { max_ai_messages_per_day: 1 });
  const chat = await newChat(h.svc, u.token);
  await send(h.svc, u.token, chat, 'hello');
  const [, a] = await history(h, u.token, chat);
  const r = await post(h.svc, u.token, `/api/v1/chats/${chat}/messages/${a.id}/regenerate`);
  t.equal(r.status, 429);
  t.equal(r.problem.code, 'message_quota_exceeded');
  t.equal(h.ai.calls.length, 1, 'the model was not asked');
});

t.test('editing a question starts a new branch; the earlier one stays viewable', async (t) => {
  const h = await harness(t);
  const u = await newUser(h.svc);
  const chat = await newChat(h.svc, u.token);
  await send(h.svc, u.token, chat, 'one');
  await send(h.svc, u.token, chat, 'two');
  await send(h.svc, u.token, chat, 'three');
  const before = await history(h, u.token, chat);
  t.same(
    before.map((m) => m.content),
    ['one', 'Echo: one', 'two', 'Echo: two', 'three', 'Echo: three'],
  );

  const r = await post(h.svc, u.token, `/api/v1/chats/${chat}/messages/${before[2].id}/edit`, {
    content: 'two, edited',
  });
  t.equal(r.status, 200, r.problem?.detail);
  t.equal(named(r, 'done')[0]!.data.message.content, 'Echo: two, edited');
  t.same(
    sent(h, 3),
    ['user:one', 'assistant:Echo: one', 'user:two, edited'],
    'the model answers the edited question after the turns before it',
  );

  const after = await history(h, u.token, chat);
  t.same(
    after.map((m) => m.content),
    ['one', 'Echo: one', 'two, edited', 'Echo: two, edited'],
    'later turns are replaced in view',
  );
  t.same(after[2].alternatives, [before[2].id, after[2].id], 'the original question is an alternative');

  t.equal(
    (await h.svc.request('POST', `/api/v1/chats/${chat}/messages/${before[2].id}/show`, { token: u.token })).status,
    204,
  );
  t.same(
    (await history(h, u.token, chat)).map((m) => m.content),
    before.map((m) => m.content),
    'the previous branch is kept whole',
  );

  t.equal(
    (await post(h.svc, u.token, `/api/v1/chats/${chat}/messages/${before[1].id}/edit`, { content: 'x' })).problem.code,
    'not_editable',
  );
  t.equal(
    (await post(h.svc, u.token, `/api/v1/chats/${chat}/messages/${before[0].id}/edit`, { content: '  ' })).status,
    422,
  );
});

t.test('a failed reply can be retried: no duplicate question, the empty failure is replaced', async (t) => {
  const h = await harness(t);
  const u = await newUser(h.svc);
  const chat = await newChat(h.svc, u.token);
  h.ai.next({ failStatus: 500 });
  const failed = await send(h.svc, u.token, chat, 'hello');
  t.equal(failed.status, 502);
  t.equal(failed.problem.code, 'model_unavailable');
  let msgs = await history(h, u.token, chat);
  t.same(
    msgs.map((m) => [m.role, m.status]),
    [
      ['user', 'complete'],
      ['assistant', 'error'],
    ],
  );

  const retry = await post(h.svc, u.token, `/api/v1/chats/${chat}/messages/${msgs[1].id}/regenerate`);
  t.equal(retry.status, 200);
  msgs = await history(h, u.token, chat);
  t.same(
    msgs.map((m) => [m.role, m.content, m.status]),
    [
      ['user', 'hello', 'complete'],
      ['assistant', 'Echo: hello', 'complete'],
    ],
  );
  t.same(msgs[1].alternatives, [msgs[1].id], 'the failed empty reply is gone, not an alternative');
  t.equal((await quota(h, u.token)).messages_used, 1, 'only the retry that answered counts');

  // A failure mid-stream ends with an error event that carries a code for the client to phrase.
  h.ai.next({ text: 'partial text here', chunks: 4, dropAfter: 2 });
  const mid = await post(h.svc, u.token, `/api/v1/chats/${chat}/messages/${msgs[1].id}/regenerate`);
  const err = named(mid, 'error')[0]!;
  t.equal(err.data.code, 'model_failed');
  t.equal(err.data.message.status, 'error');
});

t.test('an archived chat refuses new messages, regenerations and edits with 409 chat_archived', async (t) => {
  const h = await harness(t);
  const u = await newUser(h.svc);
  const chat = await newChat(h.svc, u.token);
  await send(h.svc, u.token, chat, 'before archiving');
  const [q, a] = await history(h, u.token, chat);
  t.equal(
    (await h.svc.request('PATCH', `/api/v1/chats/${chat}`, { token: u.token, body: { is_archived: true } })).status,
    200,
  );
  for (const r of [
    await send(h.svc, u.token, chat, 'after'),
    await post(h.svc, u.token, `/api/v1/chats/${chat}/messages/${a.id}/regenerate`),
    await post(h.svc, u.token, `/api/v1/chats/${chat}/messages/${q.id}/edit`, { content: 'changed' }),
  ]) {
    t.equal(r.status, 409);
    t.equal(r.problem.code, 'chat_archived');
  }
  t.equal(h.ai.calls.length, 1, 'the model was not asked');
  t.equal((await quota(h, u.token)).messages_used, 1, 'nothing counted');
  t.equal(
    (await h.svc.request('PATCH', `/api/v1/chats/${chat}`, { token: u.token, body: { is_archived: false } })).status,
    200,
  );
  t.equal((await send(h.svc, u.token, chat, 'after')).status, 200, 'unarchived, it accepts messages again');
});

t.test(
  'models: the list comes from the endpoint and the administrator, chats choose one, usage is per model',
  async (t) => {
    const h = await harness(t, { AI_MODEL: 'fake-small' });
    const u = await newUser(h.svc);
    const chat = await newChat(h.svc, u.token);

    let list = await h.svc.request('GET', '/api/v1/models', { token: u.token });
    t.same(
      list.body,
      { models: [{ id: 'fake-small' }, { id: 'fake-large' }], default: 'fake-small' },
      'nothing configured: what the endpoint lists, AI_MODEL first',
    );
    t.equal(h.ai.calls.length, 0);

    const admin = await adminToken(h.svc);
    t.equal(
      (
        await h.svc.request('PUT', '/api/v1/admin/models', {
          token: u.token,
          body: { models_allowed: [], default_model: '' },
        })
      ).status,
      403,
    );
    const bad = await h.svc.request('PUT', '/api/v1/admin/models', {
      token: admin,
      body: { models_allowed: ['fake-large'], default_model: 'other' },
    });
    t.equal(bad.status, 422);
    t.equal(bad.body.code, 'default_model_not_allowed');
    const set = await h.svc.request('PUT', '/api/v1/admin/models', {
      token: admin,
      body: { models_allowed: ['fake-large', 'fake-small', 'not-served'], default_model: 'fake-small' },
    });
    t.equal(set.status, 200);
    t.same(
      set.body.effective,
      ['fake-small', 'fake-large'],
      'a configured model the endpoint does not serve is left out',
    );
    t.same(set.body.endpoint_models, ['fake-small', 'fake-large']);

    const refused = await h.svc.request('PATCH', `/api/v1/chats/${chat}`, {
      token: u.token,
      body: { model: 'not-served' },
    });
    t.equal(refused.status, 422);
    t.equal(refused.body.code, 'model_not_allowed');
    t.same(refused.body.params, { model: 'not-served' });
    const chosen = await h.svc.request('PATCH', `/api/v1/chats/${chat}`, {
      token: u.token,
      body: { model: 'fake-large' },
    });
    t.equal(chosen.status, 200);
    t.equal(chosen.body.model, 'fake-large');

    h.ai.next({ text: 'big', usage: { prompt_tokens: 30, completion_tokens: 10 } });
    const r = await send(h.svc, u.token, chat, 'hi');
    t.equal(h.ai.calls[0]!.body.model, 'fake-large', "the endpoint is asked for the chat's model");
    t.equal(named(r, 'done')[0]!.data.message.model, 'fake-large', 'the reply records its model');
    const other = await newChat(h.svc, u.token, { title: 'Default' });
    h.ai.next({ text: 'small', usage: { prompt_tokens: 3, completion_tokens: 2 } });
    await send(h.svc, u.token, other, 'hi');
    t.equal(h.ai.calls[1]!.body.model, 'fake-small', 'a chat without a choice uses the default');
    t.equal((await history(h, u.token, chat))[1].model, 'fake-large');

    const usage = await h.svc.request('GET', '/api/v1/admin/usage', { token: admin });
    t.same(
      usage.body.models,
      [
        { model: 'fake-large', messages: 1, tokens: 40 },
        { model: 'fake-small', messages: 1, tokens: 5 },
      ],
      'usage per model',
    );

    // An endpoint without GET /models: the configured list stands (after the cache expires: a fresh service).
    const h2 = await harness(t, { AI_MODEL: 'fake-small' });
    h2.ai.setModels(null);
    const u2 = await newUser(h2.svc);
    list = await h2.svc.request('GET', '/api/v1/models', { token: u2.token });
    t.same(
      list.body,
      { models: [{ id: 'fake-small' }], default: 'fake-small' },
      'nothing listed, nothing configured: only the default',
    );
    t.equal(h2.ai.modelListCalls, 1);
    const a2 = await adminToken(h2.svc);
    await h2.svc.request('PUT', '/api/v1/admin/models', {
      token: a2,
      body: { models_allowed: ['m-one', 'm-two'], default_model: 'm-two' },
    });
    list = await h2.svc.request('GET', '/api/v1/models', { token: u2.token });
    t.same(
      list.body,
      { models: [{ id: 'm-two' }, { id: 'm-one' }], default: 'm-two' },
      'the configured list, the default first',
    );
    t.equal(h2.ai.modelListCalls, 1, "the endpoint's answer is cached");
  },
);

t.test(
  'a generated report is an attachment of the reply, shown after reload, and vanishes with the report',
  async (t) => {
    const h = await harness(t);
    const u = await newUser(h.svc);
    const chat = await newChat(h.svc, u.token);
    const r = await send(h.svc, u.token, chat, 'make me a report please');
    const done = named(r, 'done')[0]!.data.message;
    const reportId = named(r, 'tool').find((e) => e.data.status === 'done')!.data.report_id;
    t.same(
      done.attachments,
      [{ type: 'report', report_id: reportId, title: 'Health report' }],
      "the stream's final message carries the attachment",
    );

    let msgs = await history(h, u.token, chat);
    t.equal(msgs[1].attachments.length, 1);
    t.match(msgs[1].attachments[0], { type: 'report', report_id: reportId, title: 'Health report', available: true });
    t.ok(msgs[1].attachments[0].size_bytes > 1000, "with the report's size");

    t.equal((await h.svc.request('DELETE', `/api/v1/reports/${reportId}`, { token: u.token })).status, 204);
    msgs = await history(h, u.token, chat);
    t.same(
      msgs[1].attachments,
      [{ type: 'report', report_id: reportId, title: 'Health report', available: false }],
      'a deleted report is marked unavailable',
    );
  },
);
