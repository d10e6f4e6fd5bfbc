/** Chats: the list (active or archived) and the search over them, beside the open conversation. */
import { useEffect, useState } from 'preact/hooks';
import type { Chat } from '../../../../src/assistant/chat-api-types.ts';
import { get, post } from '../../lib/api.ts';
import { useAsync } from '../../lib/hooks.ts';
import { relative, t } from '../../lib/i18n.ts';
import { navigate, useLocation } from '../../lib/router.ts';
import type { Skill } from '../../lib/types.ts';
import { Button, Empty, ErrorNote, Loading } from '../../ui/basics.tsx';
import { ChatSearch } from './chat-search.tsx';
import { ChatView } from './chat-view.tsx';
import './chat-extras.css';

export function ChatsPage({ params }: { params: Record<string, string> }) {
  const [archived, setArchived] = useState(false);
  const list = useAsync(
    () => get<{ chats: Chat[] }>('/api/v1/chats', { archived, limit: 200 }).then((r) => r.chats),
    [archived],
  );
  const skills = useAsync(() => get<{ skills: Skill[] }>('/api/v1/skills').then((r) => r.skills), []);
  const [title, setTitle] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const create = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      // Left empty, the service names the chat after its first exchange.
      const chat = await post<Chat>('/api/v1/chats', title.trim() ? { title: title.trim() } : {});
      setTitle('');
      setArchived(false);
      await list.reload();
      navigate(`/chats/${chat.id}`);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  const selected = params.id;
  const query = useLocation().query;
  const focus = query.get('message') ?? undefined;
  // Opened with "Ask the assistant" on an event: the composer suggests a question.
  const prefill = query.get('ask') ? t('lab.ask_question') : undefined;
  // Offered once: the address loses `ask`, so a reload does not suggest it again.
  useEffect(() => {
    if (selected && query.get('ask')) navigate(`/chats/${selected}`, true);
  }, [selected, query.get('ask')]);
  return (
    <div class={`chat-layout${selected ? ' has-chat' : ''}`}>
      <aside class="chat-list card" aria-label={t('chats.list')}>
        <h1 class="chat-list-title" id={selected ? undefined : 'page-title'} tabIndex={-1}>
          {t('chats.title')}
        </h1>
        <form class="new-chat" onSubmit={create}>
          <label class="sr-only" for="new-chat-title">
            {t('chats.new_title')}
          </label>
          <input
            id="new-chat-title"
            placeholder={t('chats.new_placeholder')}
            maxLength={200}
            value={title}
            onInput={(e) => setTitle(e.currentTarget.value)}
          />
          <Button type="submit" variant="primary" small icon="plus" busy={busy}>
            {t('chats.new')}
          </Button>
        </form>
        <ErrorNote error={error ?? list.error} />
        <ChatSearch>
          <div class="tabs" role="tablist">
            <button
              type="button"
              role="tab"
              aria-selected={!archived}
              class={!archived ? 'active' : ''}
              onClick={() => setArchived(false)}
            >
              {t('chats.active')}
            </button>
            <button
              type="button"
              role="tab"
              aria-selected={archived}
              class={archived ? 'active' : ''}
              onClick={() => setArchived(true)}
            >
              {t('chats.archived')}
            </button>
          </div>
          {!list.data ? (
            <Loading />
          ) : !list.data.length ? (
            <p class="muted small pad">{archived ? t('chats.none_archived') : t('chats.none')}</p>
          ) : (
            <GroupedChats chats={list.data} selected={selected} />
          )}
        </ChatSearch>
      </aside>
      <section class="chat-main">
        {selected ? (
          <ChatView
            key={selected}
            chatId={selected}
            focus={focus}
            prefill={prefill}
            skills={skills.data ?? []}
            folders={folderNames(list.data ?? [])}
            onChanged={() => void list.reload()}
          />
        ) : (
          <div class="card chat-empty">
            <Empty>{t('chats.pick')}</Empty>
          </div>
        )}
      </section>
    </div>
  );
}

/** The folders in use, sorted in the user's language. */
export const folderNames = (chats: Chat[]) =>
  [...new Set(chats.flatMap((c) => (c.folder ? [c.folder] : [])))].sort((a, b) => a.localeCompare(b));

function ChatLinks({ chats, selected }: { chats: Chat[]; selected?: string }) {
  return (
    <ul class="chat-items">
      {chats.map((c) => (
        <li key={c.id}>
          <a
            href={`#/chats/${c.id}`}
            class={c.id === selected ? 'active' : ''}
            aria-current={c.id === selected ? 'page' : undefined}
          >
            <span class="chat-item-title">
              {c.pinned && (
                <span aria-hidden="true" class="chat-pin-mark">
                  📌{' '}
                </span>
              )}
              {c.title}
            </span>
            <span class="muted small">{relative(c.updated_at)}</span>
          </a>
        </li>
      ))}
    </ul>
  );
}

/**
 * The list: pinned chats first (their own group), then each folder as a collapsible group (open while it holds the
 * open chat, or as the user left it), then the chats in no folder.
 */
function GroupedChats({ chats, selected }: { chats: Chat[]; selected?: string }) {
  const pinned = chats.filter((c) => c.pinned);
  const rest = chats.filter((c) => !c.pinned);
  const folders = folderNames(rest);
  const loose = rest.filter((c) => !c.folder);
  return (
    <div class="chat-groups" data-testid="chat-groups">
      {pinned.length > 0 && (
        <section aria-labelledby="chats-pinned" data-testid="chats-pinned">
          <h2 class="chat-group-title muted small" id="chats-pinned">
            {t('chat_extras.pinned')}
          </h2>
          <ChatLinks chats={pinned} selected={selected} />
        </section>
      )}
      {folders.map((f) => {
        const inside = rest.filter((c) => c.folder === f);
        return (
          <details
            key={f}
            class="chat-folder"
            open={inside.some((c) => c.id === selected) || undefined}
            data-folder={f}
          >
            <summary>
              <span aria-hidden="true">📁 </span>
              {f} <span class="muted small">({inside.length})</span>
            </summary>
            <ChatLinks chats={inside} selected={selected} />
          </details>
        );
      })}
      {loose.length > 0 && (pinned.length > 0 || folders.length > 0) && (
        <h2 class="chat-group-title muted small">{t('chat_extras.other')}</h2>
      )}
      <ChatLinks chats={loose} selected={selected} />
    </div>
  );
}
