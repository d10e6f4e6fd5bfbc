import t from 'tap';
import { harness, newChat, newUser, send } from './support.ts';

t.test('the primary context has a version that grows with each update; only admins reach it', async (t) => {
  const { svc } = await harness(t);
  const u = await newUser(svc);
  const a = svc.admin.token;
  t.same((await svc.request('GET', '/api/v1/admin/context', { token: a })).body, {
    content: '',
    version: 0,
    updated_at: null,
  });
  const first = await svc.request('PUT', '/api/v1/admin/context', { token: a, body: { content: 'You are Herald.' } });
  t.equal(first.status, 200);
  t.equal(first.body.version, 1);
  t.equal(first.body.content, 'You are Herald.');
  const second = await svc.request('PUT', '/api/v1/admin/context', {
    token: a,
    body: { content: 'You are Herald, v2.' },
  });
  t.equal(second.body.version, 2);
  t.same((await svc.request('GET', '/api/v1/admin/context', { token: a })).body.content, 'You are Herald, v2.');
  t.equal((await svc.request('GET', '/api/v1/admin/context', { token: u.token })).status, 403);
  t.equal((await svc.request('PUT', '/api/v1/admin/context', { token: u.token, body: { content: 'x' } })).status, 403);
  t.equal((await svc.request('PUT', '/api/v1/admin/context', { token: a, body: {} })).status, 422);
});

t.test('each user has one personal context of their own', async (t) => {
  const { svc } = await harness(t);
  const u = await newUser(svc);
  const v = await newUser(svc);
  t.equal((await svc.request('GET', '/api/v1/users/me/context', { token: u.token })).body.content, '');
  t.equal(
    (await svc.request('PUT', '/api/v1/users/me/context', { token: u.token, body: { content: 'I am vegetarian.' } }))
      .body.content,
    'I am vegetarian.',
  );
  await svc.request('PUT', '/api/v1/users/me/context', { token: u.token, body: { content: 'I am vegan.' } });
  t.equal((await svc.request('GET', '/api/v1/users/me/context', { token: u.token })).body.content, 'I am vegan.');
  t.equal(
    (await svc.request('GET', '/api/v1/users/me/context', { token: v.token })).body.content,
    '',
    'not visible to another user',
  );
  t.equal(
    (await svc.request('PUT', '/api/v1/users/me/context', { token: u.token, body: { content: 'x'.repeat(32_001) } }))
      .status,
    422,
  );
  t.equal((await svc.request('GET', '/api/v1/users/me/context')).status, 401);
});

t.test('skills: general ones are admin-managed and visible to all, personal ones only to their owner', async (t) => {
  const { svc } = await harness(t);
  const u = await newUser(svc);
  const v = await newUser(svc);
  const a = svc.admin.token;
  const general = await svc.request('POST', '/api/v1/admin/skills', {
    token: a,
    body: { name: 'Nutrition', description: 'Diet help', prompt: 'Act as a dietitian.' },
  });
  t.equal(general.status, 201);
  t.equal(general.body.scope, 'general');
  t.equal(
    (await svc.request('POST', '/api/v1/admin/skills', { token: u.token, body: { name: 'x', prompt: 'y' } })).status,
    403,
    'users cannot create general skills',
  );
  const mine = await svc.request('POST', '/api/v1/skills/', {
    token: u.token,
    body: { name: 'Runner', prompt: 'Coach my running.' },
  });
  t.equal(mine.status, 201);
  t.equal(mine.body.scope, 'personal');
  t.equal(mine.body.description, null);

  const listU = await svc.request('GET', '/api/v1/skills/', { token: u.token });
  t.same(
    listU.body.skills.map((s: any) => [s.name, s.scope]),
    [
      ['Nutrition', 'general'],
      ['Runner', 'personal'],
    ],
  );
  const listV = await svc.request('GET', '/api/v1/skills', { token: v.token });
  t.same(
    listV.body.skills.map((s: any) => s.name),
    ['Nutrition'],
    "another user's personal skill is not listed",
  );
  t.equal((await svc.request('GET', `/api/v1/skills/${mine.body.id}`, { token: v.token })).status, 404);
  t.equal(
    (await svc.request('PATCH', `/api/v1/skills/${mine.body.id}`, { token: v.token, body: { name: 'Mine now' } }))
      .status,
    404,
  );
  t.equal((await svc.request('DELETE', `/api/v1/skills/${mine.body.id}`, { token: v.token })).status, 404);
  t.equal(
    (await svc.request('PATCH', `/api/v1/skills/${general.body.id}`, { token: u.token, body: { name: 'Hijack' } }))
      .status,
    403,
    'general skills are read-only for users',
  );
  t.equal((await svc.request('GET', `/api/v1/skills/not-a-uuid`, { token: u.token })).status, 404);

  const renamed = await svc.request('PATCH', `/api/v1/skills/${mine.body.id}`, {
    token: u.token,
    body: { name: 'Runner 2', description: 'Weekly plan' },
  });
  t.equal(renamed.body.name, 'Runner 2');
  t.equal(renamed.body.prompt, 'Coach my running.');
  t.equal(
    (await svc.request('PATCH', `/api/v1/admin/skills/${mine.body.id}`, { token: a, body: { name: 'x' } })).status,
    404,
    'admin routes see only general skills',
  );
  t.equal(
    (
      await svc.request('PATCH', `/api/v1/admin/skills/${general.body.id}`, {
        token: a,
        body: { prompt: 'Act as a nutritionist.' },
      })
    ).body.prompt,
    'Act as a nutritionist.',
  );
  t.same(
    (await svc.request('GET', '/api/v1/admin/skills', { token: a })).body.skills.map((s: any) => s.name),
    ['Nutrition'],
  );
  t.equal(
    (await svc.request('POST', '/api/v1/skills', { token: u.token, body: { name: '', prompt: 'x' } })).status,
    422,
  );

  // Binding a chat: an accessible skill works; another user's personal skill is refused with 404.
  const chat = await newChat(svc, v.token, { title: 'Food', skill_id: general.body.id });
  t.equal((await svc.request('GET', `/api/v1/chats/${chat}`, { token: v.token })).body.skill_id, general.body.id);
  const refused = await svc.request('PATCH', `/api/v1/chats/${chat}`, {
    token: v.token,
    body: { skill_id: mine.body.id },
  });
  t.equal(refused.status, 404);
  t.equal(refused.body.code, 'skill_not_found');
  t.equal(
    (await svc.request('POST', '/api/v1/chats/', { token: v.token, body: { title: 'x', skill_id: mine.body.id } }))
      .status,
    404,
  );
  t.equal(
    (await svc.request('PATCH', `/api/v1/chats/${chat}`, { token: v.token, body: { skill_id: null } })).body.skill_id,
    null,
  );

  await svc.request('PATCH', `/api/v1/chats/${chat}`, { token: v.token, body: { skill_id: general.body.id } });
  t.equal((await svc.request('DELETE', `/api/v1/admin/skills/${general.body.id}`, { token: a })).status, 204);
  t.equal(
    (await svc.request('GET', `/api/v1/chats/${chat}`, { token: v.token })).body.skill_id,
    null,
    'a deleted skill unbinds its chats',
  );
  t.equal((await svc.request('DELETE', `/api/v1/skills/${mine.body.id}`, { token: u.token })).status, 204);
});

t.test('the context is assembled primary → personal → skill → history → new message', async (t) => {
  const { svc, ai } = await harness(t);
  const u = await newUser(svc);
  await svc.request('PUT', '/api/v1/admin/context', { token: svc.admin.token, body: { content: 'PRIMARY' } });
  await svc.request('PUT', '/api/v1/admin/context', { token: svc.admin.token, body: { content: 'PRIMARY v2' } });
  await svc.request('PUT', '/api/v1/users/me/context', { token: u.token, body: { content: 'PERSONAL' } });
  const skill = await svc.request('POST', '/api/v1/skills/', { token: u.token, body: { name: 's', prompt: 'SKILL' } });
  const chat = await newChat(svc, u.token, { title: 'c', skill_id: skill.body.id });
  await send(svc, u.token, chat, 'first');
  const second = await send(svc, u.token, chat, 'second');
  const body = ai.calls[1]!.body;
  t.same(body.messages, [
    { role: 'system', content: 'PRIMARY v2' },
    { role: 'system', content: 'PERSONAL' },
    { role: 'system', content: 'SKILL' },
    { role: 'user', content: 'first' },
    { role: 'assistant', content: 'Echo: first' },
    { role: 'user', content: 'second' },
  ]);
  t.equal(body.model, 'gpt-4o-mini');
  t.same(
    body.tools.map((x: any) => x.function.name),
    ['generate_health_report'],
    'no search tools: the user has no memory entries or documents',
  );
  t.equal(
    second.events.at(-1)!.data.message.context_version,
    2,
    'the reply records the primary context version it used',
  );

  // Another chat without a skill, and a user without a personal context, leave those parts out.
  const v = await newUser(svc);
  const plain = await newChat(svc, v.token);
  await send(svc, v.token, plain, 'hello');
  t.same(ai.calls[2]!.body.messages, [
    { role: 'system', content: 'PRIMARY v2' },
    { role: 'user', content: 'hello' },
  ]);
});

t.test('history is trimmed to the context budget, newest kept', async (t) => {
  // 300 tokens ≈ 1,200 characters: room for the new message and about two 400-character turns.
  const { svc, ai } = await harness(t, { AI_CONTEXT_TOKENS: '300' });
  const u = await newUser(svc);
  const chat = await newChat(svc, u.token);
  for (const c of ['a', 'b', 'c']) {
    ai.next({ text: `${c.toUpperCase()}`.repeat(400) });
    await send(svc, u.token, chat, c.repeat(400));
  }
  await send(svc, u.token, chat, 'final question');
  const msgs = ai.calls[3]!.body.messages as { role: string; content: string }[];
  t.equal(msgs.at(-1)!.content, 'final question');
  t.same(
    msgs.slice(0, -1).map((m) => m.content[0]),
    ['c', 'C'],
    'only the newest turns that fit are sent, in order',
  );
  const chars = msgs.reduce((n, m) => n + m.content.length, 0);
  t.ok(chars / 4 <= 300, `the request stays within the budget (${chars} chars)`);
});
