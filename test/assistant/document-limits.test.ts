/**
 * Reading an uploaded document is bounded: a PDF is read in a worker thread (the service's event
 * loop keeps answering), a "PDF bomb" (a small file whose compressed page expands to megabytes of
 * text) is refused at the character limit without the service's memory growing with it, and the
 * page and character limits hold on both sides.
 */

import zlib from 'node:zlib';
import t from 'tap';
import { DOCUMENT_LIMITS } from '../../core/src/assistant/document-text.ts';
import { harness, newUser, upload, workerRunning } from './support.ts';

/** A minimal PDF whose pages each draw `content` (a content stream, Flate-compressed) in Helvetica. */
function rawPdf(contents: string[]): Buffer {
  const n = contents.length;
  const font = 3 + n * 2;
  const objs: Buffer[] = [
    Buffer.from('<< /Type /Catalog /Pages 2 0 R >>'),
    Buffer.from(`<< /Type /Pages /Kids [${contents.map((_, i) => `${3 + i * 2} 0 R`).join(' ')}] /Count ${n} >>`),
  ];
  contents.forEach((c, i) => {
    const z = zlib.deflateSync(Buffer.from(c, 'latin1'), { level: 9 });
    objs.push(
      Buffer.from(
        `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 ${font} 0 R >> >> ` +
          `/Contents ${4 + i * 2} 0 R >>`,
      ),
    );
    objs.push(
      Buffer.concat([
        Buffer.from(`<< /Length ${z.length} /Filter /FlateDecode >>\nstream\n`),
        z,
        Buffer.from('\nendstream'),
      ]),
    );
  });
  objs.push(Buffer.from('<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>'));
  const parts: Buffer[] = [Buffer.from('%PDF-1.4\n')];
  let length = parts[0]!.length;
  const offsets: number[] = [];
  objs.forEach((o, i) => {
    offsets.push(length);
    const b = Buffer.concat([Buffer.from(`${i + 1} 0 obj\n`), o, Buffer.from('\nendobj\n')]);
    parts.push(b);
    length += b.length;
  });
  const xref =
    `xref\n0 ${objs.length + 1}\n0000000000 65535 f ` +
    `\n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`;
  parts.push(Buffer.from(`${xref}trailer\n<< /Size ${objs.length + 1} /Root 1 0 R >>\nstartxref\n${length}\n%%EOF\n`));
  return Buffer.concat(parts);
}

/**
 * A content stream showing `chars` characters of text: lines of `A`s, short enough to stay on the page (pdf.js leaves
 * out text past its edge).
 */
function textOf(chars: number, width = 50): string {
  const lines: string[] = [];
  for (let left = chars; left > 0; left -= width)
    lines.push(`BT /F1 12 Tf 72 720 Td (${'A'.repeat(Math.min(width, left))}) Tj ET`);
  return lines.join('\n');
}

t.test(
  'a PDF bomb is refused at the character limit, the service keeps answering and its memory stays put',
  async (t) => {
    const { svc } = await harness(t);
    const u = await newUser(svc);
    // One page expanding to 30 MB of text from a file of a few hundred KB.
    const bomb = rawPdf([textOf(30_000_000, 60)]);
    t.ok(bomb.length < 400_000, `the bomb is small (${bomb.length} bytes)`);
    // A first small PDF, so that what the first read of any PDF costs once (the worker's code, the
    // PDF library loaded on first use) is not counted as the bomb's.
    const warm = await upload(svc, u.token, 'warm.pdf', rawPdf([textOf(100)]), 'application/pdf');
    t.equal(warm.status, 201, JSON.stringify(warm.body));
    await svc.request('DELETE', `/api/v1/documents/${warm.body.id}`, { token: u.token });
    const before = process.memoryUsage().rss;
    let healthDone = 0;
    let uploadDone = 0;
    const reading = workerRunning('the bomb to be read in a worker', DOCUMENT_LIMITS.pdfHeapMb);
    const up = upload(svc, u.token, 'bomb.pdf', bomb, 'application/pdf').then((r) => {
      uploadDone = performance.now();
      return r;
    });
    // While the worker reads, the event loop serves other requests: asked once the worker runs (a fixed 100 ms
    // could come before the upload reached it, on a loaded machine, and prove nothing).
    await reading;
    const health = await svc.request('GET', '/api/health');
    healthDone = performance.now();
    const r = await up;
    t.equal(health.status, 200);
    t.ok(healthDone < uploadDone, 'health answered while the bomb was being read');
    t.equal(r.status, 422, JSON.stringify(r.body));
    t.equal(r.body.code, 'document_too_much_text');
    t.same(r.body.params, { limit: DOCUMENT_LIMITS.maxChars });
    t.equal(
      r.body.detail,
      `The PDF has more than ${DOCUMENT_LIMITS.maxChars} characters of text; split it into smaller documents.`,
    );
    const grown = (process.memoryUsage().rss - before) / 1e6;
    t.ok(grown < 150, `the service's own memory grew by ${grown.toFixed(0)} MB, not by the expanded text`);
    t.same((await svc.request('GET', '/api/v1/documents', { token: u.token })).body.documents, [], 'nothing stored');
  },
);

t.test('the character limit: a PDF of exactly the limit is stored, one more character is refused', async (t) => {
  const { svc } = await harness(t);
  const u = await newUser(svc);
  const max = DOCUMENT_LIMITS.maxChars;
  // Ten pages of max/10 characters each: exactly the limit.
  const exact = rawPdf(Array.from({ length: 10 }, () => textOf(max / 10)));
  const ok = await upload(svc, u.token, 'exact.pdf', exact, 'application/pdf');
  t.equal(ok.status, 201, JSON.stringify(ok.body));
  const over = rawPdf([...Array.from({ length: 9 }, () => textOf(max / 10)), textOf(max / 10 + 1)]);
  const refused = await upload(svc, u.token, 'over.pdf', over, 'application/pdf');
  t.equal(refused.status, 422);
  t.equal(refused.body.code, 'document_too_much_text');
  // Text files cost no extraction: their upload size is their bound.
  t.equal(
    (await upload(svc, u.token, 'long.txt', 'b'.repeat(max + 1))).status,
    201,
    'a text file over the PDF character limit',
  );
});

t.test('the page limit: exactly the limit is read, one more page is refused before any text is read', async (t) => {
  const { svc } = await harness(t);
  const u = await newUser(svc);
  const max = DOCUMENT_LIMITS.maxPdfPages;
  const ok = await upload(
    svc,
    u.token,
    'pages.pdf',
    rawPdf(Array.from({ length: max }, (_, i) => textOf(i === 0 ? 5 : 0))),
    'application/pdf',
  );
  t.equal(ok.status, 201, JSON.stringify(ok.body));
  const over = await upload(
    svc,
    u.token,
    'more.pdf',
    rawPdf(Array.from({ length: max + 1 }, () => '')),
    'application/pdf',
  );
  t.equal(over.status, 422);
  t.same(over.body.params, { pages: max + 1, limit: max });
  t.equal(over.body.code, 'document_too_many_pages');
  t.equal(over.body.detail, `The PDF has ${max + 1} pages; at most ${max} are read.`);
});

t.test('a damaged PDF is unreadable, and several uploads at once are all answered', async (t) => {
  const { svc } = await harness(t);
  const u = await newUser(svc);
  const damaged = Buffer.concat([Buffer.from('%PDF-1.4\n'), Buffer.alloc(2000, 0x41)]);
  const r = await upload(svc, u.token, 'bad.pdf', damaged, 'application/pdf');
  t.equal(r.status, 422);
  t.equal(r.body.code, 'unreadable_document');
  const many = await Promise.all(
    Array.from({ length: 5 }, (_, i) => upload(svc, u.token, `p${i}.pdf`, rawPdf([textOf(50)]), 'application/pdf')),
  );
  t.same(
    many.map((x) => x.status),
    [201, 201, 201, 201, 201],
    'more uploads than reading threads wait for a turn',
  );
});
