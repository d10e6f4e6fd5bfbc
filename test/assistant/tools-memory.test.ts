import PDFDocument from 'pdfkit';
import t from 'tap';
import { harness, named, newChat, newUser, send, text, upload } from './support.ts';

/** A PDF whose pages hold the given lines (one array per page). */
function makePdf(pages: string[][]): Promise<Buffer> {
  const doc = new PDFDocument();
  const chunks: Buffer[] = [];
  doc.on('data', (c: Buffer) => chunks.push(c));
  const done = new Promise<Buffer>((r) => doc.on('end', () => r(Buffer.concat(chunks))));
  doc.font('/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf');
  pages.forEach((lines, i) => {
    if (i) doc.addPage();
    for (const l of lines) doc.text(l);
  });
  doc.end();
  return done;
}

const call = (name: string, query: string) => ({ toolCall: { name, arguments: JSON.stringify({ query }), pieces: 2 } });
const toolMessages = (body: any) =>
  (body.messages as any[]).filter((m) => m.role === 'tool').map((m) => JSON.parse(m.content));

t.test(
  "search_memory: the tool result with the caller's fact reaches the model, another user's identical fact never does",
  async (t) => {
    const { svc, ai } = await harness(t);
    const u = await newUser(svc);
    const v = await newUser(svc);
    for (const [who, content] of [
      [u, 'Allergic to penicillin since childhood'],
      [v, 'Allergic to penicillin since childhood'],
      [v, 'Allergic to peanuts, secret of the other user'],
    ] as const) {
      t.equal(
        (await svc.request('POST', '/api/v1/memory', { token: who.token, body: { content, category: 'Allergies' } }))
          .status,
        201,
      );
    }
    t.equal(
      (await svc.request('POST', '/api/v1/memory', { token: u.token, body: { content: 'Blood pressure 120/80' } }))
        .status,
      201,
    );
    const chat = await newChat(svc, u.token);
    ai.next(call('search_memory', 'allergy'));
    const r = await send(svc, u.token, chat, 'What am I allergic to?');
    t.equal(r.status, 200);
    t.equal(ai.calls.length, 2);
    const offered = ai.calls[0]!.body.tools.map((x: any) => x.function.name).sort();
    t.same(
      offered,
      ['generate_health_report', 'search_memory'],
      'the memory search is offered (no documents: no document search)',
    );
    const results = toolMessages(ai.calls[1]!.body);
    t.equal(results.length, 1);
    t.same(
      results[0].entries.map((e: any) => e.content),
      ['Allergic to penicillin since childhood'],
      "only the caller's matching entry",
    );
    t.equal(results[0].entries[0].category, 'Allergies');
    t.notMatch(
      JSON.stringify(ai.calls[1]!.body),
      /peanuts|secret of the other user/,
      'nothing of the other user is sent',
    );
    t.match(text(r), 'From your memory: Allergic to penicillin since childhood', 'the reply used the tool result');

    const done = named(r, 'tool').find((e) => e.data.status === 'done')!.data;
    t.match(done, { name: 'search_memory', query: 'allergy', count: 1, arguments: { query: 'allergy' } });
    t.equal(done.result, undefined, 'the result itself is not streamed to the client');
    const message = named(r, 'done')[0]!.data.message;
    t.match(message.tools, [{ name: 'search_memory', status: 'done', query: 'allergy', count: 1 }]);
    const history = await svc.request('GET', `/api/v1/chats/${chat}/messages`, { token: u.token });
    t.match(
      history.body.messages.at(-1).tools,
      [{ name: 'search_memory', status: 'done', query: 'allergy', count: 1 }],
      'the tool call is stored with the reply',
    );
    t.notOk('result' in history.body.messages.at(-1).tools[0]);

    // Tokens of both rounds are counted, once.
    const q = (await svc.request('GET', '/api/v1/chats/quota', { token: u.token })).body;
    t.equal(q.messages_used, 1);
    t.equal(q.tokens_used, message.usage.total_tokens);
    t.ok(message.usage.total_tokens > ai.calls[0]!.body.messages.length, 'usage covers the rounds');

    // A user with nothing to search is offered only the report tool.
    const w = await newUser(svc);
    await send(svc, w.token, await newChat(svc, w.token), 'Hello');
    t.same(
      ai.calls[2]!.body.tools.map((x: any) => x.function.name),
      ['generate_health_report'],
      'no search tools without memory or documents',
    );

    // The other user asking the same finds only their own entries.
    const chatV = await newChat(svc, v.token);
    ai.next(call('search_memory', 'allergic penicillin peanuts'));
    const rv = await send(svc, v.token, chatV, 'What am I allergic to?');
    const resultsV = toolMessages(ai.calls[4]!.body)[0];
    t.equal(resultsV.entries.length, 2);
    t.match(text(rv), 'peanuts');
  },
);

t.test("search_documents: excerpts with the document name and page, only the caller's documents", async (t) => {
  const { svc, ai } = await harness(t);
  const u = await newUser(svc);
  const v = await newUser(svc);
  const pdf = await makePdf([
    ['Laboratory report', 'Patient details and the clinic address.'],
    ['Results', 'Ferritin 12 ng/ml, below the reference range.'],
  ]);
  t.equal((await upload(svc, u.token, 'labs-2030.pdf', pdf, 'application/pdf')).status, 201);
  t.equal(
    (await upload(svc, u.token, 'diet.md', '# Diet\n\nEat more spinach for iron.\n', 'text/markdown')).status,
    201,
  );
  t.equal((await upload(svc, v.token, 'other-labs.pdf', pdf, 'application/pdf')).status, 201);
  const chat = await newChat(svc, u.token);
  ai.next(call('search_documents', 'ferritin'));
  const r = await send(svc, u.token, chat, 'What was my ferritin?');
  t.equal(r.status, 200);
  const result = toolMessages(ai.calls[1]!.body)[0];
  t.equal(result.excerpts.length, 1, "one excerpt: the other user's identical document is not searched");
  t.match(result.excerpts[0], { document: 'labs-2030.pdf', page: 2 });
  t.match(result.excerpts[0].excerpt, /Ferritin 12 ng\/ml/);
  t.notMatch(JSON.stringify(ai.calls[1]!.body), /other-labs/);
  t.match(text(r), 'labs-2030.pdf p.2: ');
  t.match(named(r, 'done')[0]!.data.message.tools, [{ name: 'search_documents', query: 'ferritin', count: 1 }]);

  // Text documents have no page; Russian and English words match their other forms.
  ai.next(call('search_documents', 'spinach iron'));
  await send(svc, u.token, chat, 'Diet?');
  t.match(toolMessages(ai.calls[3]!.body)[0].excerpts, [{ document: 'diet.md', page: null }]);

  t.equal((await upload(svc, u.token, 'аллергия.txt', 'Аллергия на пенициллин подтверждена в 2029 году.')).status, 201);
  ai.next(call('search_documents', 'аллергии'));
  await send(svc, u.token, chat, 'Что с аллергией?');
  t.match(toolMessages(ai.calls[5]!.body)[0].excerpts, [
    { document: 'аллергия.txt', page: null, excerpt: /пенициллин/ },
  ]);

  // Deleting a document removes its chunks from the search.
  const docs = (await svc.request('GET', '/api/v1/documents', { token: u.token })).body.documents;
  const labs = docs.find((d: any) => d.filename === 'labs-2030.pdf');
  t.equal((await svc.request('DELETE', `/api/v1/documents/${labs.id}`, { token: u.token })).status, 204);
  ai.next(call('search_documents', 'ferritin'));
  await send(svc, u.token, chat, 'And now?');
  t.same(toolMessages(ai.calls[7]!.body)[0].excerpts, []);
});

t.test('memory entries marked always_include go into the personal layer, bounded to the caller', async (t) => {
  const { svc, ai } = await harness(t);
  const u = await newUser(svc);
  const v = await newUser(svc);
  await svc.request('PUT', '/api/v1/users/me/context', {
    token: u.token,
    body: { content: 'I prefer short answers.' },
  });
  const a = await svc.request('POST', '/api/v1/memory', {
    token: u.token,
    body: { content: 'Type 1 diabetes', category: 'Conditions', always_include: true },
  });
  t.equal(a.body.always_include, true);
  const b = await svc.request('POST', '/api/v1/memory', { token: u.token, body: { content: 'Broke a toe in 2020' } });
  t.equal(b.body.always_include, false);
  await svc.request('POST', '/api/v1/memory', {
    token: v.token,
    body: { content: 'Other user condition', always_include: true },
  });
  const chat = await newChat(svc, u.token);
  await send(svc, u.token, chat, 'Hello');
  const system = (ai.calls[0]!.body.messages as any[])
    .filter((m) => m.role === 'system')
    .map((m) => m.content)
    .join('\n');
  t.match(system, 'I prefer short answers.');
  t.match(system, '[Conditions] Type 1 diabetes');
  t.notMatch(system, 'Broke a toe');
  t.notMatch(system, 'Other user condition');

  t.equal(
    (await svc.request('PATCH', `/api/v1/memory/${a.body.id}`, { token: u.token, body: { always_include: false } }))
      .body.always_include,
    false,
  );
  t.equal(
    (await svc.request('PATCH', `/api/v1/memory/${b.body.id}`, { token: u.token, body: { always_include: true } })).body
      .always_include,
    true,
  );
  await send(svc, u.token, chat, 'Again');
  const system2 = (ai.calls[1]!.body.messages as any[])
    .filter((m) => m.role === 'system')
    .map((m) => m.content)
    .join('\n');
  t.notMatch(system2, 'diabetes');
  t.match(system2, 'Broke a toe in 2020');
});

t.test('tool rounds are bounded by AI_MAX_TOOL_ROUNDS and every round counts toward the quota', async (t) => {
  const { svc, ai } = await harness(t, { AI_MAX_TOOL_ROUNDS: '2' });
  const u = await newUser(svc);
  await svc.request('POST', '/api/v1/memory', { token: u.token, body: { content: 'Allergic to penicillin' } });
  const chat = await newChat(svc, u.token);
  // A model that keeps asking for the tool.
  ai.setScript(() => ({
    ...call('search_memory', 'penicillin'),
    usage: { prompt_tokens: 100, completion_tokens: 10 },
  }));
  const r = await send(svc, u.token, chat, 'Loop please');
  t.equal(r.status, 200);
  t.equal(ai.calls.length, 3, 'two tool rounds, then one last call');
  t.ok(ai.calls[0]!.body.tools && ai.calls[1]!.body.tools, 'tools offered in the allowed rounds');
  t.equal(ai.calls[2]!.body.tools, undefined, 'the last call is offered no tools');
  const message = named(r, 'done')[0]!.data.message;
  t.equal(message.usage.total_tokens, 330, 'three rounds of 110 tokens');
  t.equal(message.tools.length, 2);
  const q = (await svc.request('GET', '/api/v1/chats/quota', { token: u.token })).body;
  t.equal(q.tokens_used, 330);
  t.equal(q.messages_used, 1);
});

t.test('search queries cannot break the full-text syntax', async (t) => {
  const { svc, ai } = await harness(t);
  const u = await newUser(svc);
  await svc.request('POST', '/api/v1/memory', {
    token: u.token,
    body: { content: 'NEAR the clinic: pressure & pulse! "quoted" text*' },
  });
  await upload(svc, u.token, 'notes.txt', 'NEAR the clinic: pressure & pulse! "quoted" text*');
  const chat = await newChat(svc, u.token);
  const nasty = [
    '"',
    '*',
    ':',
    'NEAR',
    '&',
    '!',
    'a" OR "b',
    'NEAR(pressure pulse)',
    'pressure:* | pulse',
    '!!&&::',
    "'; DROP TABLE memory_entries; --",
    '(',
    'AND OR NOT',
    '^pressure',
    '-pulse',
  ];
  for (const q of nasty) {
    ai.next(call('search_memory', q));
    const r = await send(svc, u.token, chat, 'x');
    t.equal(r.status, 200, `memory: ${q}`);
    t.equal(named(r, 'done')[0]?.data.message.status, 'complete', `memory reply completes: ${q}`);
    const hasWords = /[\p{L}\p{N}]/u.test(q);
    t.equal(
      named(r, 'tool').at(-1)?.data.status,
      hasWords ? 'done' : 'failed',
      `the search ran (or was refused for having no words): ${q}`,
    );
    t.notMatch(ai.calls.at(-1)!.body.messages.at(-1).content, 'The search failed', `no database error: ${q}`);
    ai.next(call('search_documents', q));
    const d = await send(svc, u.token, chat, 'y');
    t.equal(named(d, 'done')[0]?.data.message.status, 'complete', `documents reply completes: ${q}`);
    const s = await svc.request('GET', `/api/v1/search?q=${encodeURIComponent(q)}`, { token: u.token });
    t.equal(s.status, 200, `search route: ${q}`);
  }
  ai.next(call('search_memory', 'NEAR'));
  await send(svc, u.token, chat, 'z');
  t.equal(toolMessages(ai.calls.at(-1)!.body)[0].entries.length, 1, 'NEAR is searched as a word');
  const stillThere = await svc.request('GET', '/api/v1/memory', { token: u.token });
  t.equal(stillThere.body.entries.length, 1);
});
