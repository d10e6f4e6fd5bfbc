import type { ChatCompletionTool } from 'openai/resources/chat/completions';
import type { PublicUser } from '../users/users.ts';
import type { Logger } from '../logging/logger.ts';
import type { Reports } from './reports.ts';

export interface ToolOutcome {
  ok: boolean;
  /** What the model reads back as the tool message. */
  result: unknown;
  report?: { id: string; title: string };
}

/** The tools offered to the model for one reply, bound to the user it answers. */
export interface Tools {
  definitions: ChatCompletionTool[];
  run(name: string, args: string): Promise<ToolOutcome>;
}

export const GENERATE_HEALTH_REPORT = 'generate_health_report';

const definitions: ChatCompletionTool[] = [{
  type: 'function',
  function: {
    name: GENERATE_HEALTH_REPORT,
    description: "Compile a PDF health report from the user's memory entries (health notes, measurements, dated events) and the most relevant excerpts of their uploaded documents. Returns the report id and its download link; give the user that link.",
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

/** The assistant's tools for `user`. A failing tool is reported to the model, never thrown. */
export function assistantTools(reports: Reports, user: PublicUser, log: Logger): Tools {
  return {
    definitions,
    async run(name, rawArgs) {
      if (name !== GENERATE_HEALTH_REPORT) return { ok: false, result: { error: `Unknown tool "${name}".` } };
      let args: { title?: unknown; locale?: unknown } = {};
      try { args = rawArgs.trim() ? JSON.parse(rawArgs) : {}; } catch { /* Malformed arguments: fall back to the defaults. */ }
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
