/** Documents: uploads (text, Markdown, PDF) whose text the assistant and reports can use. */
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, del, get } from '../../lib/api.ts';
import { useAsync } from '../../lib/hooks.ts';
import { bytes, dateTime, num, t } from '../../lib/i18n.ts';
import { navigate, useLocation } from '../../lib/router.ts';
import type { Doc, Storage } from '../../lib/types.ts';
import { Button, Card, ConfirmButton, Empty, ErrorNote, Loading, Page } from '../../ui/basics.tsx';
import { toast } from '../../ui/toast.tsx';
import { DocReader } from './doc-reader.tsx';
import { Marked, SEARCH_DEBOUNCE_MS } from './marks.tsx';
import './chat-extras.css';

export function DocumentsPage() {
  const [q, setQ] = useState('');
  const [search, setSearch] = useState('');
  const list = useAsync(
    () => get<{ documents: Doc[] }>('/api/v1/documents', { q: search, limit: 200 }).then((r) => r.documents),
    [search],
  );
  const storage = useAsync(() => get<Storage>('/api/v1/storage'), []);
  // The list follows the typing, after a pause.
  useEffect(() => {
    const timer = setTimeout(() => setSearch(q.trim()), SEARCH_DEBOUNCE_MS);
    return () => clearTimeout(timer);
  }, [q]);
  // `?open=<id>` (a document's chip on a chat message) opens its reader.
  const open = useLocation().query.get('open');
  const [reading, setReading] = useState<string | null>(open);
  useEffect(() => setReading(open), [open]);
  const closeReader = () => {
    setReading(null);
    if (open) navigate('/documents', true);
  };
  const reload = () => {
    void list.reload();
    void storage.reload();
  };
  const file = useRef<HTMLInputElement>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const upload = async (e: Event) => {
    e.preventDefault();
    const f = file.current?.files?.[0];
    if (!f) return;
    const form = new FormData();
    form.append('file', f);
    setBusy(true);
    setError(null);
    try {
      await api('POST', '/api/v1/documents', { form });
      toast.ok(t('documents.uploaded'));
      if (file.current) file.current.value = '';
      reload();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <Page title={t('documents.title')} subtitle={t('documents.subtitle')}>
      {storage.data && <StorageMeter storage={storage.data} />}
      <Card title={t('documents.upload')}>
        <form class="upload" onSubmit={upload}>
          <label class="field grow">
            <span class="field-label">{t('documents.file')}</span>
            <input
              ref={file}
              type="file"
              required
              accept=".txt,.md,.markdown,.pdf,text/plain,text/markdown,application/pdf"
            />
          </label>
          <Button type="submit" variant="primary" busy={busy}>
            {t('documents.upload_button')}
          </Button>
        </form>
        <p class="hint">{t('documents.upload_help')}</p>
        <ErrorNote error={error} />
      </Card>
      <form
        class="search"
        role="search"
        onSubmit={(e) => {
          e.preventDefault();
          setSearch(q.trim());
        }}
      >
        <label class="sr-only" for="doc-q">
          {t('common.search')}
        </label>
        <input
          id="doc-q"
          type="search"
          placeholder={t('documents.search_placeholder')}
          value={q}
          onInput={(e) => setQ(e.currentTarget.value)}
        />
        <Button type="submit">{t('common.search')}</Button>
      </form>
      <ErrorNote error={list.error} />
      {!list.data ? (
        <Loading />
      ) : !list.data.length ? (
        <Empty>{search ? t('common.no_matches') : t('documents.empty')}</Empty>
      ) : (
        <div class="table-wrap card">
          <table class="table">
            <thead>
              <tr>
                <th>{t('documents.name')}</th>
                <th>{t('documents.size')}</th>
                <th>{t('documents.text')}</th>
                <th>{t('documents.uploaded_at')}</th>
                <th>
                  <span class="sr-only">{t('common.actions')}</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {list.data.map((d) => (
                <tr key={d.id}>
                  <td>
                    <strong>{d.filename}</strong>
                    {d.excerpt && (
                      <small class="hint">
                        <Marked text={d.excerpt} q={search} />
                      </small>
                    )}
                  </td>
                  <td class="nowrap">{bytes(d.size_bytes)}</td>
                  <td class="nowrap">{t('documents.chars', { n: num(d.text_chars) })}</td>
                  <td class="nowrap">{dateTime(d.created_at)}</td>
                  <td class="row-actions">
                    <Button small variant="ghost" onClick={() => setReading(d.id)} data-testid="doc-read">
                      {t('chat_extras.read')}
                    </Button>
                    <ConfirmButton
                      onConfirm={async () => {
                        await del(`/api/v1/documents/${d.id}`);
                        toast.ok(t('common.deleted'));
                        reload();
                      }}
                    />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {reading && <DocReader id={reading} q={search} onClose={closeReader} />}
    </Page>
  );
}

/** Used against the limit, for documents, memory entries and reports together; highlighted near and at the limit. */
function StorageMeter({ storage: s }: { storage: Storage }) {
  const pct = s.limit_bytes > 0 ? Math.min(100, Math.round((s.used_bytes / s.limit_bytes) * 100)) : 100;
  return (
    <div
      class={`quota-item storage-meter${s.exceeded ? ' reached' : pct >= 80 ? ' near' : ''}`}
      data-testid="storage"
      data-exceeded={s.exceeded ? 'true' : 'false'}
    >
      <div class="quota-label">
        <span>{t('storage.title')}</span>
        <span class="quota-num">
          {t('storage.used_of', { used: bytes(s.used_bytes), limit: bytes(s.limit_bytes) })}
        </span>
      </div>
      <div
        class="meter"
        role="meter"
        aria-label={t('storage.title')}
        aria-valuemin={0}
        aria-valuemax={s.limit_bytes}
        aria-valuenow={Math.min(s.used_bytes, s.limit_bytes)}
      >
        <span style={{ width: `${pct}%` }} />
      </div>
      <small class="hint">
        {t('storage.breakdown', {
          documents: bytes(s.documents_bytes),
          memory: bytes(s.memory_bytes),
          reports: bytes(s.reports_bytes),
        })}
      </small>
      {s.exceeded && <span class="quota-flag">{t('storage.full')}</span>}
    </div>
  );
}
