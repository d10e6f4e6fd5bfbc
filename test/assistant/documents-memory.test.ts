import PDFDocument from 'pdfkit';
import t from 'tap';
import { harness, newUser, upload } from './support.ts';

function makePdf(lines: string[]): Promise<Buffer> {
  const doc = new PDFDocument();
  const chunks: Buffer[] = [];
  doc.on('data', (c: Buffer) => chunks.push(c));
  const done = new Promise<Buffer>((r) => doc.on('end', () => r(Buffer.concat(chunks))));
  doc.font('/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf');
  for (const l of lines) doc.text(l);
  doc.end();
  return done;
}

t.test('memory entries: create, read, update, delete, search; owner only', async (t) => {
  const { svc } = await harness(t);
  const u = await newUser(svc);
  const v = await newUser(svc);
  const a = await svc.request('POST', '/api/v1/memory', {
    token: u.token,
    body: { content: 'Давление 120/80', category: 'Измерения', recorded_at: '2030-03-01T09:15:00+03:00' },
  });
  t.equal(a.status, 201);
  t.match(a.body, { content: 'Давление 120/80', category: 'Измерения', recorded_at: '2030-03-01T06:15:00.000Z' });
  const b = await svc.request('POST', '/api/v1/memory/', {
    token: u.token,
    body: { content: 'Knee surgery', category: 'Events', recorded_at: '2029-11-20' },
  });
  t.equal(b.body.recorded_at, '2029-11-20', 'a calendar date stays a date');
  const c = await svc.request('POST', '/api/v1/memory', {
    token: u.token,
    body: { content: 'Allergic to 100% of cats_dogs' },
  });
  t.same([c.body.category, c.body.recorded_at], [null, null]);

  const list = async (q = '', token = u.token) =>
    (await svc.request('GET', `/api/v1/memory${q}`, { token })).body.entries.map((e: any) => e.content);
  t.same(await list(), ['Allergic to 100% of cats_dogs', 'Knee surgery', 'Давление 120/80']);
  t.same(await list('?q=ДАВЛЕНИЕ'), ['Давление 120/80'], 'search ignores case, Cyrillic included');
  t.same(await list('?q=knee'), ['Knee surgery']);
  t.same(await list('?q=events'), ['Knee surgery'], 'the category is searched too');
  t.same(await list(`?q=${encodeURIComponent('%')}`), ['Allergic to 100% of cats_dogs'], 'wildcards are literal');
  t.same(await list('?q=s_d'), ['Allergic to 100% of cats_dogs']);
  t.same(await list('?q=s_k'), []);
  t.same(await list(`?category=${encodeURIComponent('Измерения')}`), ['Давление 120/80']);
  t.same(await list('', v.token), [], 'not visible to another user');

  const patched = await svc.request('PATCH', `/api/v1/memory/${b.body.id}`, {
    token: u.token,
    body: { content: 'Left knee surgery', recorded_at: null },
  });
  t.match(patched.body, { content: 'Left knee surgery', category: 'Events', recorded_at: null });
  t.same(await list('?q=left'), ['Left knee surgery'], 'search follows the update');
  t.equal(
    (await svc.request('PATCH', `/api/v1/memory/${b.body.id}`, { token: v.token, body: { content: 'x' } })).status,
    404,
  );
  t.equal((await svc.request('DELETE', `/api/v1/memory/${b.body.id}`, { token: v.token })).status, 404);
  t.equal((await svc.request('PATCH', '/api/v1/memory/123', { token: u.token, body: { content: 'x' } })).status, 404);
  for (const body of [
    { content: '' },
    { content: 'x'.repeat(32_001) },
    { content: 'x', recorded_at: '2030-13-01' },
    { content: 'x', recorded_at: 'yesterday' },
    { content: 'x', mood: 'good' },
  ]) {
    t.equal(
      (await svc.request('POST', '/api/v1/memory', { token: u.token, body })).status,
      422,
      `refused: ${JSON.stringify(body).slice(0, 60)}`,
    );
  }
  t.equal((await svc.request('DELETE', `/api/v1/memory/${b.body.id}`, { token: u.token })).status, 204);
  t.same(await list(), ['Allergic to 100% of cats_dogs', 'Давление 120/80']);
});

t.test(
  'documents: text, Markdown and PDF are extracted and searchable; other types 415; over 10 MiB 413',
  async (t) => {
    const { svc } = await harness(t);
    const u = await newUser(svc);
    const v = await newUser(svc);
    const txt = await upload(svc, u.token, 'notes.txt', 'Morning run, 5 km.\nResting pulse 58.');
    t.equal(txt.status, 201);
    t.match(txt.body, { filename: 'notes.txt', media_type: 'text/plain', size_bytes: 36 });
    t.notOk('content' in txt.body, 'the list shape leaves the text out');
    const md = await upload(
      svc,
      u.token,
      'plan.md',
      '# Diet\n\n- less sugar\n- more **fibre**',
      'application/octet-stream',
    );
    t.equal(md.status, 201, 'Markdown is recognised by its extension');
    t.equal(md.body.media_type, 'text/markdown');
    const pdf = await upload(
      svc,
      u.token,
      'lab.pdf',
      await makePdf(['Lipid panel', 'Холестерин 5,2 ммоль/л']),
      'application/pdf',
    );
    t.equal(pdf.status, 201);
    t.equal(pdf.body.media_type, 'application/pdf');

    const get = await svc.request('GET', `/api/v1/documents/${pdf.body.id}`, { token: u.token });
    t.match(get.body.content, /Lipid panel/);
    t.match(get.body.content, /Холестерин 5,2/, 'PDF text, Cyrillic included, is extracted');
    const search = await svc.request('GET', '/api/v1/documents?q=холестерин', { token: u.token });
    t.same(
      search.body.documents.map((d: any) => d.filename),
      ['lab.pdf'],
    );
    t.match(search.body.documents[0].excerpt, /Холестерин/);
    t.same(
      (await svc.request('GET', '/api/v1/documents?q=FIBRE', { token: u.token })).body.documents.map(
        (d: any) => d.filename,
      ),
      ['plan.md'],
    );
    t.same(
      (await svc.request('GET', '/api/v1/documents', { token: u.token })).body.documents.map((d: any) => d.filename),
      ['lab.pdf', 'plan.md', 'notes.txt'],
    );
    t.same((await svc.request('GET', '/api/v1/documents', { token: v.token })).body.documents, [], 'owner only');
    t.equal((await svc.request('GET', `/api/v1/documents/${pdf.body.id}`, { token: v.token })).status, 404);
    t.equal((await svc.request('DELETE', `/api/v1/documents/${pdf.body.id}`, { token: v.token })).status, 404);

    const png = await upload(svc, u.token, 'scan.png', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0]), 'image/png');
    t.equal(png.status, 415);
    t.match(png.body.detail, /text.*Markdown.*PDF/);
    t.equal(
      (
        await upload(
          svc,
          u.token,
          'letter.docx',
          'PK\u0003\u0004',
          'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
        )
      ).status,
      415,
    );
    t.equal((await upload(svc, u.token, 'bad.txt', Buffer.from([0xff, 0xfe, 0x00, 0x41]))).status, 415, 'not UTF-8');
    t.equal((await upload(svc, u.token, 'fake.pdf', 'not really a pdf', 'application/pdf')).status, 422);
    t.equal((await upload(svc, u.token, 'empty.txt', '')).status, 422);
    t.equal(
      (await upload(svc, u.token, 'notes.txt', 'hello', 'text/plain', 'document')).status,
      422,
      'the field must be "file"',
    );
    t.equal(
      (await svc.request('POST', '/api/v1/documents', { token: u.token, body: { file: 'x' } })).status,
      415,
      'JSON is not an upload',
    );

    const big = await upload(svc, u.token, 'big.txt', Buffer.alloc(10 * 1024 * 1024 + 1, 0x61));
    t.equal(big.status, 413);
    t.equal(big.body.code, 'document_too_large');
    t.match(big.body.detail, /10 MiB/);
    const edge = await upload(svc, u.token, 'edge.txt', Buffer.alloc(10 * 1024 * 1024, 0x61));
    t.equal(edge.status, 201, 'exactly 10 MiB is accepted');

    t.equal((await svc.request('DELETE', `/api/v1/documents/${txt.body.id}`, { token: u.token })).status, 204);
    t.equal((await svc.request('GET', `/api/v1/documents/${txt.body.id}`, { token: u.token })).status, 404);
  },
);
