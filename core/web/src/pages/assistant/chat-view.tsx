/**
 * One conversation: header with skill and quota, the messages, and the composer. A reply
 * streams in as it is produced; Stop aborts the request, and the service keeps the partial
 * reply as interrupted. Sending is disabled, with the reason, while a daily limit is reached.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, del, get, patch } from '../../lib/api.ts';
import { sendMessage } from '../../lib/chat-stream.ts';
import { useAsync } from '../../lib/hooks.ts';
import { t, time } from '../../lib/i18n.ts';
import { blockedBy, useQuota } from '../../lib/quota.ts';
import { navigate } from '../../lib/router.ts';
import type { Chat, Message, Skill } from '../../lib/types.ts';
import { Button, ConfirmButton, ErrorNote, Loading } from '../../ui/basics.tsx';
import { Modal } from '../../ui/modal.tsx';
import { QuotaBar } from '../../ui/quota-bar.tsx';
import { toast } from '../../ui/toast.tsx';
import { MessageBubble, type ShownMessage } from './message.tsx';

const temp = (role: Message['role'], chatId: string, content: string): ShownMessage => ({
  id: `local-${role}-${Date.now()}`, chat_id: chatId, role, content, status: 'complete', usage: null, context_version: null, error: null,
  created_at: new Date().toISOString(), streaming: role === 'assistant',
});

export function ChatView({ chatId, skills, onChanged }: { chatId: string; skills: Skill[]; onChanged: () => void }) {
  const chat = useAsync(() => get<Chat>(`/api/v1/chats/${chatId}`), [chatId]);
  const [messages, setMessages] = useState<ShownMessage[] | null>(null);
  const [hasMore, setHasMore] = useState(false);
  const [draft, setDraft] = useState('');
  const [streaming, setStreaming] = useState(false);
  const [sendError, setSendError] = useState<unknown>(null);
  const { quota, refresh } = useQuota();
  const controller = useRef<AbortController | null>(null);
  const list = useRef<HTMLDivElement>(null);
  const stick = useRef(true);

  const loadPage = async (before?: string) => {
    const r = await get<{ messages: Message[]; has_more: boolean }>(`/api/v1/chats/${chatId}/messages`, { limit: 50, before });
    setHasMore(r.has_more);
    return r.messages;
  };
  useEffect(() => { loadPage().then(setMessages).catch((err) => setSendError(err)); return () => controller.current?.abort(); }, [chatId]);
  useEffect(() => { if (chat.data) document.title = `${chat.data.title} · Herald`; }, [chat.data]);
  useEffect(() => { const el = list.current; if (el && stick.current) el.scrollTop = el.scrollHeight; }, [messages]);

  const blocked = blockedBy(quota);
  const reason = blocked && quota ? t(`chat.blocked_${blocked}`, { limit: blocked === 'messages' ? quota.message_limit : quota.token_limit, time: time(quota.resets_at) }) : null;

  const update = (id: string, fn: (m: ShownMessage) => ShownMessage) => setMessages((ms) => ms?.map((m) => (m.id === id ? fn(m) : m)) ?? ms);

  const send = async () => {
    const content = draft.trim();
    if (!content || streaming || blocked) return;
    const user = temp('user', chatId, content);
    let assistant = temp('assistant', chatId, '');
    setMessages((ms) => [...(ms ?? []), user, assistant]);
    setDraft('');
    setSendError(null);
    setStreaming(true);
    stick.current = true;
    const ac = new AbortController();
    controller.current = ac;
    // Deltas arrive faster than frames; text is gathered and painted once per frame.
    let pending = '';
    let frame = 0;
    const flush = () => { frame = 0; const add = pending; pending = ''; if (add) update(assistant.id, (m) => ({ ...m, content: m.content + add })); };
    try {
      await sendMessage(chatId, content, ac.signal, {
        start: (d) => {
          const id = d.assistant_message_id;
          setMessages((ms) => ms?.map((m) => (m.id === user.id ? d.user_message : m.id === assistant.id ? { ...m, id } : m)) ?? ms);
          assistant = { ...assistant, id };
        },
        delta: (d) => { pending += d.content; frame ||= requestAnimationFrame(flush); },
        tool: (d) => update(assistant.id, (m) => ({ ...m, tools: [...(m.tools ?? []).filter((x) => x.name !== d.name || x.status === 'done'), d] })),
        done: (d) => { cancelAnimationFrame(frame); pending = ''; update(assistant.id, (m) => ({ ...d.message, tools: m.tools })); },
        error: (d) => { cancelAnimationFrame(frame); flush(); update(assistant.id, (m) => ({ ...(d.message ?? m), tools: m.tools, streaming: false, status: 'error', error: d.detail })); },
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
        setSendError(err);
        if (err instanceof ApiError && (err.status === 429 || err.status === 422)) setDraft(content);
        setMessages(await loadPage().catch(() => null));
      }
    } finally {
      controller.current = null;
      setStreaming(false);
      void refresh();
      onChanged();
    }
  };

  const older = async () => {
    if (!messages?.length) return;
    stick.current = false;
    const page = await loadPage(messages[0].id);
    setMessages([...page, ...messages]);
  };

  const save = async (body: Partial<Chat>) => {
    try { chat.set(await patch<Chat>(`/api/v1/chats/${chatId}`, body)); onChanged(); } catch (err) { toast.error(err); }
  };
  const [renaming, setRenaming] = useState(false);

  if (chat.error) return <div class="card"><ErrorNote error={chat.error} /></div>;
  const c = chat.data;
  return (
    <div class="chat card">
      <header class="chat-head">
        <div class="chat-title-row">
          <a href="#/chats" class="back-link">{t('chats.back')}</a>
          <h1 id="page-title" tabIndex={-1}>{c?.title ?? '…'}</h1>
          {c && (
            <div class="chat-tools">
              <label class="sr-only" for="skill-pick">{t('chat.skill')}</label>
              <select id="skill-pick" value={c.skill_id ?? ''} onChange={(e) => void save({ skill_id: (e.target as HTMLSelectElement).value || null })} data-testid="skill-picker">
                <option value="">{t('chat.no_skill')}</option>
                {skills.map((s) => <option key={s.id} value={s.id}>{s.name}{s.scope === 'general' ? ` · ${t('skills.general')}` : ''}</option>)}
              </select>
              <Button small variant="ghost" onClick={() => setRenaming(true)}>{t('chat.rename')}</Button>
              <Button small variant="ghost" onClick={() => void save({ is_archived: !c.is_archived })}>{c.is_archived ? t('chat.unarchive') : t('chat.archive')}</Button>
              <ConfirmButton onConfirm={async () => { await del(`/api/v1/chats/${chatId}`); onChanged(); navigate('/chats'); }} />
            </div>
          )}
        </div>
        <QuotaBar quota={quota} />
      </header>
      <div class="messages" ref={list} aria-live="polite" aria-busy={streaming}
        onScroll={(e) => { const el = e.currentTarget as HTMLDivElement; stick.current = el.scrollHeight - el.scrollTop - el.clientHeight < 60; }}>
        {hasMore && <div class="center"><Button small variant="ghost" onClick={() => void older()}>{t('chat.older')}</Button></div>}
        {!messages ? <Loading /> : !messages.length ? <p class="muted center pad">{t('chat.empty')}</p> : messages.map((m) => <MessageBubble key={m.id} m={m} />)}
      </div>
      {renaming && c && <RenameDialog title={c.title} onClose={() => setRenaming(false)} onSave={async (title) => { await save({ title }); setRenaming(false); }} />}
      <form class="composer" onSubmit={(e) => { e.preventDefault(); void send(); }}>
        {sendError ? <div class="composer-note"><ErrorNote error={sendError} /></div> : null}
        {reason && <p class="note note-danger composer-note" role="status" id="send-blocked" data-testid="send-blocked">{reason}</p>}
        <label class="sr-only" for="composer">{t('chat.message')}</label>
        <textarea id="composer" rows={2} maxLength={32000} placeholder={t('chat.placeholder')} value={draft} disabled={Boolean(blocked)} aria-describedby={reason ? 'send-blocked' : undefined}
          onInput={(e) => setDraft((e.target as HTMLTextAreaElement).value)}
          onKeyDown={(e) => { if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) { e.preventDefault(); void send(); } }} />
        {streaming
          ? <Button variant="danger" icon="stop" onClick={() => controller.current?.abort()}>{t('chat.stop')}</Button>
          : <Button type="submit" variant="primary" icon="send" disabled={!draft.trim() || Boolean(blocked)} title={reason ?? undefined}>{t('chat.send')}</Button>}
      </form>
    </div>
  );
}


function RenameDialog({ title, onClose, onSave }: { title: string; onClose: () => void; onSave: (title: string) => Promise<void> }) {
  const [value, setValue] = useState(title);
  const [busy, setBusy] = useState(false);
  return (
    <Modal title={t('chat.rename')} onClose={onClose}>
      <form class="stack" onSubmit={async (e) => { e.preventDefault(); if (!value.trim()) return; setBusy(true); await onSave(value.trim()); setBusy(false); }}>
        <label class="field"><span class="field-label">{t('chat.rename_prompt')}</span>
          <input required maxLength={200} value={value} onInput={(e) => setValue((e.target as HTMLInputElement).value)} /></label>
        <div class="form-actions"><Button onClick={onClose}>{t('common.cancel')}</Button><Button type="submit" variant="primary" busy={busy}>{t('common.save')}</Button></div>
      </form>
    </Modal>
  );
}
