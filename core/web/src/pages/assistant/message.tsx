/** One message bubble: the user's text as typed, the assistant's as sanitized markdown. */
import { useMemo } from 'preact/hooks';
import { num, t, time } from '../../lib/i18n.ts';
import { renderMarkdown } from '../../lib/markdown.ts';
import type { Message } from '../../lib/types.ts';
import { Badge } from '../../ui/basics.tsx';
import { Icon } from '../../ui/icons.tsx';

export interface ToolNote { name: string; status: 'started' | 'done' | 'failed'; report_id?: string }
export type ShownMessage = Message & { streaming?: boolean; tools?: ToolNote[] };

export function MessageBubble({ m }: { m: ShownMessage }) {
  const html = useMemo(() => (m.role === 'assistant' ? renderMarkdown(m.content) : ''), [m.role, m.content]);
  return (
    <article class={`msg msg-${m.role}${m.streaming ? ' streaming' : ''}`} data-testid={`msg-${m.role}`} data-status={m.streaming ? 'streaming' : m.status}>
      <div class="msg-body">
        {m.role === 'assistant'
          ? <div class="md" dangerouslySetInnerHTML={{ __html: html }} />
          : <p class="plain">{m.content}</p>}
        {m.streaming && !m.content && <span class="typing" role="status" aria-label={t('chat.thinking')}><i /><i /><i /></span>}
        {m.tools?.map((tool, i) => (
          <div class="tool" key={i}>
            <Badge tone={tool.status === 'failed' ? 'danger' : tool.status === 'done' ? 'ok' : 'info'}>{t(`chat.tool_${tool.status}`, { name: t('chat.tool_report') })}</Badge>
            {tool.report_id && tool.status === 'done' && <a class="btn btn-sm" href={`/api/v1/reports/${tool.report_id}/download`} download><Icon name="download" size={15} />{t('reports.download')}</a>}
          </div>
        ))}
      </div>
      <footer class="msg-meta">
        <time dateTime={m.created_at}>{time(m.created_at)}</time>
        {m.status === 'interrupted' && !m.streaming && <Badge tone="warn">{t('chat.interrupted')}</Badge>}
        {m.status === 'error' && !m.streaming && <Badge tone="danger">{t('chat.failed')}</Badge>}
        {m.error && <span class="hint-danger">{m.error}</span>}
        {m.usage && <span class="muted">{t('chat.tokens_used', { count: m.usage.total_tokens, n: num(m.usage.total_tokens) })}</span>}
      </footer>
    </article>
  );
}
