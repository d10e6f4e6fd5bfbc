/**
 * One conversation: header with skill, model and quota, the messages, and the composer. A reply
 * streams in as it is produced; Stop aborts the request, and the service keeps the partial
 * reply as interrupted. Sending is disabled, with the reason, while a daily limit is reached.
 * The last reply can be regenerated (or retried after a failure), questions edited and resent,
 * and alternatives flipped through; an archived chat is read-only until it is unarchived.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import type { Chat } from '../../../../src/assistant/chat-api-types.ts';
import { ApiError, del, get, patch, post } from '../../lib/api.ts';
import { editMessage, regenerateMessage, type StreamHandlers, sendMessage } from '../../lib/chat-stream.ts';
import { useAsync } from '../../lib/hooks.ts';
import { t, time } from '../../lib/i18n.ts';
import { blockedBy, useQuota } from '../../lib/quota.ts';
import { navigate } from '../../lib/router.ts';
import type { Message, Skill } from '../../lib/types.ts';
import { Button, ConfirmButton, ErrorNote, Loading } from '../../ui/basics.tsx';
import { Modal } from '../../ui/modal.tsx';
import { QuotaBar } from '../../ui/quota-bar.tsx';
import { toast } from '../../ui/toast.tsx';
import { AttachButton, AttachChips, type AttachedDoc, useAttachments } from './attach.tsx';
import { ExportLinks, useFocusMessage } from './chat-search.tsx';
import { ChatStatus } from './chat-status.tsx';
import { FolderDialog } from './folder-dialog.tsx';
import { type MessageActions, MessageBubble, type ShownMessage } from './message.tsx';

const temp = (role: Message['role'], chatId: string, content: string, docs: AttachedDoc[] = []): ShownMessage => ({
  id: `local-${role}-${Date.now()}`,
  chat_id: chatId,
  role,
  content,
  status: 'complete',
  usage: null,
  context_version: null,
  error: null,
  created_at: new Date().toISOString(),
  streaming: role === 'assistant',
  attachments: docs.map((d) => ({ type: 'document', document_id: d.id, name: d.name, available: true })),
});

/** `prefill`: the composer's first text (a chat opened with "Ask the assistant" on an event suggests a question). */
export function ChatView({
  chatId,
  skills,
  onChanged,
  focus,
  prefill,
  folders = [],
}: {
  chatId: string;
  skills: Skill[];
  /** The folders the user's chats are in, offered when moving this one. */
  folders?: string[];
  onChanged: () => void;
  focus?: string;
  prefill?: string;
}) {
  const chat = useAsync(() => get<Chat>(`/api/v1/chats/${chatId}`), [chatId]);
  const [messages, setMessages] = useState<ShownMessage[] | null>(null);
  const [hasMore, setHasMore] = useState(false);
  const [draft, setDraft] = useState(prefill ?? '');
  const [streaming, setStreaming] = useState(false);
  const [sendError, setSendError] = useState<unknown>(null);
  const { quota, refresh } = useQuota();
  const controller = useRef<AbortController | null>(null);
  const list = useRef<HTMLDivElement>(null);
  const stick = useRef(true);

  const loadPage = async (before?: string) => {
    const r = await get<{ messages: Message[]; has_more: boolean }>(`/api/v1/chats/${chatId}/messages`, {
      limit: 50,
      before,
    });
    setHasMore(r.has_more);
    return r.messages;
  };
  useEffect(() => {
    loadPage()
      .then(setMessages)
      .catch((err) => setSendError(err));
    return () => controller.current?.abort();
  }, [chatId]);
  useEffect(() => {
    if (chat.data) document.title = `${chat.data.title} · Herald`;
  }, [chat.data]);
  useEffect(() => {
    const el = list.current;
    if (el && stick.current) el.scrollTop = el.scrollHeight;
  }, [messages]);

  const blocked = blockedBy(quota);
  const reason =
    blocked && quota
      ? t(`chat.blocked_${blocked}`, {
          limit: blocked === 'messages' ? quota.message_limit : quota.token_limit,
          time: time(quota.resets_at),
        })
      : null;

  const update = (id: string, fn: (m: ShownMessage) => ShownMessage) =>
    setMessages((ms) => ms?.map((m) => (m.id === id ? fn(m) : m)) ?? ms);

  /**
   * Streams one reply. `shown` is the conversation to show while it streams (ending with the
   * question), `question` the local question bubble to replace with the saved one (if any).
   */
  const run = async (
    shown: ShownMessage[],
    question: ShownMessage | null,
    start: (signal: AbortSignal, on: StreamHandlers) => Promise<void>,
    restore?: string,
  ) => {
    let assistant = temp('assistant', chatId, '');
    setMessages([...shown, assistant]);
    setSendError(null);
    setStreaming(true);
    stick.current = true;
    const ac = new AbortController();
    controller.current = ac;
    // Deltas arrive faster than frames; text is gathered and painted once per frame.
    let pending = '';
    let frame = 0;
    let saved = false;
    const flush = () => {
      frame = 0;
      const add = pending;
      pending = '';
      if (add) update(assistant.id, (m) => ({ ...m, content: m.content + add }));
    };
    try {
      await start(ac.signal, {
        start: (d) => {
          const id = d.assistant_message_id;
          setMessages(
            (ms) =>
              ms?.map((m) =>
                question && m.id === question.id
                  ? d.user_message
                  : m.id === assistant.id
                    ? { ...m, id, model: d.model ?? null }
                    : m,
              ) ?? ms,
          );
          assistant = { ...assistant, id };
        },
        delta: (d) => {
          pending += d.content;
          frame ||= requestAnimationFrame(flush);
        },
        // A call replaces the same tool's call in progress (started, or waiting for the user's answer); finished ones
        // stay.
        tool: (d) =>
          update(assistant.id, (m) => ({
            ...m,
            tools: [
              ...(m.tools ?? []).filter(
                (x) => x.name !== d.name || (x.status !== 'started' && x.status !== 'needs_confirmation'),
              ),
              d,
            ],
          })),
        done: (d) => {
          cancelAnimationFrame(frame);
          pending = '';
          saved = true;
          update(assistant.id, (m) => ({ ...d.message, tools: m.tools }));
        },
        // The stream's chat is the older client type: the title is taken, the rest kept.
        title: (d) => {
          if (chat.data) chat.set({ ...chat.data, title: d.chat.title, updated_at: d.chat.updated_at });
          onChanged();
        },
        error: (d) => {
          cancelAnimationFrame(frame);
          flush();
          saved = true;
          update(assistant.id, (m) => ({
            ...(d.message ?? m),
            tools: m.tools,
            streaming: false,
            status: 'error',
            error: d.detail,
            errorCode: d.code,
          }));
        },
      });
      flush();
      update(assistant.id, (m) => (m.streaming ? { ...m, streaming: false } : m));
    } catch (err) {
      cancelAnimationFrame(frame);
      if ((err as Error).name === 'AbortError') {
        flush();
        update(assistant.id, (m) => ({ ...m, streaming: false, status: 'interrupted' }));
      } else {
        // Refused before streaming (quota, validation, model down): show why, give the text back.
        if (err instanceof ApiError && (err.status === 429 || err.status === 422) && restore !== undefined)
          setDraft(restore);
        const page = await loadPage().catch(() => null);
        const last = page?.[page.length - 1];
        // A model failure is shown on the failed reply itself, with Retry; anything else above the composer.
        if (
          page &&
          last?.role === 'assistant' &&
          last.status === 'error' &&
          err instanceof ApiError &&
          /^model_/.test(err.code)
        ) {
          setMessages(page.map((m) => (m.id === last.id ? { ...m, errorCode: err.code } : m)));
        } else {
          setSendError(err);
          setMessages(page);
        }
        if (err instanceof ApiError && err.code === 'chat_archived') void chat.reload();
      }
    } finally {
      controller.current = null;
      setStreaming(false);
      void refresh();
      onChanged();
    }
    // Alternatives and attachments come with the saved page.
    if (saved) {
      const page = await loadPage().catch(() => null);
      if (page)
        setMessages((ms) =>
          page.map((m) => {
            const was = ms?.find((x) => x.id === m.id);
            return was?.errorCode ? { ...m, errorCode: was.errorCode } : m;
          }),
        );
    }
  };

  const send = async () => {
    const content = draft.trim();
    if (!content || streaming || blocked || chat.data?.is_archived || attach.uploading) return;
    const docs = attach.docs;
    const user = temp('user', chatId, content, docs);
    setDraft('');
    attach.clear();
    await run(
      [...(messages ?? []), user],
      user,
      (signal, on) =>
        sendMessage(
          chatId,
          content,
          signal,
          on,
          docs.map((d) => d.id),
        ),
      content,
    );
  };

  const regenerate = async (m: ShownMessage) => {
    if (streaming) return;
    const at = messages?.findIndex((x) => x.id === m.id) ?? -1;
    if (at < 0) return;
    await run(messages!.slice(0, at), null, (signal, on) => regenerateMessage(chatId, m.id, signal, on));
  };

  const edit = async (m: ShownMessage, content: string) => {
    if (streaming) return;
    const at = messages?.findIndex((x) => x.id === m.id) ?? -1;
    if (at < 0) return;
    const user = temp('user', chatId, content);
    await run([...messages!.slice(0, at), user], user, (signal, on) => editMessage(chatId, m.id, content, signal, on));
  };

  const show = async (id: string) => {
    try {
      await post(`/api/v1/chats/${chatId}/messages/${id}/show`);
      setMessages(await loadPage());
    } catch (err) {
      toast.error(err);
    }
  };

  const archived = Boolean(chat.data?.is_archived);
  const actionsFor = (m: ShownMessage, i: number, all: ShownMessage[]): MessageActions => {
    if (streaming || archived || m.id.startsWith('local-'))
      return { show: streaming ? undefined : (id) => void show(id) };
    return {
      show: (id) => void show(id),
      regenerate:
        m.role === 'assistant' && i === all.length - 1 && all[i - 1]?.role === 'user' && !blocked
          ? () => void regenerate(m)
          : undefined,
      edit: m.role === 'user' && !blocked ? (content) => void edit(m, content) : undefined,
    };
  };

  const older = async () => {
    if (!messages?.length) return;
    stick.current = false;
    const page = await loadPage(messages[0].id);
    setMessages([...page, ...messages]);
  };
  // Opened from a search result (`?message=<id>`): scroll to that message and highlight it.
  useFocusMessage(list, messages, focus, hasMore, older, stick);

  const save = async (body: Partial<Chat>) => {
    try {
      chat.set(await patch<Chat>(`/api/v1/chats/${chatId}`, body));
      onChanged();
    } catch (err) {
      toast.error(err);
    }
  };
  const [renaming, setRenaming] = useState(false);
  const [moving, setMoving] = useState(false);
  const attach = useAttachments();
  /** On a phone the header is one line: the pickers and actions fold into a menu behind "⋯". */
  const [toolsOpen, setToolsOpen] = useState(false);
  const narrow = typeof matchMedia === 'function' && matchMedia('(max-width: 600px)').matches;
  const models = useAsync(
    () => get<{ models: { id: string }[]; default: string }>('/api/v1/models').catch(() => null),
    [],
  );

  if (chat.error)
    return (
      <div class="card">
        <ErrorNote error={chat.error} />
      </div>
    );
  const c = chat.data;
  return (
    <div class="chat card">
      <header class="chat-head">
        <div class="chat-title-row">
          <a href="#/chats" class="back-link">
            {t('chats.back')}
          </a>
          <h1 id="page-title" tabIndex={-1}>
            {c?.title ?? '…'}
          </h1>
          {c && (
            <button
              type="button"
              class="btn btn-sm btn-ghost chat-tools-toggle"
              aria-expanded={toolsOpen}
              aria-controls="chat-tools"
              title={t('chat_controls.actions')}
              onClick={() => setToolsOpen(!toolsOpen)}
              data-testid="chat-tools-toggle"
            >
              <span aria-hidden="true">⋯</span>
              <span class="sr-only">{t('chat_controls.actions')}</span>
            </button>
          )}
          {c && (
            <div class={`chat-tools${toolsOpen ? ' open' : ''}`} id="chat-tools">
              <label class="sr-only" for="skill-pick">
                {t('chat.skill')}
              </label>
              <select
                id="skill-pick"
                value={c.skill_id ?? ''}
                onChange={(e) => void save({ skill_id: e.currentTarget.value || null })}
                data-testid="skill-picker"
              >
                <option value="">{t('chat.no_skill')}</option>
                {skills.map((s) => (
                  <option key={s.id} value={s.id}>
                    {s.name}
                    {s.scope === 'general' ? ` · ${t('skills.general')}` : ''}
                  </option>
                ))}
              </select>
              {models.data && models.data.models.length > 1 && (
                <>
                  <label class="sr-only" for="model-pick">
                    {t('chat_controls.model')}
                  </label>
                  <select
                    id="model-pick"
                    value={c.model ?? models.data.default}
                    data-testid="model-picker"
                    title={t('chat_controls.model')}
                    onChange={(e) => {
                      const v = e.currentTarget.value;
                      void save({ model: v === models.data!.default ? null : v });
                    }}
                  >
                    {models.data.models.map((x) => (
                      <option key={x.id} value={x.id}>
                        {x.id === models.data!.default ? t('chat_controls.model_default', { model: x.id }) : x.id}
                      </option>
                    ))}
                  </select>
                </>
              )}
              <ExportLinks chatId={chatId} />
              <Button small variant="ghost" onClick={() => setRenaming(true)}>
                {t('chat.rename')}
              </Button>
              <Button small variant="ghost" onClick={() => void save({ pinned: !c.pinned })} data-testid="chat-pin">
                {c.pinned ? t('chat_extras.unpin') : t('chat_extras.pin')}
              </Button>
              <Button small variant="ghost" onClick={() => setMoving(true)} data-testid="chat-move">
                {t('chat_extras.move')}
              </Button>
              <Button small variant="ghost" onClick={() => void save({ is_archived: !c.is_archived })}>
                {c.is_archived ? t('chat.unarchive') : t('chat.archive')}
              </Button>
              <ConfirmButton
                onConfirm={async () => {
                  await del(`/api/v1/chats/${chatId}`);
                  onChanged();
                  navigate('/chats');
                }}
              />
            </div>
          )}
        </div>
        <QuotaBar quota={quota} />
        <ChatStatus model={c?.model ?? models.data?.default ?? null} quota={quota} />
      </header>
      <div
        class="messages"
        ref={list}
        aria-live="polite"
        aria-busy={streaming}
        onScroll={(e) => {
          const el = e.currentTarget;
          stick.current = el.scrollHeight - el.scrollTop - el.clientHeight < 60;
        }}
      >
        {hasMore && (
          <div class="center">
            <Button small variant="ghost" onClick={() => void older()}>
              {t('chat.older')}
            </Button>
          </div>
        )}
        {!messages ? (
          <Loading />
        ) : !messages.length ? (
          <p class="muted center pad">{t('chat.empty')}</p>
        ) : (
          messages.map((m, i, all) => <MessageBubble key={m.id} m={m} actions={actionsFor(m, i, all)} />)
        )}
      </div>
      {renaming && c && (
        <RenameDialog
          title={c.title}
          onClose={() => setRenaming(false)}
          onSave={async (title) => {
            await save({ title });
            setRenaming(false);
          }}
        />
      )}
      {moving && c && (
        <FolderDialog
          folder={c.folder}
          folders={folders}
          onClose={() => setMoving(false)}
          onSave={async (folder) => {
            await save({ folder });
            setMoving(false);
          }}
        />
      )}
      {c?.is_archived ? (
        <div class="composer composer-archived" data-testid="archived-note">
          <p class="composer-note muted">{t('chat_controls.archived_note')}</p>
          <Button variant="primary" onClick={() => void save({ is_archived: false })} data-testid="unarchive">
            {t('chat_controls.unarchive_to_continue')}
          </Button>
        </div>
      ) : (
        <form
          class={`composer${attach.dragging ? ' composer-drop' : ''}`}
          onSubmit={(e) => {
            e.preventDefault();
            void send();
          }}
          {...attach.dropHandlers}
        >
          <AttachChips attach={attach} />
          {sendError ? (
            <div class="composer-note">
              <ErrorNote error={sendError} />
            </div>
          ) : null}
          {reason && (
            <p class="note note-danger composer-note" role="status" id="send-blocked" data-testid="send-blocked">
              {reason}
            </p>
          )}
          <label class="sr-only" for="composer">
            {t('chat.message')}
          </label>
          <textarea
            id="composer"
            rows={2}
            maxLength={32000}
            placeholder={narrow ? t('chat_controls.placeholder_short') : t('chat.placeholder')}
            value={draft}
            disabled={Boolean(blocked)}
            aria-describedby={reason ? 'send-blocked' : undefined}
            onInput={(e) => setDraft(e.currentTarget.value)}
            onKeyDown={(e) => {
              if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
                e.preventDefault();
                void send();
              }
            }}
          />
          <AttachButton attach={attach} disabled={Boolean(blocked) || streaming} />
          {streaming ? (
            <Button variant="danger" icon="stop" onClick={() => controller.current?.abort()}>
              {t('chat.stop')}
            </Button>
          ) : (
            <Button
              type="submit"
              variant="primary"
              icon="send"
              disabled={!draft.trim() || Boolean(blocked) || attach.uploading}
              title={reason ?? undefined}
            >
              {t('chat.send')}
            </Button>
          )}
        </form>
      )}
    </div>
  );
}

function RenameDialog({
  title,
  onClose,
  onSave,
}: {
  title: string;
  onClose: () => void;
  onSave: (title: string) => Promise<void>;
}) {
  const [value, setValue] = useState(title);
  const [busy, setBusy] = useState(false);
  return (
    <Modal title={t('chat.rename')} onClose={onClose}>
      <form
        class="stack"
        onSubmit={async (e) => {
          e.preventDefault();
          if (!value.trim()) return;
          setBusy(true);
          await onSave(value.trim());
          setBusy(false);
        }}
      >
        <label class="field">
          <span class="field-label">{t('chat.rename_prompt')}</span>
          <input required maxLength={200} value={value} onInput={(e) => setValue(e.currentTarget.value)} />
        </label>
        <div class="form-actions">
          <Button onClick={onClose}>{t('common.cancel')}</Button>
          <Button type="submit" variant="primary" busy={busy}>
            {t('common.save')}
          </Button>
        </div>
      </form>
    </Modal>
  );
}
