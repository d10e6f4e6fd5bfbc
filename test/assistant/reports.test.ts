import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import type { TestService } from '../helpers/service.ts';
import { download, harness, named, newChat, newUser, pdfText, send, text, upload, workerRunning } from './support.ts';

async function seedEnglish(svc: TestService, token: string) {
  for (const body of [
    { content: 'Blood pressure 120/80', category: 'Measurements', recorded_at: '2030-01-05' },
    { content: 'Started vitamin D', category: 'Medication', recorded_at: '2030-01-02T08:30:00Z' },
    { content: 'Feeling well overall' },
  ])
    t.equal((await svc.request('POST', '/api/v1/memory', { token, body })).status, 201);
  const doc = await upload(
    svc,
    token,
    'cardiology.md',
    '# Cardiology letter\n\nThe patient blood pressure was stable at every visit this winter.\n\nParking is ' +
      'available behind the clinic building.\n',
    'text/markdown',
  );
  t.equal(doc.status, 201);
}

t.test(
  'the model calls generate_health_report mid-reply: tool events, a downloadable report, a linked answer',
  async (t) => {
    const { svc, ai } = await harness(t);
    const u = await newUser(svc);
    await seedEnglish(svc, u.token);
    const chat = await newChat(svc, u.token);
    const r = await send(svc, u.token, chat, 'Please make me a health report');
    t.equal(r.status, 200);
    t.same(
      r.events
        .map((e) => (e.event === 'tool' ? `tool:${e.data.status}` : e.event))
        .filter((e, i, a) => e !== 'delta' || a[i - 1] !== 'delta'),
      ['start', 'tool:started', 'tool:done', 'delta', 'done'],
    );
    const done = named(r, 'tool').find((e) => e.data.status === 'done')!.data;
    t.equal(done.name, 'generate_health_report');
    t.match(done.report_id, /^[0-9a-f-]{36}$/);
    const link = `/api/v1/reports/${done.report_id}/download`;
    const message = named(r, 'done')[0]!.data.message;
    t.equal(message.status, 'complete');
    t.same(
      message.attachments,
      [{ type: 'report', report_id: done.report_id, title: 'Health report' }],
      'the answer carries the report as its attachment',
    );

    // The second model call continues the conversation with the tool call and its result.
    t.equal(ai.calls.length, 2);
    const followUp = ai.calls[1]!.body.messages as any[];
    const call = followUp.at(-2);
    t.equal(call.role, 'assistant');
    t.equal(call.tool_calls[0].function.name, 'generate_health_report');
    t.same(
      JSON.parse(call.tool_calls[0].function.arguments),
      { title: 'Health report' },
      'the argument fragments were joined',
    );
    const result = followUp.at(-1);
    t.equal(result.role, 'tool');
    t.equal(result.tool_call_id, call.tool_calls[0].id);
    t.same(JSON.parse(result.content), { report_id: done.report_id, title: 'Health report', download_url: link });
    // Usage covers both calls and is counted once.
    const q = (await svc.request('GET', '/api/v1/chats/quota', { token: u.token })).body;
    t.equal(q.messages_used, 1);
    t.equal(q.tokens_used, message.usage.total_tokens);
    t.equal(message.usage.estimated, false);

    const list = await svc.request('GET', '/api/v1/reports', { token: u.token });
    t.equal(list.body.reports.length, 1);
    t.same(Object.keys(list.body.reports[0]).sort(), ['created_at', 'id', 'locale', 'size_bytes', 'title']);
    t.notMatch(list.text, svc.dataDir, 'no storage path');
    t.notMatch(list.text, /\.pdf/);
    const file = path.join(svc.dataDir, 'reports', u.id, `${done.report_id}.pdf`);
    t.ok(fs.existsSync(file), 'stored under <dataDir>/reports/<user>/<id>.pdf');

    const dl = await download(svc, u.token, done.report_id);
    t.equal(dl.status, 200);
    t.equal(dl.headers.get('content-type'), 'application/pdf');
    t.match(dl.headers.get('content-disposition'), /attachment/);
    t.equal(dl.body.subarray(0, 5).toString(), '%PDF-');
    t.equal(dl.body.length, list.body.reports[0].size_bytes);
    const pdf = await pdfText(dl.body);
    for (const s of [
      'Health report',
      'Notes by category',
      'Measurements',
      'Medication',
      'Uncategorized',
      'Blood pressure 120/80',
      'Timeline',
      'Document excerpts',
      'Source: cardiology.md',
      'Sources',
      u.email,
    ])
      t.match(pdf, s, `the PDF shows "${s}"`);
    const timeline = pdf.slice(pdf.indexOf('Timeline'));
    t.ok(timeline.indexOf('2030-01-02 08:30') < timeline.indexOf('2030-01-05'), 'the timeline is in date order');
    t.match(pdf, /blood pressure was stable/, 'the relevant excerpt is quoted');
    t.notMatch(pdf, /Parking is available/, 'the irrelevant paragraph is left out');
  },
);

t.test('users generate, list and download reports; Russian text renders and extracts', async (t) => {
  const { svc } = await harness(t);
  const u = await newUser(svc, { locale: 'ru' });
  const v = await newUser(svc);
  await svc.request('POST', '/api/v1/memory', {
    token: u.token,
    body: { content: 'Давление 130/85 утром', category: 'Измерения', recorded_at: '2030-02-01' },
  });
  await svc.request('POST', '/api/v1/memory', {
    token: u.token,
    body: { content: 'Начала принимать витамин D', category: 'Лекарства', recorded_at: '2030-01-15' },
  });
  await upload(svc, u.token, 'анализы.txt', 'Результаты анализов: давление и пульс в норме, витамин D понижен.\n');
  const created = await svc.request('POST', '/api/v1/reports', { token: u.token, body: {} });
  t.equal(created.status, 201);
  t.equal(created.body.locale, 'ru', "the user's language by default");
  t.equal(created.body.title, 'Сводка о здоровье');
  t.ok(created.body.size_bytes > 1000);
  const pdf = await pdfText((await download(svc, u.token, created.body.id)).body);
  for (const s of [
    'Сводка о здоровье',
    'Заметки по категориям',
    'Измерения',
    'Давление 130/85 утром',
    'Хронология',
    'Выдержки из документов',
    'Источник: анализы.txt',
    'Источники',
  ]) {
    t.match(pdf, s, `the PDF shows "${s}"`);
  }

  const en = await svc.request('POST', '/api/v1/reports/', {
    token: u.token,
    body: { title: 'For my doctor', locale: 'en' },
  });
  t.equal(en.status, 201);
  t.equal(en.body.locale, 'en');
  const enText = await pdfText((await download(svc, u.token, en.body.id)).body);
  t.match(enText, 'For my doctor');
  t.match(enText, 'Notes by category');
  t.match(enText, 'Давление 130/85 утром', 'user text stays as written');
  t.same(
    (await svc.request('GET', '/api/v1/reports', { token: u.token })).body.reports.map((r: any) => r.id),
    [en.body.id, created.body.id],
  );

  t.equal((await svc.request('POST', '/api/v1/reports', { token: u.token, body: { locale: 'de' } })).status, 422);
  t.equal(
    (await svc.request('GET', `/api/v1/reports/${en.body.id}`, { token: v.token })).status,
    404,
    "another user's report is 404",
  );
  t.equal((await download(svc, v.token, en.body.id)).status, 404);
  t.equal((await download(svc, u.token, 'nope')).status, 404);
  t.same((await svc.request('GET', '/api/v1/reports', { token: v.token })).body.reports, []);
  t.equal((await svc.request('DELETE', `/api/v1/reports/${en.body.id}`, { token: u.token })).status, 204);
  t.notOk(fs.existsSync(path.join(svc.dataDir, 'reports', u.id, `${en.body.id}.pdf`)), 'the file goes with it');
});

t.test('without the font, reports fail clearly and the tool reports failure', async (t) => {
  const before = process.env.HERALD_REPORT_FONT;
  process.env.HERALD_REPORT_FONT = '/nonexistent/DejaVuSans.ttf';
  t.teardown(() => {
    if (before === undefined) delete process.env.HERALD_REPORT_FONT;
    else process.env.HERALD_REPORT_FONT = before;
  });
  const { svc } = await harness(t);
  const u = await newUser(svc);
  const r = await svc.request('POST', '/api/v1/reports', { token: u.token, body: {} });
  t.equal(r.status, 503);
  t.equal(r.body.code, 'report_font_missing');
  t.match(r.body.detail, /fonts-dejavu-core/);
  const chat = await newChat(svc, u.token);
  const s = await send(svc, u.token, chat, 'report please');
  t.same(
    named(s, 'tool').map((e) => e.data.status),
    ['started', 'failed'],
  );
  t.match(text(s), /The report failed/);
  t.equal(named(s, 'done')[0]!.data.message.status, 'complete');
  t.same((await svc.request('GET', '/api/v1/reports', { token: u.token })).body.reports, []);
});

t.test("the report is the answer's attachment, its text stays the model's own", async (t) => {
  const { svc, ai } = await harness(t);
  const u = await newUser(svc);
  const chat = await newChat(svc, u.token);
  ai.setScript((body) =>
    body.messages.at(-1).role === 'tool'
      ? { text: 'Done.' }
      : {
          text: 'Let me compile that. ',
          toolCall: { name: 'generate_health_report', arguments: '{"title":"Yearly","locale":"ru"}' },
        },
  );
  const r = await send(svc, u.token, chat, 'compile everything');
  const id = named(r, 'tool').find((e) => e.data.status === 'done')!.data.report_id;
  const message = named(r, 'done')[0]!.data.message;
  t.equal(message.content, 'Done.', 'no link written into the text: the download card is the link');
  t.same(message.attachments, [{ type: 'report', report_id: id, title: 'Yearly' }]);
  t.equal(text(r), message.content, 'the streamed text equals the saved text');
  const report = await svc.request('GET', `/api/v1/reports/${id}`, { token: u.token });
  t.match(report.body, { title: 'Yearly', locale: 'ru' }, 'the tool arguments were honoured');
});

t.test('the OpenAPI document lists the assistant routes', async (t) => {
  const { svc } = await harness(t);
  const doc = await svc.request('GET', '/api/docs/json');
  t.equal(doc.status, 200);
  for (const p of [
    '/api/v1/chats/',
    '/api/v1/chats/quota',
    '/api/v1/chats/{chat_id}/messages',
    '/api/v1/skills/',
    '/api/v1/admin/skills/{skill_id}',
    '/api/v1/admin/context',
    '/api/v1/users/me/context',
    '/api/v1/admin/usage',
    '/api/v1/memory/{id}',
    '/api/v1/documents',
    '/api/v1/reports/{report_id}/download',
    '/api/v1/admin/users/{user_id}',
    '/api/v1/admin/settings',
  ])
    t.ok(doc.body.paths[p] || doc.body.paths[p.replace(/\/$/, '')], p);
});

t.test(
  'a report of very long unbroken words is drawn off the event loop, wrapped, and within its limits',
  async (t) => {
    const { svc } = await harness(t);
    const u = await newUser(svc);
    // The longest a memory entry may be, as one word: pdfkit alone took minutes to wrap it on the event loop.
    const word = 'Z'.repeat(32_000);
    t.equal(
      (await svc.request('POST', '/api/v1/memory', { token: u.token, body: { content: word, category: 'Long' } }))
        .status,
      201,
    );
    let healthAt = 0;
    let reportAt = 0;
    const { REPORT_LIMITS } = await import('../../core/src/assistant/reports.ts');
    const drawing = workerRunning('the report to be drawn in a worker', REPORT_LIMITS.heapMb);
    const report = svc
      .request('POST', '/api/v1/reports', { token: u.token, body: { title: 'Long words' } })
      .then((r) => {
        reportAt = performance.now();
        return r;
      });
    // Asked once the worker runs: a fixed 50 ms could come before the request reached it, on a loaded machine.
    await drawing;
    const health = await svc.request('GET', '/api/health');
    healthAt = performance.now();
    const created = await report;
    t.equal(health.status, 200);
    t.ok(healthAt < reportAt, 'the service answered while the report was drawn');
    t.equal(created.status, 201, JSON.stringify(created.body));
    const pdf = await pdfText((await download(svc, u.token, created.body.id)).body);
    t.equal(pdf.match(/Z/g)?.length, word.length, 'every character of the word is in the PDF');
    const lines = pdf.split('\n').filter((l) => /Z/.test(l));
    t.ok(lines.length > 100, `wrapped over lines (${lines.length})`);

    // The limits: a report that cannot be drawn in time is refused with a clear 422, and nothing is stored.
    const seconds = REPORT_LIMITS.seconds;
    REPORT_LIMITS.seconds = 0.01;
    t.teardown(() => {
      REPORT_LIMITS.seconds = seconds;
    });
    const slow = await svc.request('POST', '/api/v1/reports', { token: u.token, body: { title: 'Too slow' } });
    REPORT_LIMITS.seconds = seconds;
    t.equal(slow.status, 422);
    t.match(slow.body, { code: 'report_too_costly', params: { seconds: 0.01, memory_mb: REPORT_LIMITS.heapMb } });
    t.match(slow.body.detail, /^Drawing the report took more than 0\.01 seconds or 512 MB of memory; /);
    const list = (await svc.request('GET', '/api/v1/reports', { token: u.token })).body.reports;
    t.same(
      list.map((r: any) => r.title),
      ['Long words'],
      'the refused report is not stored',
    );
  },
);
