/** Memory: the user's notes, measurements and dated events, which the assistant searches and reports compile. */
import { useState } from 'preact/hooks';
import { del, get, patch, post } from '../../lib/api.ts';
import { useAsync } from '../../lib/hooks.ts';
import { date, t } from '../../lib/i18n.ts';
import type { MemoryEntry } from '../../lib/types.ts';
import { Badge, Button, Card, ConfirmButton, Empty, ErrorNote, Loading, Page } from '../../ui/basics.tsx';
import { Modal } from '../../ui/modal.tsx';
import { toast } from '../../ui/toast.tsx';

export function MemoryPage() {
  const [q, setQ] = useState('');
  const [search, setSearch] = useState('');
  const list = useAsync(
    () => get<{ entries: MemoryEntry[] }>('/api/v1/memory', { q: search, limit: 200 }).then((r) => r.entries),
    [search],
  );
  const [editing, setEditing] = useState<MemoryEntry | null>(null);
  return (
    <Page title={t('memory.title')} subtitle={t('memory.subtitle')}>
      <Card title={t('memory.add')}>
        <EntryForm onSaved={() => void list.reload()} />
      </Card>
      <form
        class="search"
        role="search"
        onSubmit={(e) => {
          e.preventDefault();
          setSearch(q.trim());
        }}
      >
        <label class="sr-only" for="memory-q">
          {t('common.search')}
        </label>
        <input
          id="memory-q"
          type="search"
          placeholder={t('memory.search_placeholder')}
          value={q}
          onInput={(e) => setQ(e.currentTarget.value)}
        />
        <Button type="submit">{t('common.search')}</Button>
      </form>
      <ErrorNote error={list.error} />
      {!list.data ? (
        <Loading />
      ) : !list.data.length ? (
        <Empty>{search ? t('common.no_matches') : t('memory.empty')}</Empty>
      ) : (
        <ul class="entries">
          {list.data.map((m) => (
            <li key={m.id} class="card entry">
              <div class="meta">
                {m.category && <Badge tone="info">{m.category}</Badge>}
                {m.always_include && <Badge tone="ok">{t('assistant_memory.always_badge')}</Badge>}
                <span class="muted small">{date(m.recorded_at ?? m.created_at)}</span>
              </div>
              <p class="pre">{m.content}</p>
              <div class="card-foot">
                <Button small icon="edit" onClick={() => setEditing(m)}>
                  {t('common.edit')}
                </Button>
                <ConfirmButton
                  onConfirm={async () => {
                    await del(`/api/v1/memory/${m.id}`);
                    toast.ok(t('common.deleted'));
                    void list.reload();
                  }}
                />
              </div>
            </li>
          ))}
        </ul>
      )}
      {editing && (
        <Modal title={t('memory.edit')} onClose={() => setEditing(null)}>
          <EntryForm
            entry={editing}
            onSaved={() => {
              setEditing(null);
              void list.reload();
            }}
          />
        </Modal>
      )}
    </Page>
  );
}

function EntryForm({ entry, onSaved }: { entry?: MemoryEntry; onSaved: () => void }) {
  const [content, setContent] = useState(entry?.content ?? '');
  const [category, setCategory] = useState(entry?.category ?? '');
  const [when, setWhen] = useState(entry?.recorded_at?.slice(0, 10) ?? '');
  const [always, setAlways] = useState(entry?.always_include ?? false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    const body = { content, category: category.trim() || null, recorded_at: when || null, always_include: always };
    try {
      if (entry) await patch(`/api/v1/memory/${entry.id}`, body);
      else await post('/api/v1/memory', body);
      toast.ok(t('common.saved'));
      if (!entry) {
        setContent('');
        setCategory('');
        setWhen('');
        setAlways(false);
      }
      onSaved();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="stack" onSubmit={submit}>
      <label class="field">
        <span class="field-label">{t('memory.content')}</span>
        <textarea
          required
          rows={3}
          maxLength={32000}
          value={content}
          onInput={(e) => setContent(e.currentTarget.value)}
        />
      </label>
      <div class="grid-2">
        <label class="field">
          <span class="field-label">{t('memory.category')}</span>
          <input
            maxLength={100}
            placeholder={t('memory.category_placeholder')}
            value={category}
            onInput={(e) => setCategory(e.currentTarget.value)}
          />
        </label>
        <label class="field">
          <span class="field-label">{t('memory.recorded_at')}</span>
          <input type="date" value={when} onInput={(e) => setWhen(e.currentTarget.value)} />
        </label>
      </div>
      <label class="check">
        <input
          type="checkbox"
          checked={always}
          onChange={(e) => setAlways(e.currentTarget.checked)}
          data-testid="memory-always"
        />
        <span>
          {t('assistant_memory.always_include')}
          <span class="muted small">{t('assistant_memory.always_include_help')}</span>
        </span>
      </label>
      <ErrorNote error={error} />
      <div class="form-actions">
        <Button type="submit" variant="primary" busy={busy}>
          {entry ? t('common.save') : t('memory.add_button')}
        </Button>
      </div>
    </form>
  );
}
