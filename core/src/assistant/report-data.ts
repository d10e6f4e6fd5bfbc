import type { Queryable } from '../db/database.ts';

export interface ReportEntry {
  content: string;
  category: string | null;
  recorded_at: string | null;
}
export interface ReportExcerpt {
  text: string;
  source: string;
}
export interface ReportData {
  entries: ReportEntry[];
  excerpts: ReportExcerpt[];
  documentCount: number;
}

const MAX_ENTRIES = 2000;
const MAX_EXCERPTS = 8;
const EXCERPT_CHARS = 700;

/** Words worth matching on: letters or digits in any script, four or more characters. */
const terms = (text: string): Set<string> => new Set(text.toLowerCase().match(/[\p{L}\p{N}]{4,}/gu) ?? []);

function paragraphs(text: string): string[] {
  return text
    .split(/\n\s*\n/)
    .map((p) => p.replace(/\s+/g, ' ').trim())
    .filter((p) => p.length >= 20);
}

const clip = (s: string) => (s.length > EXCERPT_CHARS ? `${s.slice(0, EXCERPT_CHARS - 1).trimEnd()}…` : s);

/**
 * What a report draws on: every memory entry, and the document paragraphs that share the most
 * words with those entries (and the title). With nothing to match on, each document's opening
 * paragraph stands in. Each excerpt keeps its document's name for the citation.
 */
export async function gatherReportData(db: Queryable, userId: string, title: string): Promise<ReportData> {
  const entries = await db.all<ReportEntry>(
    'SELECT content, category, recorded_at FROM memory_entries WHERE user_id = ? ORDER BY id LIMIT ?',
    [userId, MAX_ENTRIES],
  );
  const docs = await db.all<{ filename: string; content: string }>(
    'SELECT filename, content FROM documents WHERE user_id = ? ORDER BY id',
    [userId],
  );
  const wanted = terms([title, ...entries.map((e) => `${e.category ?? ''} ${e.content}`)].join(' '));
  const scored: { text: string; source: string; score: number; order: number }[] = [];
  let order = 0;
  for (const d of docs) {
    for (const p of paragraphs(d.content)) {
      let score = 0;
      for (const w of terms(p)) if (wanted.has(w)) score++;
      scored.push({ text: clip(p), source: d.filename, score, order: order++ });
    }
  }
  let picked = scored
    .filter((s) => s.score > 0)
    .sort((a, b) => b.score - a.score || a.order - b.order)
    .slice(0, MAX_EXCERPTS);
  if (picked.length === 0) {
    const seen = new Set<string>();
    picked = scored.filter((s) => !seen.has(s.source) && seen.add(s.source)).slice(0, MAX_EXCERPTS);
  }
  // Back in document order, so excerpts of one source read in sequence.
  picked.sort((a, b) => a.order - b.order);
  return { entries, excerpts: picked.map(({ text, source }) => ({ text, source })), documentCount: docs.length };
}

/** What the cover page says about the report: its counts, the period its dated notes span and its highlights. */
export interface ReportSummary {
  entries: number;
  categories: number;
  dated: number;
  documents: number;
  excerpts: number;
  /** The earliest and latest dates of the dated notes (YYYY-MM-DD), or null when none is dated. */
  period: { from: string; to: string } | null;
  /** The largest categories, most notes first (at most 4), each with its count. */
  topCategories: { name: string; count: number }[];
  /** The most recent dated notes, newest first (at most 3). */
  latest: ReportEntry[];
  /** The documents the excerpts cite, in order. */
  cited: string[];
}

const TOP_CATEGORIES = 4;
const LATEST = 3;

export function summarize(data: ReportData): ReportSummary {
  const counts = new Map<string, number>();
  for (const e of data.entries) {
    const name = e.category?.trim();
    if (name) counts.set(name, (counts.get(name) ?? 0) + 1);
  }
  const dated = data.entries
    .filter((e) => e.recorded_at)
    .sort((a, b) => (b.recorded_at ?? '').localeCompare(a.recorded_at ?? ''));
  const day = (e: ReportEntry | undefined) => (e?.recorded_at ?? '').slice(0, 10);
  return {
    entries: data.entries.length,
    categories: counts.size,
    dated: dated.length,
    documents: data.documentCount,
    excerpts: data.excerpts.length,
    period: dated.length ? { from: day(dated.at(-1)), to: day(dated[0]) } : null,
    topCategories: [...counts]
      .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
      .slice(0, TOP_CATEGORIES)
      .map(([name, count]) => ({ name, count })),
    latest: dated.slice(0, LATEST),
    cited: [...new Set(data.excerpts.map((x) => x.source))],
  };
}
