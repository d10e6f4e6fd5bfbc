/** Trackers: which events of a provider notify which targets, and when to keep quiet. */
import { useState } from 'preact/hooks';
import { del, get } from '../../lib/api.ts';
import { useAsync } from '../../lib/hooks.ts';
import { t } from '../../lib/i18n.ts';
import { usePlugins } from '../../lib/plugins.ts';
import type { Provider, Target, Tracker } from '../../lib/types.ts';
import { Badge, Button, ConfirmButton, Empty, ErrorNote, Loading, Page, StatusBadge } from '../../ui/basics.tsx';
import { problemText } from '../../ui/failures.ts';
import { kindLabel } from '../../ui/labels.ts';
import { shownName } from '../../ui/names.ts';
import { zoneName } from '../../ui/timezone.tsx';
import { toast } from '../../ui/toast.tsx';
import { TestEventButton } from './test-event.tsx';
import { TrackerForm } from './tracker-form.tsx';

interface Data {
  trackers: Tracker[];
  providers: Provider[];
  targets: Target[];
}

export function TrackersPage() {
  const plugins = usePlugins();
  const data = useAsync<Data>(async () => {
    const [a, b, c] = await Promise.all([
      get<{ trackers: Tracker[] }>('/api/trackers', { limit: 200 }),
      get<{ providers: Provider[] }>('/api/providers', { limit: 200 }),
      get<{ targets: Target[] }>('/api/targets', { limit: 200 }),
    ]);
    return { trackers: a.trackers, providers: b.providers, targets: c.targets };
  }, []);
  const [editing, setEditing] = useState<Tracker | 'new' | null>(null);
  const d = data.data;
  return (
    <Page
      title={t('trackers.title')}
      subtitle={t('trackers.subtitle')}
      actions={
        <Button
          variant="primary"
          icon="plus"
          disabled={!d || !plugins.data || !d.providers.length}
          onClick={() => setEditing('new')}
        >
          {t('trackers.add')}
        </Button>
      }
    >
      <ErrorNote error={data.error ?? plugins.error} />
      {!d ? (
        <Loading />
      ) : !d.trackers.length ? (
        <Empty>{t('trackers.empty')}</Empty>
      ) : (
        <div class="table-wrap card">
          <table class="table">
            <thead>
              <tr>
                <th>{t('common.name')}</th>
                <th>{t('trackers.provider')}</th>
                <th>{t('trackers.event_types')}</th>
                <th>{t('trackers.quiet_hours')}</th>
                <th>{t('trackers.targets')}</th>
                <th>{t('common.status')}</th>
                <th>
                  <span class="sr-only">{t('common.actions')}</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {d.trackers.map((tr) => {
                const provider = d.providers.find((p) => p.id === tr.provider_id);
                const declared = Object.keys(
                  plugins.data?.find((p) => p.kind === 'provider' && p.id === tr.provider_kind)?.events ?? {},
                );
                const on = declared.filter((x) => tr.event_types[x] !== false).length;
                const names = tr.target_ids.map((id) => d.targets.find((x) => x.id === id)?.name).filter(Boolean);
                return (
                  <tr key={tr.id}>
                    <td>
                      <strong>{shownName(tr.name)}</strong>
                      {tr.description ? <div class="muted small">{tr.description}</div> : null}
                    </td>
                    <td>
                      {provider ? shownName(provider.name) : kindLabel(tr.provider_kind, plugins.data, 'provider')}
                    </td>
                    <td>{t('trackers.types_on', { on, total: declared.length })}</td>
                    <td class="nowrap">
                      {tr.quiet_hours ? (
                        <span title={tr.quiet_hours.timezone}>
                          {`${tr.quiet_hours.start}–${tr.quiet_hours.end} · ${zoneName(tr.quiet_hours.timezone)}`}
                        </span>
                      ) : (
                        <span class="muted">{t('common.off')}</span>
                      )}
                    </td>
                    <td>{names.length ? names.join(', ') : <Badge tone="warn">{t('trackers.no_links')}</Badge>}</td>
                    <td>
                      <StatusBadge
                        status={tr.enabled ? (tr.consecutive_poll_failures > 0 ? 'degraded' : 'active') : 'disabled'}
                      />
                      {tr.last_poll_error && (
                        <small class="hint hint-danger" title={tr.last_poll_error}>
                          {problemText(tr.last_poll_error)}
                        </small>
                      )}
                    </td>
                    <td class="row-actions">
                      <TestEventButton path={`/api/trackers/${tr.id}/test-event`} />
                      <Button small icon="edit" onClick={() => setEditing(tr)}>
                        {t('common.edit')}
                      </Button>
                      <ConfirmButton
                        onConfirm={async () => {
                          await del(`/api/trackers/${tr.id}`);
                          toast.ok(t('common.deleted'));
                          void data.reload();
                        }}
                      />
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
      {editing && d && plugins.data && (
        <TrackerForm
          plugins={plugins.data}
          providers={d.providers}
          targets={d.targets}
          tracker={editing === 'new' ? undefined : editing}
          onClose={() => setEditing(null)}
          onSaved={() => {
            setEditing(null);
            toast.ok(t('common.saved'));
            void data.reload();
          }}
        />
      )}
    </Page>
  );
}
