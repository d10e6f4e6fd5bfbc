import type { ChatCompletionTool } from 'openai/resources/chat/completions';
import type { Database } from '../db/database.ts';
import type { Logger } from '../logging/logger.ts';
import type { PublicUser } from '../users/users.ts';
import type { Decided } from './consent.ts';
import { excerpt, ftsTerms } from './fts.ts';
import { lab } from './lab-strings.ts';
import type { LabTools } from './lab-tools.ts';
import type { Reports } from './reports.ts';
import { searchChunks, searchMemory } from './search.ts';

export interface ToolOutcome {
  ok: boolean;
  /** What the model reads back as the tool message. */
  result: unknown;
  report?: { id: string; title: string };
  /** For the compact line shown with the reply: what was searched for and how many results came back. */
  summary?: { query: string; count: number };
  /**
   * Set when the call only proposed an action (send_notification, schedule_message): nothing is
   * done until the user decides. `decision` waits for that and gives the outcome the model reads.
   */
  confirm?: {
    id: string;
    expires_at: string;
    proposal: Record<string, unknown>;
    decision(signal: AbortSignal): Promise<Decided>;
  };
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

/** Deeply frozen: a definition built once is shared by every reply. */
function frozen<T>(v: T): T {
  if (v && typeof v === 'object' && !Object.isFrozen(v)) {
    for (const k of Object.keys(v)) frozen((v as Record<string, unknown>)[k]);
    Object.freeze(v);
  }
  return v;
}

const baseByLocale = new Map<string, readonly ChatCompletionTool[]>();
/** The memory, document and report tools in language `l`, built once per language (frozen). */
function baseDefinitions(l: string): readonly ChatCompletionTool[] {
  let defs = baseByLocale.get(l);
  if (!defs) {
    defs = frozen(buildBaseDefinitions(l));
    // The locale is the user's setting (a short list); bound the cache anyway.
    if (baseByLocale.size < 32) baseByLocale.set(l, defs);
  }
  return defs;
}

function buildBaseDefinitions(l: string): ChatCompletionTool[] {
  const query = {
    type: 'object',
    properties: { query: { type: 'string', description: lab(l, 'param.query') } },
    required: ['query'],
    additionalProperties: false,
  };
  return [
    {
      type: 'function',
      function: { name: SEARCH_MEMORY, description: lab(l, 'tool.search_memory'), parameters: query },
    },
    {
      type: 'function',
      function: { name: SEARCH_DOCUMENTS, description: lab(l, 'tool.search_documents'), parameters: query },
    },
    {
      type: 'function',
      function: {
        name: GENERATE_HEALTH_REPORT,
        description: lab(l, 'tool.generate_health_report'),
        parameters: {
          type: 'object',
          properties: {
            title: { type: 'string', description: lab(l, 'param.report_title') },
            locale: { type: 'string', enum: ['en', 'ru'], description: lab(l, 'param.report_locale') },
          },
          additionalProperties: false,
        },
      },
    },
  ];
}

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
  if (!ftsTerms(q).length)
    return { ok: false, result: { error: 'Give a query with at least one word.' }, summary: { query: q, count: 0 } };
  const terms = ftsTerms(q);
  if (name === SEARCH_MEMORY) {
    const hits = await searchMemory(db, userId, q, SEARCH_LIMITS.results);
    const entries = bounded(
      hits.map((h) => ({
        content: excerpt(h.content, terms, SEARCH_LIMITS.excerptChars),
        category: h.category,
        recorded_at: h.recorded_at,
      })),
      (e) => e.content.length + (e.category?.length ?? 0),
    );
    return { ok: true, result: { query: q, entries }, summary: { query: q, count: entries.length } };
  }
  const hits = await searchChunks(db, userId, q, SEARCH_LIMITS.results);
  const excerpts = bounded(
    hits.map((h) => ({
      document: h.filename,
      page: h.page,
      excerpt: excerpt(h.content, terms, SEARCH_LIMITS.excerptChars),
    })),
    (e) => e.excerpt.length + e.document.length,
  );
  return { ok: true, result: { query: q, excerpts }, summary: { query: q, count: excerpts.length } };
}

/**
 * The assistant's tools for `user`, described in the user's language. A failing tool is reported
 * to the model, never thrown. The searches are offered with `db`, each only when the user has
 * something it could find (`has`): a search of nothing would cost a round and its tokens for no
 * answer. `relayTools` adds the tools over the relay (lab-tools.ts), offered after these.
 */
export function assistantTools(
  reports: Reports,
  user: PublicUser,
  log: Logger,
  db?: Database,
  has: { memory: boolean; documents: boolean } = { memory: true, documents: true },
  relayTools?: LabTools,
): Tools {
  const offered = (name: string) =>
    name === GENERATE_HEALTH_REPORT ||
    (db !== undefined && (name === SEARCH_MEMORY ? has.memory : name === SEARCH_DOCUMENTS ? has.documents : false));
  return {
    definitions: [
      ...baseDefinitions(user.locale).filter((d) => d.type === 'function' && offered(d.function.name)),
      ...(relayTools?.definitions ?? []),
    ],
    async run(name, rawArgs) {
      let args: { title?: unknown; locale?: unknown; query?: unknown } = {};
      try {
        args = rawArgs.trim() ? JSON.parse(rawArgs) : {};
      } catch {
        /* Malformed arguments: fall back to the defaults. */
      }
      if (!args || typeof args !== 'object' || Array.isArray(args)) args = {};
      const fromLab = relayTools ? await relayTools.run(name, args as Record<string, unknown>) : undefined;
      if (fromLab) return fromLab;
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
        return {
          ok: true,
          result: { report_id: report.id, title: report.title, download_url },
          report: { id: report.id, title: report.title },
        };
      } catch (err) {
        log.error({ err }, 'report tool failed');
        return {
          ok: false,
          result: { error: err instanceof Error ? err.message : 'The report could not be generated.' },
        };
      }
    },
  };
}
