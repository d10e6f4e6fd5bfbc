import t from 'tap';
import { insertMessage } from '../../core/src/assistant/messages.ts';
import { harness, newChat, newUser } from './support.ts';

t.test(
  'chat CRUD: create 201, list with the archived filter, read, rename, archive, unarchive, delete 204',
  async (t) => {
    const { svc } = await harness(t);
    const u = await newUser(svc);
    const created = await svc.request('POST', '/api/v1/chats/', { token: u.token, body: { title: 'Groceries' } });
    t.equal(created.status, 201);
    t.match(created.body, { title: 'Groceries', is_archived: false, skill_id: null });
    t.match(created.body.id, /^[0-9a-f-]{36}$/);
    const id = created.body.id;
    const second = await newChat(svc, u.token, { title: 'Travel' });

    t.same(
      (await svc.request('GET', '/api/v1/chats/', { token: u.token })).body.chats.map((c: any) => c.title),
      ['Travel', 'Groceries'],
      'newest first',
    );
    t.same(
      (await svc.request('GET', '/api/v1/chats', { token: u.token })).body.chats.length,
      2,
      'the path works without the slash too',
    );
    t.equal((await svc.request('GET', `/api/v1/chats/${id}`, { token: u.token })).body.title, 'Groceries');
    t.equal(
      (await svc.request('PATCH', `/api/v1/chats/${id}`, { token: u.token, body: { title: 'Shopping' } })).body.title,
      'Shopping',
    );

    const archived = await svc.request('PATCH', `/api/v1/chats/${id}`, { token: u.token, body: { is_archived: true } });
    t.equal(archived.body.is_archived, true);
    t.equal(archived.body.title, 'Shopping', 'other fields are kept');
    t.same(
      (await svc.request('GET', '/api/v1/chats/?archived=true', { token: u.token })).body.chats.map((c: any) => c.id),
      [id],
    );
    t.same(
      (await svc.request('GET', '/api/v1/chats/?archived=false', { token: u.token })).body.chats.map((c: any) => c.id),
      [second],
    );
    t.equal((await svc.request('GET', '/api/v1/chats/?archived=maybe', { token: u.token })).status, 422);
    t.equal(
      (await svc.request('PATCH', `/api/v1/chats/${id}`, { token: u.token, body: { is_archived: false } })).body
        .is_archived,
      false,
    );
    t.equal((await svc.request('GET', '/api/v1/chats/?archived=true', { token: u.token })).body.chats.length, 0);

    const untitled = await svc.request('POST', '/api/v1/chats/', { token: u.token, body: {} });
    t.equal(untitled.status, 201, 'the title may be left out');
    t.equal(untitled.body.title, 'New chat', 'and is then "New chat" until one is generated');
    await svc.request('DELETE', `/api/v1/chats/${untitled.body.id}`, { token: u.token });
    t.equal((await svc.request('POST', '/api/v1/chats/', { token: u.token, body: { title: '' } })).status, 422);
    t.equal(
      (await svc.request('POST', '/api/v1/chats/', { token: u.token, body: { title: 'x'.repeat(201) } })).status,
      422,
    );
    t.equal(
      (await svc.request('PATCH', `/api/v1/chats/${id}`, { token: u.token, body: { is_archived: 'yes' } })).status,
      422,
    );
    t.equal((await svc.request('POST', '/api/v1/chats/', { body: { title: 'x' } })).status, 401);

    const del = await svc.request('DELETE', `/api/v1/chats/${id}`, { token: u.token });
    t.equal(del.status, 204);
    t.equal(del.text, '');
    t.equal((await svc.request('GET', `/api/v1/chats/${id}`, { token: u.token })).status, 404);
    t.equal((await svc.request('DELETE', `/api/v1/chats/${id}`, { token: u.token })).status, 404);
  },
);

t.test('only the owner sees a chat: 404 for everyone else, admins included', async (t) => {
  const { svc } = await harness(t);
  const u = await newUser(svc);
  const v = await newUser(svc);
  const chat = await newChat(svc, u.token, { title: 'Private' });
  for (const token of [v.token, svc.admin.token]) {
    t.equal((await svc.request('GET', `/api/v1/chats/${chat}`, { token })).status, 404);
    t.equal((await svc.request('PATCH', `/api/v1/chats/${chat}`, { token, body: { title: 'mine' } })).status, 404);
    t.equal((await svc.request('DELETE', `/api/v1/chats/${chat}`, { token })).status, 404);
    t.equal((await svc.request('GET', `/api/v1/chats/${chat}/messages`, { token })).status, 404);
    t.same((await svc.request('GET', '/api/v1/chats/', { token })).body.chats, []);
  }
  t.equal((await svc.request('GET', '/api/v1/chats/12345', { token: u.token })).status, 404, 'a non-UUID id is 404');
  t.equal((await svc.request('GET', `/api/v1/chats/${chat}`, { token: u.token })).body.title, 'Private', 'unchanged');
});

t.test('a user holds at most max_chats chats, archived ones included (409 beyond)', async (t) => {
  const { svc } = await harness(t);
  const u = await newUser(svc, { max_chats: 2 });
  const a = await newChat(svc, u.token);
  await newChat(svc, u.token);
  await svc.request('PATCH', `/api/v1/chats/${a}`, { token: u.token, body: { is_archived: true } });
  const third = await svc.request('POST', '/api/v1/chats/', { token: u.token, body: { title: 'third' } });
  t.equal(third.status, 409);
  t.equal(third.body.code, 'chat_limit_reached');
  t.match(third.body.detail, /2/);
  await svc.request('DELETE', `/api/v1/chats/${a}`, { token: u.token });
  t.equal(
    (await svc.request('POST', '/api/v1/chats/', { token: u.token, body: { title: 'third' } })).status,
    201,
    'room again after a delete',
  );
  await svc.request('PATCH', `/api/v1/admin/users/${u.id}`, { token: svc.admin.token, body: { max_chats: 3 } });
  t.equal(
    (await svc.request('POST', '/api/v1/chats/', { token: u.token, body: { title: 'fourth' } })).status,
    201,
    'a raised limit applies at once',
  );
  const burst = await Promise.all(
    Array.from({ length: 5 }, () =>
      svc.request('POST', '/api/v1/chats/', { token: u.token, body: { title: 'burst' } }),
    ),
  );
  t.same(
    burst.map((r) => r.status),
    [409, 409, 409, 409, 409],
  );
  t.equal((await svc.request('GET', '/api/v1/chats/', { token: u.token })).body.chats.length, 3);
});

t.test('message history pages newest first, in a stable chronological order within a page', async (t) => {
  const { svc } = await harness(t);
  const u = await newUser(svc);
  const chat = await newChat(svc, u.token);
  const ids: string[] = [];
  for (let i = 0; i < 60; i++) {
    const row = await insertMessage(svc.service.core.db, {
      chat_id: chat,
      user_id: u.id,
      role: i % 2 ? 'assistant' : 'user',
      content: `m${i}`,
      created_at: new Date().toISOString(),
    });
    ids.push(row.id);
  }
  const first = await svc.request('GET', `/api/v1/chats/${chat}/messages`, { token: u.token });
  t.equal(first.status, 200);
  t.same(
    first.body.messages.map((m: any) => m.content),
    Array.from({ length: 50 }, (_, i) => `m${i + 10}`),
    'default 50, the newest',
  );
  t.equal(first.body.has_more, true);
  const older = await svc.request('GET', `/api/v1/chats/${chat}/messages?before=${first.body.messages[0].id}`, {
    token: u.token,
  });
  t.same(
    older.body.messages.map((m: any) => m.content),
    Array.from({ length: 10 }, (_, i) => `m${i}`),
  );
  t.equal(older.body.has_more, false);
  const small = await svc.request('GET', `/api/v1/chats/${chat}/messages?limit=5&before=${ids[30]}`, {
    token: u.token,
  });
  t.same(
    small.body.messages.map((m: any) => m.content),
    ['m25', 'm26', 'm27', 'm28', 'm29'],
  );
  t.same(
    (await svc.request('GET', `/api/v1/chats/${chat}/messages?limit=5&before=${ids[30]}`, { token: u.token })).body,
    small.body,
    'the same page twice is the same',
  );
  t.equal(
    (await svc.request('GET', `/api/v1/chats/${chat}/messages?limit=200`, { token: u.token })).body.messages.length,
    60,
  );
  t.equal((await svc.request('GET', `/api/v1/chats/${chat}/messages?limit=201`, { token: u.token })).status, 422);
  t.equal((await svc.request('GET', `/api/v1/chats/${chat}/messages?limit=0`, { token: u.token })).status, 422);
  t.equal((await svc.request('GET', `/api/v1/chats/${chat}/messages?before=abc`, { token: u.token })).status, 422);
  const msg = first.body.messages[1];
  t.same(Object.keys(msg).sort(), [
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

  await svc.request('DELETE', `/api/v1/chats/${chat}`, { token: u.token });
  const left = await svc.service.core.db.get<{ n: number }>(
    'SELECT COUNT(*) AS n FROM chat_messages WHERE chat_id = ?',
    [chat],
  );
  t.equal(Number(left!.n), 0, 'deleting a chat deletes its messages');
});
