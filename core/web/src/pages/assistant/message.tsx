/**
 * One message bubble: the user's text as typed, the assistant's as sanitized markdown with
 * highlighted, copyable code. Below it: copy, regenerate or retry (the last reply), edit and
 * resend (a question), the "‹ 2/3 ›" pager between alternatives, and report download cards.
 */
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import type { ChatAttachment } from '../../../../src/assistant/chat-api-types.ts';
import { bytes, has, num, t, time } from '../../lib/i18n.ts';
import { enhanceCode, renderMarkdown } from '../../lib/markdown.ts';
import type { Message } from '../../lib/types.ts';
import { Badge, Button } from '../../ui/basics.tsx';
import { Icon } from '../../ui/icons.tsx';
import { toast } from '../../ui/toast.tsx';
import { DocChips } from './attach.tsx';
import { isSearchTool, ToolLine } from './chat-search.tsx';
import { isLabTool, type LabCall, LabTool } from './lab-cards.tsx';

/** A tool call under a reply (a report's, a search's, a lab tool's). */
export type ToolNote = LabCall;
/**
 * A message as the server sends it, or a placeholder for one being sent (which has no parent, model, alternatives or
 * tool calls yet). `errorCode` is the stable code of a failure seen in this session (the stream's error event, the
 * refused request).
 */
export type ShownMessage = Omit<Message, 'attachments' | 'tools' | 'parent_id' | 'model' | 'alternatives'> &
  Partial<Pick<Message, 'parent_id' | 'model' | 'alternatives'>> & {
    /** Report cards and the documents attached in the composer. */
    attachments?: ChatAttachment[];
    streaming?: boolean;
    tools?: ToolNote[];
    errorCode?: string;
  };

export interface MessageActions {
  /** Set on the reply that may be regenerated (the last one, in a chat that is not archived). */
  regenerate?: () => void;
  /** Set on questions that may be edited and resent. */
  edit?: (content: string) => void;
  /** Shows another alternative of this message. */
  show?: (id: string) => void;
}

async function copyText(text: string): Promise<void> {
  try {
    await navigator.clipboard.writeText(text);
    toast.ok(t('common.copied'));
  } catch {
    toast.ok(t('chat_controls.copy_failed'));
  }
}

export function MessageBubble({ m, actions = {} }: { m: ShownMessage; actions?: MessageActions }) {
  const gone = useMemo(
    () =>
      new Set(
        (m.attachments ?? []).flatMap((a) => (a.type === 'report' && a.available === false ? [a.report_id] : [])),
      ),
    [m.attachments],
  );
  const html = useMemo(
    () => (m.role === 'assistant' ? renderMarkdown(m.content, gone) : ''),
    [m.role, m.content, gone],
  );
  const md = useRef<HTMLDivElement>(null);
  const [editing, setEditing] = useState(false);
  const [draft, setDraft] = useState(m.content);
  useEffect(() => {
    if (md.current && !m.streaming)
      void enhanceCode(md.current, t('chat_controls.copy_code'), (text) => void copyText(text));
  }, [html, m.streaming]);

  const alternatives = m.alternatives ?? [m.id];
  const at = alternatives.indexOf(m.id);
  const failed = m.status === 'error' && !m.streaming;
  const failure =
    m.errorCode && has(`problem.${m.errorCode}`) ? t(`problem.${m.errorCode}`) : t('chat_controls.reply_failed');
  const cards = (m.attachments ?? []).flatMap((a) => (a.type === 'report' && a.available !== false ? [a] : []));
  const docs = (m.attachments ?? []).flatMap((a) => (a.type === 'document' ? [a] : []));

  return (
    <article
      class={`msg msg-${m.role}${m.streaming ? ' streaming' : ''}`}
      data-testid={`msg-${m.role}`}
      data-status={m.streaming ? 'streaming' : m.status}
      data-id={m.id}
    >
      {editing ? (
        <form
          class="msg-edit stack"
          onSubmit={(e) => {
            e.preventDefault();
            if (!draft.trim()) return;
            setEditing(false);
            actions.edit?.(draft.trim());
          }}
        >
          <label class="sr-only" for={`edit-${m.id}`}>
            {t('chat_controls.edit_label')}
          </label>
          <textarea
            id={`edit-${m.id}`}
            rows={3}
            maxLength={32000}
            value={draft}
            data-testid="edit-input"
            onInput={(e) => setDraft(e.currentTarget.value)}
          />
          <div class="form-actions">
            <Button
              small
              onClick={() => {
                setEditing(false);
                setDraft(m.content);
              }}
            >
              {t('common.cancel')}
            </Button>
            <Button small type="submit" variant="primary" icon="send" disabled={!draft.trim()} data-testid="edit-send">
              {t('chat_controls.edit_send')}
            </Button>
          </div>
        </form>
      ) : !failed || m.content || m.tools?.length ? (
        <div class="msg-body">
          {m.role === 'assistant' ? (
            <div class="md" ref={md} dangerouslySetInnerHTML={{ __html: html }} />
          ) : (
            <p class="plain">{m.content}</p>
          )}
          <DocChips docs={docs} />
          {m.streaming && !m.content && (
            <span class="typing" role="status" aria-label={t('chat.thinking')}>
              <i />
              <i />
              <i />
            </span>
          )}
          {m.tools?.map((tool, i) =>
            isSearchTool(tool.name) ? (
              <ToolLine key={i} call={tool} />
            ) : isLabTool(tool.name) ? (
              <LabTool key={i} call={tool} chatId={m.chat_id} />
            ) : (
              <div class="tool" key={i}>
                <Badge tone={tool.status === 'failed' ? 'danger' : tool.status === 'done' ? 'ok' : 'info'}>
                  {t(`chat.tool_${tool.status}`, { name: t('chat.tool_report') })}
                </Badge>
              </div>
            ),
          )}
          {cards.map((a) => (
            <ReportCard key={a.report_id} a={a} />
          ))}
        </div>
      ) : null}
      {failed && (
        <div class="msg-failed note note-danger" role="alert" data-testid="reply-failed" title={m.error ?? undefined}>
          <span>{failure}</span>
          {actions.regenerate && (
            <Button small icon="refresh" onClick={actions.regenerate} data-testid="retry">
              {t('chat_controls.retry')}
            </Button>
          )}
        </div>
      )}
      <footer class="msg-meta">
        <time dateTime={m.created_at}>{time(m.created_at)}</time>
        {alternatives.length > 1 && at >= 0 && (
          <span class="alt-pager" data-testid="alt-pager">
            <button
              type="button"
              class="btn btn-sm btn-ghost"
              aria-label={t('chat_controls.previous')}
              disabled={at === 0 || !actions.show}
              onClick={() => actions.show?.(alternatives[at - 1]!)}
              data-testid="alt-previous"
            >
              <span class="chev-left">
                <Icon name="chevron" size={14} />
              </span>
            </button>
            <span aria-live="polite" data-testid="alt-position">
              {t('chat_controls.position', { n: at + 1, total: alternatives.length })}
            </span>
            <button
              type="button"
              class="btn btn-sm btn-ghost"
              aria-label={t('chat_controls.next')}
              disabled={at === alternatives.length - 1 || !actions.show}
              onClick={() => actions.show?.(alternatives[at + 1]!)}
              data-testid="alt-next"
            >
              <Icon name="chevron" size={14} />
            </button>
          </span>
        )}
        {m.status === 'interrupted' && !m.streaming && <Badge tone="warn">{t('chat.interrupted')}</Badge>}
        {failed && <Badge tone="danger">{t('chat.failed')}</Badge>}
        {m.usage && (
          <span class="muted">
            {t('chat.tokens_used', { count: m.usage.total_tokens, n: num(m.usage.total_tokens) })}
          </span>
        )}
        {m.model && m.role === 'assistant' && (
          <span class="muted" data-testid="msg-model">
            {m.model}
          </span>
        )}
        {!m.streaming && !editing && (
          <span class="msg-actions">
            {m.content && (
              <button
                type="button"
                class="btn btn-sm btn-ghost"
                onClick={() => void copyText(m.content)}
                data-testid="copy-message"
                aria-label={t('chat_controls.copy')}
              >
                <Icon name="copy" size={14} />
              </button>
            )}
            {actions.edit && (
              <button
                type="button"
                class="btn btn-sm btn-ghost"
                onClick={() => {
                  setDraft(m.content);
                  setEditing(true);
                }}
                data-testid="edit"
                aria-label={t('chat_controls.edit')}
              >
                <Icon name="edit" size={14} />
              </button>
            )}
            {actions.regenerate && !failed && (
              <button
                type="button"
                class="btn btn-sm btn-ghost"
                onClick={actions.regenerate}
                data-testid="regenerate"
                aria-label={t('chat_controls.regenerate')}
              >
                <Icon name="refresh" size={14} />
              </button>
            )}
          </span>
        )}
      </footer>
    </article>
  );
}

/** A generated report, from the message's attachment: it outlives a reload and goes with the report. */
function ReportCard({ a }: { a: Extract<ChatAttachment, { type: 'report' }> }) {
  return (
    <div class="report-card" data-testid="report-card">
      <Icon name="download" size={18} />
      <span class="report-card-title">{a.title}</span>
      {a.size_bytes !== undefined && <span class="muted small">{bytes(a.size_bytes)}</span>}
      <a
        class="btn btn-sm"
        href={`/api/v1/reports/${a.report_id}/download`}
        download
        data-testid="report-card-download"
      >
        {t('reports.download')}
      </a>
    </div>
  );
}
