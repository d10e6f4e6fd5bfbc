/** The caller's deferred notifications, waiting for quiet hours to end. */
import { get } from '../../lib/api.ts';
import { useAsync } from '../../lib/hooks.ts';
import { dateTime, relative, t } from '../../lib/i18n.ts';
import type { Deferred } from '../../lib/types.ts';
import { Button, Empty, ErrorNote, Loading, Page } from '../../ui/basics.tsx';

export function DeferredPage() {
  const list = useAsync(() => get<{ deferred: Deferred[] }>('/api/deferred', { limit: 200 }).then((r) => r.deferred), []);
  return (
    <Page title={t('deferred.title')} subtitle={t('deferred.subtitle')} actions={<Button icon="refresh" onClick={() => void list.reload()}>{t('common.refresh')}</Button>}>
      <ErrorNote error={list.error} />
      {!list.data ? <Loading /> : !list.data.length ? <Empty>{t('deferred.empty')}</Empty> : (
        <div class="table-wrap card">
          <table class="table">
            <thead><tr><th>{t('events.type')}</th><th>{t('deferred.tracker')}</th><th>{t('deferred.target')}</th><th>{t('deferred.release_at')}</th><th>{t('deferred.created_at')}</th></tr></thead>
            <tbody>{list.data.map((d) => (
              <tr key={d.id}>
                <td><code>{d.event_type}</code></td><td>{d.tracker_name ?? '—'}</td><td>{d.target_name ?? d.target_id}</td>
                <td class="nowrap">{dateTime(d.release_at)} <span class="muted small">{relative(d.release_at)}</span></td>
                <td class="nowrap">{dateTime(d.created_at)}</td>
              </tr>
            ))}</tbody>
          </table>
        </div>
      )}
    </Page>
  );
}
