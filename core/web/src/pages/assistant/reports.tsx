/** PDF reports compiled from memory and documents: generate, list, download. */
import { useState } from 'preact/hooks';
import { del, get, post } from '../../lib/api.ts';
import { useAsync } from '../../lib/hooks.ts';
import { bytes, dateTime, LOCALES, locale, t } from '../../lib/i18n.ts';
import type { Report } from '../../lib/types.ts';
import { Badge, Button, Card, ConfirmButton, Empty, ErrorNote, Loading, Page } from '../../ui/basics.tsx';
import { Icon } from '../../ui/icons.tsx';
import { languageName } from '../../ui/names.ts';
import { toast } from '../../ui/toast.tsx';

export function ReportsPage() {
  const list = useAsync(() => get<{ reports: Report[] }>('/api/v1/reports', { limit: 200 }).then((r) => r.reports), []);
  const [title, setTitle] = useState('');
  const [lang, setLang] = useState<string>(locale());
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const generate = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await post<Report>('/api/v1/reports', { locale: lang, ...(title.trim() ? { title: title.trim() } : {}) });
      toast.ok(t('reports.generated'));
      setTitle('');
      void list.reload();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <Page title={t('reports.title')} subtitle={t('reports.subtitle')}>
      <Card title={t('reports.generate')}>
        <form class="upload" onSubmit={generate}>
          <label class="field grow">
            <span class="field-label">{t('reports.report_title')}</span>
            <input
              maxLength={200}
              placeholder={t('reports.title_placeholder')}
              value={title}
              onInput={(e) => setTitle(e.currentTarget.value)}
            />
          </label>
          <label class="field">
            <span class="field-label">{t('reports.language')}</span>
            <select value={lang} onChange={(e) => setLang(e.currentTarget.value)}>
              {LOCALES.map((l) => (
                <option key={l} value={l}>
                  {languageName(l)}
                </option>
              ))}
            </select>
          </label>
          <Button type="submit" variant="primary" busy={busy}>
            {t('reports.generate_button')}
          </Button>
        </form>
        <ErrorNote error={error} />
      </Card>
      <ErrorNote error={list.error} />
      {!list.data ? (
        <Loading />
      ) : !list.data.length ? (
        <Empty>{t('reports.empty')}</Empty>
      ) : (
        <div class="table-wrap card">
          <table class="table">
            <thead>
              <tr>
                <th>{t('reports.report_title')}</th>
                <th>{t('reports.language')}</th>
                <th>{t('documents.size')}</th>
                <th>{t('reports.created')}</th>
                <th>
                  <span class="sr-only">{t('common.actions')}</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {list.data.map((r) => (
                <tr key={r.id} data-testid="report-row">
                  <td>
                    <strong>{r.title}</strong>
                  </td>
                  <td>
                    <Badge>{r.locale.toUpperCase()}</Badge>
                  </td>
                  <td class="nowrap">{bytes(r.size_bytes)}</td>
                  <td class="nowrap">{dateTime(r.created_at)}</td>
                  <td class="row-actions">
                    <a
                      class="btn btn-sm"
                      href={`/api/v1/reports/${r.id}/download`}
                      download
                      data-testid="report-download"
                    >
                      <Icon name="download" size={15} />
                      {t('reports.download')}
                    </a>
                    <ConfirmButton
                      onConfirm={async () => {
                        await del(`/api/v1/reports/${r.id}`);
                        toast.ok(t('common.deleted'));
                        void list.reload();
                      }}
                    />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </Page>
  );
}
