import type { ChatCompletionTool } from 'openai/resources/chat/completions';
import type { PublicUser } from '../users/users.ts';
import type { Logger } from '../logging/logger.ts';
import type { Database } from '../db/database.ts';
import type { Reports } from './reports.ts';
import { excerpt, ftsTerms } from './fts.ts';
import { searchChunks, searchMemory } from './search.ts';

export interface ToolOutcome {
  ok: boolean;
  /** What the model reads back as the tool message. */
  result: unknown;
  report?: { id: string; title: string };
  /** For the compact line shown with the reply: what was searched for and how many results came back. */
  summary?: { query: string; count: number };
}

/** The tools offered to the model for one reply, bound to the user it answers. */
export interface Tools {
  definitions: ChatCompletionTool[];
  run(name: string, args: string): Promise<ToolOutcome>;
}

export const GENERATE_HEALTH_REPORT = 'generate_health_report';
export const SEARCH_MEMORY = 'search_memory';
export const SEARCH_DOCUMENTS = 'search_documents';

/** Bounds of what a search tool returns: results, characters per excerpt, characters in all. */
export const SEARCH_LIMITS = { results: 6, excerptChars: 600, totalChars: 3000 };

const query = { type: 'object', properties: { query: { type: 'string', description: 'Words to look for, in the language the entries are written in.' } }, required: ['query'], additionalProperties: false };

const definitions: ChatCompletionTool[] = [{
  type: 'function',
  function: {
    name: SEARCH_MEMORY,
    description: "Search the user's memory entries (health notes, allergies, medication, measurements, dated events) by words. Use it whenever the answer may depend on something the user recorded. Returns the best matching entries.",
    parameters: query,
  },
}, {
  type: 'function',
  function: {
    name: SEARCH_DOCUMENTS,
    description: "Search the text of the user's uploaded documents (letters, lab results, PDFs) by words. Returns the best matching excerpts, each with the document name and, for PDFs, the page.",
    parameters: query,
  },
}, {
  type: 'function',
  function: {
    name: GENERATE_HEALTH_REPORT,
    description: "Compile a PDF health report from the user's memory entries (health notes, measurements, dated events) and the most relevant excerpts of their uploaded documents. Returns the report id and its download link; the user sees a download card for it under your reply.",
    parameters: {
      type: 'object',
      properties: {
        title: { type: 'string', description: 'Title of the report; a sensible default is used when omitted.' },
        locale: { type: 'string', enum: ['en', 'ru'], description: "Language of the report; defaults to the user's language." },
      },
      additionalProperties: false,
    },
  },
}];

/** Takes results in order while the characters they add stay within the total bound. */
function bounded<T>(items: T[], size: (item: T) => number): T[] {
  const out: T[] = [];
  let used = 0;
  for (const item of items) {
    const n = size(item);
    if (used + n > SEARCH_LIMITS.totalChars) break;
    used += n;
    out.push(item);
  }
  return out;
}

/** Runs one of the search tools for `userId`: only that user's rows are ever read. */
async function search(db: Database, userId: string, name: string, args: { query?: unknown }): Promise<ToolOutcome> {
  const q = typeof args.query === 'string' ? args.query.trim().slice(0, 200) : '';
  if (!ftsTerms(q).length) return { ok: false, result: { error: 'Give a query with at least one word.' }, summary: { query: q, count: 0 } };
  const terms = ftsTerms(q);
  if (name === SEARCH_MEMORY) {
    const hits = await searchMemory(db, userId, q, SEARCH_LIMITS.results);
    const entries = bounded(hits.map((h) => ({
      content: excerpt(h.content, terms, SEARCH_LIMITS.excerptChars), category: h.category, recorded_at: h.recorded_at,
    })), (e) => e.content.length + (e.category?.length ?? 0));
    return { ok: true, result: { query: q, entries }, summary: { query: q, count: entries.length } };
  }
  const hits = await searchChunks(db, userId, q, SEARCH_LIMITS.results);
  const excerpts = bounded(hits.map((h) => ({ document: h.filename, page: h.page, excerpt: excerpt(h.content, terms, SEARCH_LIMITS.excerptChars) })),
    (e) => e.excerpt.length + e.document.length);
  return { ok: true, result: { query: q, excerpts }, summary: { query: q, count: excerpts.length } };
}

/**
 * The assistant's tools for `user`. A failing tool is reported to the model, never thrown. The
 * searches are offered with `db`, each only when the user has something it could find (`has`):
 * a search of nothing would cost a round and its tokens for no answer.
 */
export function assistantTools(reports: Reports, user: PublicUser, log: Logger, db?: Database, has: { memory: boolean; documents: boolean } = { memory: true, documents: true }): Tools {
  const offered = (name: string) => name === GENERATE_HEALTH_REPORT || (db !== undefined && (name === SEARCH_MEMORY ? has.memory : name === SEARCH_DOCUMENTS ? has.documents : false));
  return {
    definitions: definitions.filter((d) => d.type === 'function' && offered(d.function.name)),
    async run(name, rawArgs) {
      let args: { title?: unknown; locale?: unknown; query?: unknown } = {};
      try { args = rawArgs.trim() ? JSON.parse(rawArgs) : {}; } catch { /* Malformed arguments: fall back to the defaults. */ }
      if (db && (name === SEARCH_MEMORY || name === SEARCH_DOCUMENTS) && offered(name)) {
        try {
          return await search(db, user.id, name, args);
        } catch (err) {
          log.error({ err }, 'search tool failed');
          return { ok: false, result: { error: 'The search failed.' } };
        }
      }
      if (name !== GENERATE_HEALTH_REPORT) return { ok: false, result: { error: `Unknown tool "${name}".` } };
      const title = typeof args.title === 'string' && args.title.trim() ? args.title.trim().slice(0, 200) : undefined;
      const locale = args.locale === 'en' || args.locale === 'ru' ? args.locale : undefined;
      try {
        const report = await reports.generate(user, { title, locale });
        const download_url = `/api/v1/reports/${report.id}/download`;
        return { ok: true, result: { report_id: report.id, title: report.title, download_url }, report: { id: report.id, title: report.title } };
      } catch (err) {
        log.error({ err }, 'report tool failed');
        return { ok: false, result: { error: err instanceof Error ? err.message : 'The report could not be generated.' } };
      }
    },
  };
}
