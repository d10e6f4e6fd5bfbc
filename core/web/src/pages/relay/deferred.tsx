/** The caller's deferred notifications, waiting for quiet hours to end: send one now, or drop it. */
import { useState } from 'preact/hooks';
import { get, post } from '../../lib/api.ts';
import { useAsync } from '../../lib/hooks.ts';
import { dateTime, locale, relative, t } from '../../lib/i18n.ts';
import { useLive } from '../../lib/live.ts';
import type { Deferred } from '../../lib/types.ts';
import { Button, ConfirmButton, Empty, ErrorNote, Loading, Page } from '../../ui/basics.tsx';
import { eventLabel } from '../../ui/labels.ts';
import { LiveBadge } from '../../ui/live.tsx';
import { shownName } from '../../ui/names.ts';
import { toast } from '../../ui/toast.tsx';

export function DeferredPage() {
  const lang = locale();
  const list = useAsync(
    () => get<{ deferred: Deferred[] }>('/api/deferred', { limit: 200, locale: lang }).then((r) => r.deferred),
    [lang],
  );
  // Rows come as events are deferred and go as quiet hours end, here or in another tab.
  useLive(['deferred'], () => void list.reload());
  const [busy, setBusy] = useState('');
  const sendNow = async (d: Deferred) => {
    setBusy(d.delivery_id);
    try {
      await post(`/api/deferred/${d.delivery_id}/send-now`);
      toast.ok(t('ops.sent_now'));
      await list.reload();
    } catch (err) {
      toast.error(err);
    } finally {
      setBusy('');
    }
  };
  const drop = async (d: Deferred) => {
    await post(`/api/deferred/${d.delivery_id}/drop`);
    toast.ok(t('ops.dropped'));
    await list.reload();
  };
  return (
    <Page
      title={t('deferred.title')}
      subtitle={t('deferred.subtitle')}
      actions={
        <>
          <LiveBadge />
          <Button icon="refresh" onClick={() => void list.reload()}>
            {t('common.refresh')}
          </Button>
        </>
      }
    >
      <ErrorNote error={list.error} />
      {!list.data ? (
        <Loading />
      ) : !list.data.length ? (
        <Empty>{t('deferred.empty')}</Empty>
      ) : (
        <div class="table-wrap card">
          <table class="table ops-table ops-deferred">
            <thead>
              <tr>
                <th>{t('ops.message')}</th>
                <th>{t('deferred.tracker')}</th>
                <th>{t('deferred.target')}</th>
                <th>{t('deferred.release_at')}</th>
                <th>{t('deferred.created_at')}</th>
                <th>
                  <span class="sr-only">{t('common.actions')}</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {list.data.map((d) => (
                <tr key={d.id} class="ops-row" data-testid="deferred-row">
                  <td class="ops-msg">
                    {d.message ?? eventLabel(d.event_type)}{' '}
                    <span class="muted small" title={d.event_type}>
                      {eventLabel(d.event_type)}
                    </span>
                  </td>
                  <td class="ops-tracker">{d.tracker_name ? shownName(d.tracker_name) : '—'}</td>
                  <td class="ops-target">{d.target_name ?? d.target_id}</td>
                  <td class="nowrap ops-release">
                    {dateTime(d.release_at)} <span class="muted small">{relative(d.release_at)}</span>
                  </td>
                  <td class="nowrap ops-created">{dateTime(d.created_at)}</td>
                  <td class="row-actions ops-actions">
                    <Button
                      small
                      variant="primary"
                      icon="send"
                      busy={busy === d.delivery_id}
                      disabled={Boolean(busy)}
                      onClick={() => sendNow(d)}
                    >
                      {t('ops.send_now')}
                    </Button>
                    <ConfirmButton
                      label={t('ops.drop')}
                      confirmLabel={t('ops.confirm_drop')}
                      onConfirm={() => drop(d)}
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
