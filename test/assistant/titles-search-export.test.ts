import t from 'tap';
import { harness, named, newChat, newUser, send } from './support.ts';

t.test(
  'a chat created without a title gets one generated after the first exchange, counted in the token quota',
  async (t) => {
    const { svc, ai } = await harness(t);
    const u = await newUser(svc);
    const ru = await newUser(svc, { locale: 'ru' });
    const created = await svc.request('POST', '/api/v1/chats', { token: u.token, body: {} });
    t.equal(created.status, 201);
    t.equal(created.body.title, 'New chat');
    t.equal(
      (await svc.request('POST', '/api/v1/chats', { token: ru.token, body: {} })).body.title,
      'Новый чат',
      "in the user's language",
    );
    const chat = created.body.id;

    ai.next(
      { text: 'Penicillin is an antibiotic.', usage: { prompt_tokens: 40, completion_tokens: 8 } },
      { text: '"Penicillin allergy question."\nmore', usage: { prompt_tokens: 30, completion_tokens: 5 } },
    );
    const r = await send(svc, u.token, chat, 'Tell me about penicillin');
    t.equal(r.status, 200);
    t.same(
      r.events.map((e) => e.event).filter((e, i, a) => e !== 'delta' || a[i - 1] !== 'delta'),
      ['start', 'delta', 'done', 'title'],
    );
    t.equal(
      named(r, 'title')[0]!.data.chat.title,
      'Penicillin allergy question',
      'cleaned: one line, no quotes or full stop',
    );
    t.equal(ai.calls.length, 2);
    const titleCall = ai.calls[1]!.body;
    t.equal(ai.calls.filter((c) => c.body.max_tokens === 24).length, 1, 'one title call');
    t.equal(titleCall.max_tokens, 24);
    t.equal(titleCall.tools, undefined);
    t.match(titleCall.messages.at(-1).content, 'Tell me about penicillin');
    t.match(titleCall.messages.at(-1).content, 'Penicillin is an antibiotic.');
    t.equal(
      (await svc.request('GET', `/api/v1/chats/${chat}`, { token: u.token })).body.title,
      'Penicillin allergy question',
    );

    const q = (await svc.request('GET', '/api/v1/chats/quota', { token: u.token })).body;
    t.equal(q.tokens_used, 48 + 35, "the title call's tokens count");
    t.equal(q.messages_used, 1, 'the title call is not a message');
    const usage = (await svc.request('GET', '/api/v1/admin/usage', { token: svc.admin.token })).body;
    t.match(
      usage.models,
      [{ model: 'gpt-4o-mini', messages: 1, tokens: 83 }],
      'the per-model usage counts the title tokens, not a message',
    );

    // One title per chat: the next exchange makes no title call.
    await send(svc, u.token, chat, 'Thanks');
    t.equal(ai.calls.length, 3);
  },
);

t.test('no title is generated for a chat the user named or renamed, nor after a failed reply', async (t) => {
  const { svc, ai } = await harness(t);
  const u = await newUser(svc);
  const named1 = await newChat(svc, u.token, { title: 'My own title' });
  await send(svc, u.token, named1, 'Hello');
  t.equal(ai.calls.length, 1);

  const renamed = (await svc.request('POST', '/api/v1/chats', { token: u.token, body: {} })).body.id;
  t.equal(
    (await svc.request('PATCH', `/api/v1/chats/${renamed}`, { token: u.token, body: { title: 'Renamed' } })).status,
    200,
  );
  const r = await send(svc, u.token, renamed, 'Hello');
  t.equal(named(r, 'title').length, 0);
  t.equal(ai.calls.length, 2);
  t.equal((await svc.request('GET', `/api/v1/chats/${renamed}`, { token: u.token })).body.title, 'Renamed');

  const failing = (await svc.request('POST', '/api/v1/chats', { token: u.token, body: {} })).body.id;
  ai.next({ text: 'Half', dropAfter: 1 });
  await send(svc, u.token, failing, 'Hello');
  t.equal(ai.calls.length, 3, 'no title call after a failed reply');
  t.equal((await svc.request('GET', `/api/v1/chats/${failing}`, { token: u.token })).body.title, 'New chat');
});

t.test(
  "search finds the caller's chat titles and messages, ranked, with snippets and message ids; never another user's",
  async (t) => {
    const { svc } = await harness(t);
    const u = await newUser(svc);
    const v = await newUser(svc);
    const a = await newChat(svc, u.token, { title: 'Penicillin and allergies' });
    const b = await newChat(svc, u.token, { title: 'Holiday plans' });
    await send(svc, u.token, a, 'Is penicillin safe for me?');
    await send(
      svc,
      u.token,
      b,
      `We will travel to the mountains. ${'Filler words about the trip. '.repeat(20)}I should pack my penicillin ` +
        'tablets.',
    );
    await send(svc, u.token, b, 'У меня аллергия на орехи');
    const other = await newChat(svc, v.token, { title: 'Penicillin for the other user' });
    await send(svc, v.token, other, 'penicillin secret of the other user');

    const s = await svc.request('GET', '/api/v1/search?q=penicillin', { token: u.token });
    t.equal(s.status, 200);
    const results = s.body.results as any[];
    t.same(
      results[0],
      {
        chat_id: a,
        chat_title: 'Penicillin and allergies',
        message_id: null,
        role: null,
        snippet: 'Penicillin and allergies',
        created_at: results[0].created_at,
      },
      'title hits first',
    );
    const messages = results.filter((x) => x.message_id);
    t.ok(messages.length >= 3, 'user messages and the echoed replies');
    t.ok(messages.every((x) => x.chat_id === a || x.chat_id === b));
    t.notMatch(s.text, /other user/);
    const long = messages.find((x) => x.chat_id === b && x.role === 'user')!;
    t.match(long.snippet, /pack my penicillin/, 'the snippet shows where the word is');
    t.ok(long.snippet.length <= 160);
    t.match(long.snippet, /^…/);
    const history = await svc.request('GET', `/api/v1/chats/${b}/messages`, { token: u.token });
    t.ok(
      history.body.messages.some((m: any) => m.id === long.message_id),
      'the message id opens that message',
    );

    t.same(
      (await svc.request('GET', '/api/v1/search?q=аллергии', { token: u.token })).body.results.map(
        (x: any) => x.chat_id,
      ),
      [b, b],
      'Russian word forms match (message and echo)',
    );
    t.same(
      (await svc.request('GET', '/api/v1/search?q=penicillin%20mountains', { token: u.token })).body.results
        .map((x: any) => x.role)
        .sort(),
      ['assistant', 'user'],
      'every word must occur',
    );
    t.same(
      (await svc.request('GET', '/api/v1/search?q=penicillin', { token: v.token })).body.results.map(
        (x: any) => x.chat_id,
      ),
      [other, other, other],
    );
    t.equal((await svc.request('GET', '/api/v1/search?q=', { token: u.token })).status, 422);
    t.same(
      (await svc.request('GET', '/api/v1/search?q=%22%2A%3A', { token: u.token })).body.results,
      [],
      'no words, no results',
    );
    t.equal((await svc.request('GET', '/api/v1/search?q=x')).status, 401);

    // Renamed titles and deleted chats are searched as they are now.
    await svc.request('PATCH', `/api/v1/chats/${b}`, { token: u.token, body: { title: 'Mountain trip' } });
    t.equal(
      (await svc.request('GET', '/api/v1/search?q=mountain', { token: u.token })).body.results[0].chat_title,
      'Mountain trip',
    );
    await svc.request('DELETE', `/api/v1/chats/${a}`, { token: u.token });
    t.notOk(
      (await svc.request('GET', '/api/v1/search?q=penicillin', { token: u.token })).body.results.some(
        (x: any) => x.chat_id === a,
      ),
    );
  },
);

t.test('a chat exports as Markdown and as JSON, owner only', async (t) => {
  const { svc, ai } = await harness(t);
  const u = await newUser(svc);
  const v = await newUser(svc);
  await svc.request('POST', '/api/v1/memory', { token: u.token, body: { content: 'Allergic to penicillin' } });
  const chat = await newChat(svc, u.token, { title: 'Allergy chat' });
  ai.next({ toolCall: { name: 'search_memory', arguments: JSON.stringify({ query: 'allergy' }) } });
  await send(svc, u.token, chat, 'What am I allergic to?');

  const md = await fetch(`${svc.url}/api/v1/chats/${chat}/export?format=markdown`, {
    headers: { authorization: `Bearer ${u.token}` },
  });
  t.equal(md.status, 200);
  t.match(md.headers.get('content-type'), /^text\/markdown/);
  t.match(md.headers.get('content-disposition'), /^attachment; filename="Allergy-chat\.md"/);
  const body = await md.text();
  t.match(body, /^# Allergy chat\n/);
  t.match(body, /## You · \d{4}-\d\d-\d\d \d\d:\d\d UTC\n\nWhat am I allergic to\?/);
  t.match(body, '## Assistant');
  t.match(body, '> Searched memory for “allergy”: 1 entry');
  t.match(body, 'From your memory: Allergic to penicillin');

  const js = await fetch(`${svc.url}/api/v1/chats/${chat}/export?format=json`, {
    headers: { authorization: `Bearer ${u.token}` },
  });
  t.equal(js.status, 200);
  t.match(js.headers.get('content-disposition'), /attachment; filename="Allergy-chat\.json"/);
  const data = await js.json();
  t.equal(data.chat.id, chat);
  t.same(
    data.messages.map((m: any) => m.role),
    ['user', 'assistant'],
  );
  t.match(data.messages[1].tools, [{ name: 'search_memory', query: 'allergy', count: 1 }]);

  const ru = await newUser(svc, { locale: 'ru' });
  await svc.request('POST', '/api/v1/memory', { token: ru.token, body: { content: 'Давление 120/80' } });
  const ruChat = await newChat(svc, ru.token, { title: 'Аллергия' });
  ai.next({ toolCall: { name: 'search_memory', arguments: JSON.stringify({ query: 'аллергия' }) } });
  await send(svc, ru.token, ruChat, 'На что у меня аллергия?');
  const ruMd = await fetch(`${svc.url}/api/v1/chats/${ruChat}/export`, {
    headers: { authorization: `Bearer ${ru.token}` },
  });
  const ruText = await ruMd.text();
  t.match(ruText, '## Вы');
  t.match(ruText, 'Поиск в памяти «аллергия»: 0 записей', 'Russian plural form');
  t.match(ruMd.headers.get('content-disposition'), /filename\*=UTF-8''%D0%90/);

  t.equal(
    (await svc.request('GET', `/api/v1/chats/${chat}/export`, { token: v.token })).status,
    404,
    "another user's chat",
  );
  t.equal((await svc.request('GET', `/api/v1/chats/${chat}/export?format=pdf`, { token: u.token })).status, 422);
});
