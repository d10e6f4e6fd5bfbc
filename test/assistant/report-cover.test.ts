/**
 * The PDF report's cover page carries a summary of what the report holds, in the report's language: the counts, the
 * period the dated notes span (dates written out, not ISO), the largest categories, the latest notes and the
 * documents quoted; with nothing recorded it says what to do. Read back from the PDF's first page with unpdf.
 */
import t from 'tap';
import { extractText, getDocumentProxy } from 'unpdf';
import type { ReportData } from '../../core/src/assistant/report-data.ts';
import { renderReport } from '../../core/src/assistant/report-pdf.ts';

async function pages(pdf: Buffer): Promise<string[]> {
  const doc = await getDocumentProxy(new Uint8Array(pdf));
  const { text } = await extractText(doc, { mergePages: false });
  // The PDF's text breaks lines where the page does; a sentence is matched across them.
  return text.map((p) => p.replace(/\s+/g, ' ').replace(/\u200B/g, ''));
}

const data: ReportData = {
  entries: [
    { content: 'Blood pressure 120/80', category: 'Measurements', recorded_at: '2030-01-05' },
    { content: 'Blood pressure 130/85 after the run', category: 'Measurements', recorded_at: '2030-03-14T08:30:00Z' },
    { content: 'Started vitamin D', category: 'Medication', recorded_at: '2030-01-02T08:30:00Z' },
    { content: 'Pulse 58 at rest', category: 'Measurements', recorded_at: '2030-02-20' },
    { content: 'Allergic to penicillin', category: 'Allergies', recorded_at: null },
    { content: 'Sleeps badly in summer', category: null, recorded_at: null },
  ],
  excerpts: [
    { text: 'Ferritin 12 ng/ml, below the reference range.', source: 'labs-2030.pdf' },
    { text: 'Eat more spinach for iron.', source: 'diet.md' },
  ],
  documentCount: 3,
};
const render = (locale: 'en' | 'ru', d: ReportData = data) =>
  renderReport({
    title: locale === 'ru' ? 'Сводка о здоровье' : 'Health summary',
    locale,
    email: 'u@example.test',
    generatedAt: new Date('2030-03-20T10:00:00Z'),
    data: d,
  });

t.test('the cover summarises the report in English', async (t) => {
  const [cover, ...rest] = await pages(await render('en'));
  t.match(cover, 'Summary');
  t.match(cover, 'Notes: 6 · categories: 3 · dated: 4 · documents: 3 · excerpts: 2', 'the counts');
  t.match(cover, 'Period covered: January 2, 2030 to March 14, 2030.', 'the period of the dated notes, written out');
  t.match(cover, 'Largest categories: Measurements (3), Allergies (1), Medication (1).', 'most notes first');
  t.match(cover, 'Latest notes:');
  t.match(cover, 'March 14, 2030 — Blood pressure 130/85 after the run');
  t.match(cover, 'February 20, 2030 — Pulse 58 at rest');
  t.match(cover, 'January 5, 2030 — Blood pressure 120/80');
  t.notMatch(cover, 'Started vitamin D', 'only the three latest notes');
  t.match(cover, 'Documents quoted: labs-2030.pdf, diet.md.');
  t.notMatch(cover, /\d{4}-\d{2}-\d{2}/, 'no ISO date on the cover');
  t.match(cover, 'not a diagnosis', 'the disclaimer still fits on the cover');
  t.match(rest.join(' '), 'Notes by category', 'the notes follow on the next pages');
});

t.test('the cover summarises the report in Russian', async (t) => {
  const [cover] = await pages(await render('ru'));
  t.match(cover, 'Краткое содержание');
  t.match(cover, 'Заметок: 6 · категорий: 3 · с датой: 4 · документов: 3 · выдержек: 2');
  t.match(cover, /Период: с 2 января 2030 г\. по 14 марта 2030 г\./);
  t.match(cover, 'Крупнейшие категории: Measurements (3), Allergies (1), Medication (1).');
  t.match(cover, 'Последние заметки:');
  t.match(cover, '14 марта 2030 г. — Blood pressure 130/85 after the run');
  t.match(cover, 'Цитируемые документы: labs-2030.pdf, diet.md.');
  t.notMatch(cover, /Summary|Period|Latest/, 'no English heading');
});

t.test('the cover of an empty report, of one day, and without dates', async (t) => {
  const [empty] = await pages(await render('en', { entries: [], excerpts: [], documentCount: 0 }));
  t.match(empty, 'Nothing has been recorded yet: add notes or upload documents');
  t.notMatch(empty, 'Notes: 0');
  const [emptyRu] = await pages(await render('ru', { entries: [], excerpts: [], documentCount: 0 }));
  t.match(emptyRu, 'Пока ничего не записано');

  const one = { ...data, entries: [data.entries[0]!, { ...data.entries[0]!, content: 'Again' }] };
  const [oneDay] = await pages(await render('en', one));
  t.match(oneDay, 'Period covered: January 5, 2030.', 'one day is named once');

  const undated = { entries: [data.entries[4]!], excerpts: [], documentCount: 1 };
  const [noDates] = await pages(await render('ru', undated));
  t.match(noDates, 'Ни у одной заметки нет даты.');
  t.notMatch(noDates, 'Последние заметки', 'no latest notes without dates');
  t.notMatch(noDates, 'Цитируемые документы', 'no documents quoted without excerpts');

  // A long note is cut at a word on the cover, whole in the body.
  const long = 'Measured after a long walk in the hills with friends, '.repeat(6).trim();
  const [cover, ...rest] = await pages(
    await render('en', {
      entries: [{ content: long, category: 'Walks', recorded_at: '2030-01-01' }],
      excerpts: [],
      documentCount: 0,
    }),
  );
  t.match(cover, /January 1, 2030 — Measured after a long walk.*…/);
  t.notMatch(cover, long);
  t.match(rest.join(' '), long.slice(-40));
});
