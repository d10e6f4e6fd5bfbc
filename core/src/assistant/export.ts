/**
 * `GET /api/v1/chats/{chat_id}/export?format=markdown|json`: one chat as a download. Markdown is
 * for reading (title, then each message under its author and time, tool calls as quoted lines,
 * in the caller's language); JSON carries the chat and its messages as the API shows them.
 * Only the shown branch of a conversation is exported.
 */
import Type from 'typebox';
import { caller, requireUser } from '../auth/guard.ts';
import type { Core } from '../core.ts';
import type { App } from '../http/server.ts';
import { ChatParams, ownChat, publicChat } from './chats.ts';
import type { ToolEvent } from './exchange.ts';
import { type MessageRow, publicMessage } from './messages.ts';
import { bool } from './paths.ts';
import { say } from './titles.ts';

const ExportQuery = Type.Object({
  format: Type.Optional(Type.Union([Type.Literal('markdown'), Type.Literal('json')], { default: 'markdown' })),
});

/** The compact line for one tool call, in `locale`. */
export function toolLine(locale: string, call: ToolEvent): string {
  if (call.name === 'search_memory' || call.name === 'search_documents') {
    const query = call.query ?? (typeof call.arguments?.query === 'string' ? call.arguments.query : '');
    return call.status === 'failed'
      ? say(locale, 'tool_search_failed', { query })
      : say(locale, `tool_${call.name}`, { query, count: call.count ?? 0 });
  }
  if (call.name === 'generate_health_report') return say(locale, 'tool_generate_health_report');
  return say(locale, 'tool_other', { name: call.name });
}

/** A file name for the download: the title's letters and digits, ASCII fallback `chat`. */
function fileBase(title: string): { ascii: string; utf8: string } {
  const utf8 =
    title
      .normalize('NFC')
      .replace(/[^\p{L}\p{N}]+/gu, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 60) || 'chat';
  const ascii = utf8.replace(/[^A-Za-z0-9-]+/g, '').replace(/^-+|-+$/g, '') || 'chat';
  return { ascii, utf8 };
}

export async function exportRoutes(app: App, core: Core): Promise<void> {
  app.get(
    '/api/v1/chats/:chat_id/export',
    {
      schema: {
        tags: ['assistant'],
        summary: 'Download a chat as Markdown or JSON',
        params: ChatParams,
        querystring: ExportQuery,
        produces: ['text/markdown', 'application/json'],
        response: {
          200: {
            description: 'The chat as an attachment: Markdown, or JSON with `format=json`.',
            content: {
              'text/markdown': { schema: { type: 'string' } },
              'application/json': {
                schema: {
                  type: 'object',
                  required: ['chat', 'exported_at', 'messages'],
                  properties: {
                    chat: { type: 'object', additionalProperties: true, description: 'The chat as the API shows it.' },
                    exported_at: { type: 'string', format: 'date-time' },
                    messages: {
                      type: 'array',
                      items: { type: 'object', additionalProperties: true },
                      description: 'The shown branch, oldest first, each message as the API shows it.',
                    },
                  },
                },
              },
            },
          },
        },
      },
      preHandler: requireUser(core),
    },
    async (req, reply) => {
      const user = caller(req);
      const chat = await ownChat(core.db, user.id, req.params.chat_id);
      const format = req.query.format ?? 'markdown';
      const rows = (
        await core.db.all<MessageRow & { active?: unknown }>(
          'SELECT * FROM chat_messages WHERE chat_id = ? ORDER BY id',
          [chat.id],
        )
      ).filter((r) => r.active === undefined || r.active === null || bool(r.active));
      const messages = rows.map(publicMessage);
      const exportedAt = core.clock.now().toISOString();
      const name = fileBase(chat.title);
      const ext = format === 'json' ? 'json' : 'md';
      reply.header(
        'content-disposition',
        `attachment; filename="${name.ascii}.${ext}"; filename*=UTF-8''${encodeURIComponent(`${name.utf8}.${ext}`)}`,
      );
      reply.header('cache-control', 'no-store');
      if (format === 'json') {
        reply.type('application/json; charset=utf-8');
        return JSON.stringify({ chat: publicChat(chat), exported_at: exportedAt, messages }, null, 2);
      }
      const l = user.locale;
      const when = (iso: string) => iso.slice(0, 16).replace('T', ' ');
      const out = [`# ${chat.title}`, '', `_${say(l, 'export_exported', { date: `${when(exportedAt)} UTC` })}_`, ''];
      for (const m of messages) {
        const flag =
          m.status === 'interrupted'
            ? ` ${say(l, 'export_interrupted')}`
            : m.status === 'error'
              ? ` ${say(l, 'export_failed')}`
              : '';
        out.push(
          `## ${say(l, m.role === 'user' ? 'export_you' : 'export_assistant')} · ${when(m.created_at)} UTC${flag}`,
          '',
        );
        for (const call of m.tools) out.push(`> ${toolLine(l, call)}`);
        if (m.tools.length) out.push('');
        if (m.content) out.push(m.content, '');
      }
      reply.type('text/markdown; charset=utf-8');
      return `${out.join('\n').trimEnd()}\n`;
    },
  );
}
