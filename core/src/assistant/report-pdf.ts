import fs from 'node:fs';
import path from 'node:path';
import { type ReportData, type ReportEntry, summarize } from './report-data.ts';

export type ReportLocale = 'en' | 'ru';
type Strings = Record<string, string>;

/**
 * Debian's fonts-dejavu-core: a TrueType font with Cyrillic, so Russian text renders and extracts.
 * HERALD_REPORT_FONT points elsewhere (read at each render, so tests can change it).
 */
export const reportFont = (): string =>
  process.env.HERALD_REPORT_FONT ?? '/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf';

/** Raised when the font is missing; the routes turn it into a clear 503. */
export class ReportFontMissingError extends Error {}

const stringsCache = new Map<ReportLocale, Strings>();
function strings(locale: ReportLocale): Strings {
  let s = stringsCache.get(locale);
  if (!s) {
    s = JSON.parse(
      fs.readFileSync(new URL(`../../../locales/${locale}/report.json`, import.meta.url), 'utf8'),
    ) as Strings;
    stringsCache.set(locale, s);
  }
  return s;
}

/** A report string with `{{name}}` placeholders filled. */
export function reportString(locale: ReportLocale, key: string, vars: Record<string, string | number> = {}): string {
  const text = strings(locale)[key] ?? strings('en')[key] ?? key;
  return text.replace(/\{\{(\w+)\}\}/g, (_, k: string) => String(vars[k] ?? ''));
}

const when = (e: ReportEntry) =>
  e.recorded_at ? e.recorded_at.replace('T', ' ').slice(0, e.recorded_at.includes('T') ? 16 : 10) : '';

/** The longest run of characters without a break opportunity that the report draws as it is. */
export const MAX_UNBROKEN = 40;

/**
 * `text` with a zero-width space after every MAX_UNBROKEN characters of a run without white space.
 * pdfkit wraps a word wider than the line by measuring ever longer prefixes of it, which takes
 * time quadratic in its length (a 32,000-character word took minutes); with a break opportunity
 * every few dozen characters each piece is measured once. The space draws nothing.
 */
export function breakLongWords(text: string): string {
  return text.replace(new RegExp(`\\S{${MAX_UNBROKEN + 1},}`, 'g'), (word) => {
    const chars = Array.from(word);
    let out = '';
    for (let i = 0; i < chars.length; i += MAX_UNBROKEN)
      out += (i ? '\u200B' : '') + chars.slice(i, i + MAX_UNBROKEN).join('');
    return out;
  });
}

/** A note's text for the cover: one line's worth, cut at a word. */
const short = (text: string, max = 110) => {
  const flat = text.replace(/\s+/g, ' ').trim();
  if (flat.length <= max) return flat;
  const cut = flat.slice(0, max - 1);
  return `${cut.slice(0, Math.max(cut.lastIndexOf(' '), max / 2)).trimEnd()}…`;
};

/**
 * The cover's summary: how much the report holds (notes, categories, dated notes, documents, excerpts), the period
 * its dated notes span (dates in the report's language), its largest categories, the latest notes and the documents
 * it cites; with nothing recorded, what to do first.
 */
function coverSummary(
  doc: PDFKit.PDFDocument,
  input: RenderInput,
  t: (key: string, vars?: Record<string, string | number>) => string,
): void {
  const { locale } = input;
  const s = summarize(input.data);
  const num = (n: number) => new Intl.NumberFormat(locale).format(n);
  const day = (iso: string) =>
    new Intl.DateTimeFormat(locale, { dateStyle: 'long', timeZone: 'UTC' }).format(new Date(`${iso}T00:00:00Z`));
  const line = (text: string, opts: PDFKit.Mixins.TextOptions = {}) =>
    doc.font('body').fontSize(10.5).text(breakLongWords(text), opts);
  const x = doc.page.margins.left;
  doc.moveDown(1.2).font('bold').fontSize(14).text(t('summary'), x).moveDown(0.3);
  if (!s.entries && !s.documents) {
    line(t('summary_empty'));
    return;
  }
  line(
    [
      t('summary_entries', { n: num(s.entries) }),
      t('summary_categories', { n: num(s.categories) }),
      t('summary_dated', { n: num(s.dated) }),
      t('summary_documents', { n: num(s.documents) }),
      t('summary_excerpts', { n: num(s.excerpts) }),
    ].join(' · '),
  );
  line(
    s.period
      ? s.period.from === s.period.to
        ? t('summary_one_day', { date: day(s.period.from) })
        : t('summary_period', { from: day(s.period.from), to: day(s.period.to) })
      : t('summary_no_period'),
  );
  if (s.topCategories.length)
    line(
      t('summary_top_categories', {
        list: s.topCategories.map((c) => `${c.name} (${num(c.count)})`).join(', '),
      }),
    );
  if (s.latest.length) {
    doc.moveDown(0.3);
    line(t('summary_latest'));
    for (const e of s.latest)
      line(`•  ${day((e.recorded_at ?? '').slice(0, 10))} — ${short(e.content)}`, { indent: 8 });
  }
  if (s.cited.length) {
    doc.moveDown(0.3);
    line(t('summary_cited', { list: s.cited.join(', ') }));
  }
}

export interface RenderInput {
  title: string;
  locale: ReportLocale;
  email: string;
  generatedAt: Date;
  data: ReportData;
}

/**
 * Renders the health compilation: a title page, notes grouped by category, a dated timeline,
 * document excerpts each citing its document by name, and the list of sources. Pages are
 * numbered in the footer.
 */
export async function renderReport(input: RenderInput): Promise<Buffer> {
  const font = reportFont();
  if (!fs.existsSync(font))
    throw new ReportFontMissingError(
      `The PDF report font is missing (expected DejaVu Sans at ${font}); install the fonts-dejavu-core package.`,
    );
  const bold = path.join(path.dirname(font), 'DejaVuSans-Bold.ttf');
  const { title, locale, data } = input;
  const t = (key: string, vars?: Record<string, string | number>) => reportString(locale, key, vars);

  // pdfkit is imported when the first report is drawn, not at boot.
  const { default: PDFDocument } = await import('pdfkit');
  const doc = new PDFDocument({ size: 'A4', margin: 56, bufferPages: true, info: { Title: title, Creator: 'Herald' } });
  const chunks: Buffer[] = [];
  doc.on('data', (c: Buffer) => chunks.push(c));
  const finished = new Promise<void>((resolve, reject) => {
    doc.on('end', () => resolve());
    doc.on('error', reject);
  });
  doc.registerFont('body', font);
  doc.registerFont('bold', fs.existsSync(bold) ? bold : font);

  // Every text drawn goes through breakLongWords: titles, notes, categories, excerpts and names are the user's.
  const heading = (text: string, size = 16) => {
    doc.moveDown(0.8).font('bold').fontSize(size).text(breakLongWords(text)).moveDown(0.3).font('body').fontSize(11);
  };
  const para = (text: string, opts: PDFKit.Mixins.TextOptions = {}) =>
    doc.font('body').fontSize(11).text(breakLongWords(text), opts);

  // Title page.
  doc.font('bold').fontSize(26).text(breakLongWords(title), { align: 'center' }).moveDown(0.5);
  doc.font('body').fontSize(13).text(t('subtitle'), { align: 'center' }).moveDown(2);
  para(`${t('prepared_for')}: ${input.email}`, { align: 'center' });
  para(
    `${t('generated_on')}: ` +
      `${new Intl.DateTimeFormat(locale, { dateStyle: 'long', timeZone: 'UTC' }).format(input.generatedAt)}`,
    { align: 'center' },
  );
  coverSummary(doc, input, t);
  doc.moveDown(1.5).fontSize(9).fillColor('#555555').text(t('disclaimer'), { align: 'center' }).fillColor('black');

  // Notes by category.
  doc.addPage();
  heading(t('by_category'), 18);
  if (data.entries.length === 0) para(t('no_entries'));
  const groups = new Map<string, ReportEntry[]>();
  for (const e of data.entries) {
    const key = e.category?.trim() || '';
    groups.set(key, [...(groups.get(key) ?? []), e]);
  }
  const names = [...groups.keys()].sort((a, b) => (a === '' ? 1 : b === '' ? -1 : a.localeCompare(b, locale)));
  for (const name of names) {
    heading(name || t('uncategorized'), 13);
    for (const e of groups.get(name)!) para(`•  ${when(e) ? `${when(e)} — ` : ''}${e.content}`, { indent: 8 });
  }

  // Timeline.
  heading(t('timeline'), 18);
  const dated = data.entries.filter((e) => e.recorded_at).sort((a, b) => a.recorded_at!.localeCompare(b.recorded_at!));
  if (dated.length === 0) para(t('no_dated_entries'));
  for (const e of dated) para(`${when(e)}  ${e.category ? `[${e.category}] ` : ''}${e.content}`);

  // Excerpts, each citing its document.
  heading(t('excerpts'), 18);
  if (data.excerpts.length === 0) para(t('no_excerpts'));
  for (const x of data.excerpts) {
    para(locale === 'ru' ? `«${x.text}»` : `“${x.text}”`, { indent: 12 });
    doc
      .fontSize(9)
      .fillColor('#444444')
      .text(breakLongWords(`— ${t('source')}: ${x.source}`), { indent: 12 })
      .fillColor('black')
      .moveDown(0.5);
  }
  const sources = [...new Set(data.excerpts.map((x) => x.source))];
  if (sources.length) {
    heading(t('sources'), 14);
    sources.forEach((s, i) => para(`${i + 1}. ${s}`));
  }

  const range = doc.bufferedPageRange();
  for (let i = range.start; i < range.start + range.count; i++) {
    doc.switchToPage(i);
    // The footer sits inside the bottom margin; lift the margin so pdfkit does not break to a new page.
    const bottom = doc.page.margins.bottom;
    doc.page.margins.bottom = 0;
    doc
      .font('body')
      .fontSize(8)
      .fillColor('#777777')
      .text(t('page', { n: i + 1, total: range.count }), 56, doc.page.height - 40, {
        width: doc.page.width - 112,
        align: 'center',
        lineBreak: false,
      });
    doc.page.margins.bottom = bottom;
  }
  doc.end();
  await finished;
  return Buffer.concat(chunks);
}
