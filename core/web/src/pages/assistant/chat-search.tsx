/**
 * The chat pieces around the assistant's memory: the compact line for a search tool call, the
 * chats sidebar search (results open the chat at the message), the export links, and the hook
 * that scrolls to and highlights the message a search result pointed at.
 */
import type { RefObject } from 'preact';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { api } from '../../lib/api.ts';
import { num, t } from '../../lib/i18n.ts';
import { renderMarkdown } from '../../lib/markdown.ts';
import type { ChatToolCall, SearchHit, SearchResults } from '../../lib/types.ts';
import { Badge, Button, ErrorNote } from '../../ui/basics.tsx';
import { Icon } from '../../ui/icons.tsx';
import { Marked, markElement, SEARCH_DEBOUNCE_MS } from './marks.tsx';

export const isSearchTool = (name: string) => name === 'search_memory' || name === 'search_documents';

/** "Searched memory for “allergy”: 2 entries", while running "Searching memory for “allergy”…". */
export function ToolLine({ call }: { call: ChatToolCall }) {
  const query = call.query ?? (typeof call.arguments?.query === 'string' ? call.arguments.query : '');
  const vars = { query, count: call.count ?? 0, n: num(call.count ?? 0) };
  const memory = call.name === 'search_memory';
  const text =
    call.status === 'started'
      ? memory
        ? t('assistant_memory.tool_search_memory_running', vars)
        : t('assistant_memory.tool_search_documents_running', vars)
      : call.status === 'failed'
        ? t('assistant_memory.tool_search_failed', vars)
        : memory
          ? t('assistant_memory.tool_search_memory', vars)
          : t('assistant_memory.tool_search_documents', vars);
  return (
    <div class="tool tool-search" data-testid="tool-line" data-tool={call.name}>
      <Badge tone={call.status === 'failed' ? 'danger' : call.status === 'done' ? 'ok' : 'info'}>{text}</Badge>
    </div>
  );
}

/** A hit's snippet rendered as Markdown (sanitized), with the query's matches marked. */
function Snippet({ text, q }: { text: string; q: string }) {
  const el = useRef<HTMLDivElement>(null);
  const html = useMemo(() => renderMarkdown(text), [text]);
  useEffect(() => {
    if (el.current) markElement(el.current, q);
  }, [html, q]);
  return <div class="md snippet small" ref={el} dangerouslySetInnerHTML={{ __html: html }} />;
}

/**
 * The search box of the chats sidebar: results follow the typing (a pause of SEARCH_DEBOUNCE_MS, the earlier request
 * aborted), with the matches marked in titles and snippets (rendered Markdown); one clear button empties it. While it
 * holds a query, its results replace the list.
 */
export function ChatSearch({ children }: { children: preact.ComponentChildren }) {
  const [q, setQ] = useState('');
  const [shown, setShown] = useState('');
  const [hits, setHits] = useState<SearchHit[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    const query = q.trim();
    if (!query) {
      setShown('');
      setHits(null);
      setError(null);
      setBusy(false);
      return;
    }
    const ac = new AbortController();
    setBusy(true);
    const timer = setTimeout(() => {
      api<SearchResults>('GET', '/api/v1/search', { query: { q: query, limit: 30 }, signal: ac.signal })
        .then((r) => {
          setShown(query);
          setHits(r.results);
          setError(null);
          setBusy(false);
        })
        .catch((err) => {
          if ((err as Error).name === 'AbortError') return;
          setError(err);
          setHits(null);
          setBusy(false);
        });
    }, SEARCH_DEBOUNCE_MS);
    return () => {
      clearTimeout(timer);
      ac.abort();
    };
  }, [q]);
  const clear = () => setQ('');
  return (
    <>
      <form
        class="chat-search"
        role="search"
        onSubmit={(e) => {
          e.preventDefault();
        }}
      >
        <label class="sr-only" for="chat-search">
          {t('assistant_memory.search_label')}
        </label>
        <input
          id="chat-search"
          type="search"
          placeholder={t('assistant_memory.search_placeholder')}
          maxLength={200}
          value={q}
          aria-busy={busy}
          onInput={(e) => setQ(e.currentTarget.value)}
          onKeyDown={(e) => {
            if (e.key === 'Escape') clear();
          }}
          data-testid="chat-search"
        />
        {q && (
          <Button
            small
            variant="ghost"
            onClick={clear}
            aria-label={t('assistant_memory.search_clear')}
            data-testid="chat-search-clear"
          >
            <Icon name="close" size={14} />
          </Button>
        )}
      </form>
      <ErrorNote error={error} />
      {hits === null ? (
        children
      ) : (
        <section aria-label={t('assistant_memory.search_results')} data-testid="search-results" aria-busy={busy}>
          {!hits.length ? (
            <p class="muted small pad">{t('assistant_memory.search_none')}</p>
          ) : (
            <ul class="chat-items search-hits">
              {hits.map((h) => (
                <li key={`${h.chat_id}/${h.message_id ?? ''}`}>
                  <a
                    href={h.message_id ? `#/chats/${h.chat_id}?message=${h.message_id}` : `#/chats/${h.chat_id}`}
                    data-testid="search-hit"
                  >
                    <span class="chat-item-title">
                      <Marked text={h.chat_title} q={shown} />
                    </span>
                    <span class="muted small">
                      {h.role === 'user'
                        ? t('assistant_memory.role_user')
                        : h.role === 'assistant'
                          ? t('assistant_memory.role_assistant')
                          : t('assistant_memory.search_in_title')}
                    </span>
                    {h.message_id && <Snippet text={h.snippet} q={shown} />}
                  </a>
                </li>
              ))}
            </ul>
          )}
        </section>
      )}
    </>
  );
}

/** Download links for the chat as Markdown and as JSON. */
export function ExportLinks({ chatId }: { chatId: string }) {
  return (
    <span
      class="chat-export"
      role="group"
      aria-label={t('assistant_memory.export_label')}
      title={t('assistant_memory.export_label')}
    >
      <Icon name="download" size={14} />
      <a
        class="btn btn-sm btn-ghost"
        href={`/api/v1/chats/${chatId}/export?format=markdown`}
        download
        data-testid="export-markdown"
      >
        {t('assistant_memory.export_markdown')}
      </a>
      <a
        class="btn btn-sm btn-ghost"
        href={`/api/v1/chats/${chatId}/export?format=json`}
        download
        data-testid="export-json"
      >
        {t('assistant_memory.export_json')}
      </a>
    </span>
  );
}

/**
 * Scrolls to the message `focus` names and highlights it, once per id: loads older pages while it
 * is not among the messages shown (at most 20 of them).
 */
export function useFocusMessage(
  list: RefObject<HTMLDivElement | null>,
  messages: { id: string }[] | null,
  focus: string | undefined,
  hasMore: boolean,
  older: () => Promise<void>,
  stick: { current: boolean },
) {
  const done = useRef<string | undefined>(undefined);
  const pages = useRef(0);
  useEffect(() => {
    if (!focus || !messages || done.current === focus) return;
    const el = list.current?.querySelector<HTMLElement>(`[data-id="${CSS.escape(focus)}"]`);
    if (el) {
      done.current = focus;
      stick.current = false;
      for (const prev of list.current?.querySelectorAll('.msg-focus') ?? []) prev.classList.remove('msg-focus');
      el.classList.add('msg-focus');
      el.scrollIntoView({ block: 'center' });
      return;
    }
    if (hasMore && messages.length && pages.current < 20) {
      pages.current++;
      void older();
    }
  }, [focus, messages, hasMore]);
}
