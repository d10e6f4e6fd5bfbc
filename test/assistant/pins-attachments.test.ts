import { createParser } from 'eventsource-parser';
import t from 'tap';
import type { TestService } from '../helpers/service.ts';
import { harness, newChat, newUser, upload } from './support.ts';

/** Posts a message with `documents`; the reply's SSE events, or the problem. */
async function sendWith(svc: TestService, token: string, chatId: string, body: Record<string, unknown>) {
  const res = await fetch(`${svc.url}/api/v1/chats/${chatId}/messages`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (!res.headers.get('content-type')?.startsWith('text/event-stream'))
    return { status: res.status, problem: await res.json(), events: [] as { event: string; data: any }[] };
  const events: { event: string; data: any }[] = [];
  const parser = createParser({
    onEvent: (e) => events.push({ event: e.event ?? 'message', data: JSON.parse(e.data) }),
  });
  parser.feed(await res.text());
  return { status: res.status, problem: undefined, events };
}

t.test('chats: pin and folder through PATCH, pinned first in the list, paging keeps that order', async (t) => {
  const { svc } = await harness(t);
  const u = await newUser(svc);
  const v = await newUser(svc);
  const ids: string[] = [];
  for (const title of ['one', 'two', 'three', 'four']) ids.push(await newChat(svc, u.token, { title }));
  const [one, two, three, four] = ids as [string, string, string, string];
  const patch = (id: string, body: unknown, token = u.token) =>
    svc.request('PATCH', `/api/v1/chats/${id}`, { token, body });

  const fresh = await svc.request('GET', `/api/v1/chats/${one}`, { token: u.token });
  t.match(fresh.body, { pinned: false, folder: null }, 'a new chat is neither pinned nor in a folder');

  const pinnedOne = (await patch(one, { pinned: true })).body;
  t.match(pinnedOne, { pinned: true, folder: null, title: 'one' });
  t.equal(pinnedOne.updated_at, fresh.body.updated_at, 'pinning does not count as a change to the chat');
  t.match((await patch(two, { pinned: true, folder: '  Health  ' })).body, { pinned: true, folder: 'Health' });
  t.match((await patch(three, { folder: 'Health' })).body, { pinned: false, folder: 'Health' });
  const titles = async (qs = '') =>
    (await svc.request('GET', `/api/v1/chats${qs}`, { token: u.token })).body.chats.map((c: any) => c.title);
  t.same(await titles(), ['two', 'one', 'four', 'three'], 'pinned first, each group newest first');

  // Paging by `before` continues in the same order, across the pinned/unpinned boundary.
  const page = async (before?: string) =>
    (
      await svc.request('GET', `/api/v1/chats?limit=1${before ? `&before=${before}` : ''}`, { token: u.token })
    ).body.chats.map((c: any) => c.id);
  const seen: string[] = [];
  let cursor: string | undefined;
  for (let i = 0; i < 5; i++) {
    const p = await page(cursor);
    if (!p.length) break;
    seen.push(...p);
    cursor = p[p.length - 1];
  }
  t.same(seen, [two, one, four, three], 'every chat once, in the list order');

  // The folder's limit, both sides; blank and null.
  t.equal((await patch(four, { folder: 'f'.repeat(100) })).body.folder, 'f'.repeat(100), '100 characters fit');
  const long = await patch(four, { folder: 'f'.repeat(101) });
  t.equal(long.status, 422, '101 do not');
  const blank = await patch(four, { folder: '   ' });
  t.equal(blank.status, 422, 'a blank folder name is refused');
  t.match(blank.body.detail, /blank/);
  t.equal((await patch(four, { folder: null })).body.folder, null, 'null takes the chat out of its folder');
  t.equal((await patch(one, { pinned: false })).body.pinned, false, 'unpinned');
  t.equal((await patch(one, { pinned: 'yes' })).status, 422);
  t.same(await titles(), ['two', 'four', 'three', 'one']);
  t.same(await titles('?archived=false'), ['two', 'four', 'three', 'one'], 'with the archived filter too');

  // Another user's chat does not exist for them.
  t.equal((await patch(one, { pinned: true }, v.token)).status, 404);
  t.equal((await svc.request('GET', '/api/v1/chats', { token: v.token })).body.chats.length, 0);
});

t.test(
  'a message carries documents attached in the composer: chips in the history, searched by the model',
  async (t) => {
    const { svc, ai } = await harness(t);
    const u = await newUser(svc);
    const v = await newUser(svc);
    const doc = await upload(
      svc,
      u.token,
      'plan.md',
      '# Training plan\n\nRun 12 km on Sundays at an easy pace.\n',
      'text/markdown',
    );
    t.equal(doc.status, 201);
    const theirs = await upload(svc, v.token, 'theirs.md', '# Not yours\n', 'text/markdown');
    const chat = await newChat(svc, u.token);

    t.equal(
      (await sendWith(svc, u.token, chat, { content: 'x', documents: [theirs.body.id] })).status,
      404,
      "another user's document",
    );
    const missing = await sendWith(svc, u.token, chat, {
      content: 'x',
      documents: ['01890000-0000-7000-8000-000000000000'],
    });
    t.equal(missing.status, 404);
    t.equal(missing.problem.code, 'document_not_found');
    const eleven = Array.from(
      { length: 11 },
      (_, i) => `01890000-0000-7000-8000-0000000000${String(i).padStart(2, '0')}`,
    );
    t.equal((await sendWith(svc, u.token, chat, { content: 'x', documents: eleven })).status, 422, 'at most 10');
    t.equal(ai.calls.length, 0, 'refused before the model is asked');

    ai.next({ toolCall: { name: 'search_documents', arguments: JSON.stringify({ query: 'Sundays' }), pieces: 2 } });
    const r = await sendWith(svc, u.token, chat, { content: 'How far do I run?', documents: [doc.body.id] });
    t.equal(r.status, 200);
    const first = ai.calls[0]!.body.messages.at(-1);
    t.match(first.content, /How far do I run\?/);
    t.match(first.content, /plan\.md/, 'the model is told the document is attached');
    const tool = ai.calls[1]!.body.messages.filter((m: any) => m.role === 'tool')
      .map((m: any) => m.content)
      .join('\n');
    t.match(tool, /Run 12 km on Sundays/, "the search result holds the document's text");

    const history = await svc.request('GET', `/api/v1/chats/${chat}/messages`, { token: u.token });
    const question = history.body.messages.find((m: any) => m.role === 'user' && m.content === 'How far do I run?');
    t.equal(question.content, 'How far do I run?', 'the stored message keeps only what the user wrote');
    t.same(question.attachments, [{ type: 'document', document_id: doc.body.id, name: 'plan.md', available: true }]);

    // Deleting the document leaves the chip, marked unavailable.
    t.equal((await svc.request('DELETE', `/api/v1/documents/${doc.body.id}`, { token: u.token })).status, 204);
    const after = await svc.request('GET', `/api/v1/chats/${chat}/messages`, { token: u.token });
    t.match(after.body.messages.find((m: any) => m.id === question.id).attachments, [
      { name: 'plan.md', available: false },
    ]);
  },
);

t.test('a message carries at most ten documents: ten are accepted', async (t) => {
  const { svc } = await harness(t);
  const u = await newUser(svc);
  const ids: string[] = [];
  for (let i = 0; i < 10; i++) ids.push((await upload(svc, u.token, `n${i}.txt`, `Note number ${i}.`)).body.id);
  const chat = await newChat(svc, u.token);
  const r = await sendWith(svc, u.token, chat, { content: 'Ten notes', documents: ids });
  t.equal(r.status, 200, 'ten documents are accepted');
  const history = await svc.request('GET', `/api/v1/chats/${chat}/messages`, { token: u.token });
  t.same(
    history.body.messages[0].attachments.map((a: any) => a.name),
    ids.map((_, i) => `n${i}.txt`),
    'all ten, in the order given',
  );
  t.equal(
    (await sendWith(svc, u.token, chat, { content: 'Twice', documents: [ids[0], ids[0]] })).status,
    422,
    'the same document twice is refused',
  );
});

t.test('the chat and message routes name their response schemas, and the answers keep every field', async (t) => {
  const { svc } = await harness(t);
  const doc = (await svc.request('GET', '/api/docs/json')).body;
  for (const [path, method, status] of [
    ['/api/v1/chats', 'post', '201'],
    ['/api/v1/chats', 'get', '200'],
    ['/api/v1/chats/{chat_id}', 'get', '200'],
    ['/api/v1/chats/{chat_id}', 'patch', '200'],
    ['/api/v1/chats/{chat_id}/messages', 'get', '200'],
  ] as const) {
    const schema = doc.paths[path]?.[method]?.responses?.[status]?.content?.['application/json']?.schema;
    t.ok(schema && 'properties' in schema, `${method.toUpperCase()} ${path} names its schema`);
  }
  const u = await newUser(svc);
  const chat = await newChat(svc, u.token);
  const c = (
    await svc.request('PATCH', `/api/v1/chats/${chat}`, { token: u.token, body: { pinned: true, folder: 'F' } })
  ).body;
  t.same(Object.keys(c).sort(), [
    'created_at',
    'event_id',
    'folder',
    'id',
    'is_archived',
    'model',
    'pinned',
    'skill_id',
    'title',
    'updated_at',
  ]);
  await sendWith(svc, u.token, chat, { content: 'hello' });
  const m = (await svc.request('GET', `/api/v1/chats/${chat}/messages`, { token: u.token })).body;
  t.same(Object.keys(m).sort(), ['has_more', 'messages']);
  t.same(Object.keys(m.messages[1]).sort(), [
    'alternatives',
    'attachments',
    'chat_id',
    'content',
    'context_version',
    'created_at',
    'error',
    'id',
    'model',
    'parent_id',
    'role',
    'status',
    'tools',
    'usage',
  ]);
  t.match(m.messages[1].usage, { prompt_tokens: Number, completion_tokens: Number, total_tokens: Number });
});
