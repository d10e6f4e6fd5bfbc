/** Providers: where events come from. Cards with status, what to paste into the sending app, recent webhook calls. */
import { useEffect, useRef, useState } from 'preact/hooks';
import { del, get } from '../../lib/api.ts';
import { useAsync } from '../../lib/hooks.ts';
import { dateTime, t } from '../../lib/i18n.ts';
import { useLive } from '../../lib/live.ts';
import { pluginName, usePlugins } from '../../lib/plugins.ts';
import { useSession } from '../../lib/session.ts';
import type { Provider, WebhookLogEntry } from '../../lib/types.ts';
import {
  Badge,
  Button,
  Card,
  ConfirmButton,
  Empty,
  ErrorNote,
  Loading,
  Note,
  Page,
  StatusBadge,
} from '../../ui/basics.tsx';
import { problemText, rejectionText } from '../../ui/failures.ts';
import { shownName } from '../../ui/names.ts';
import { toast } from '../../ui/toast.tsx';
import { ConnectionPanel } from './connection.tsx';
import { ProviderForm } from './provider-form.tsx';
import { TestEventButton } from './test-event.tsx';

export function ProvidersPage() {
  const plugins = usePlugins();
  // Again when the account's language changes: the service labels what to paste in it.
  const lang = useSession().user?.locale;
  const list = useAsync(
    () => get<{ providers: Provider[] }>('/api/providers', { limit: 200 }).then((r) => r.providers),
    [lang],
  );
  const [editing, setEditing] = useState<Provider | 'new' | null>(null);
  // The provider just created: its card says what to paste into the sending app, at once.
  const [created, setCreated] = useState<string | null>(null);
  const saved = (p: Provider) => {
    if (editing === 'new') setCreated(p.id);
    setEditing(null);
    toast.ok(t('common.saved'));
    void list.reload();
  };
  return (
    <Page
      title={t('providers.title')}
      subtitle={t('providers.subtitle')}
      actions={
        <Button variant="primary" icon="plus" onClick={() => setEditing('new')} disabled={!plugins.data}>
          {t('providers.add')}
        </Button>
      }
    >
      <ErrorNote error={list.error ?? plugins.error} />
      {!list.data ? (
        <Loading />
      ) : !list.data.length ? (
        <Empty>{t('providers.empty')}</Empty>
      ) : (
        <div class="cards">
          {list.data.map((p) => (
            <ProviderCard
              key={p.id}
              provider={p}
              fresh={p.id === created}
              kindName={pluginName(plugins.data, p.kind, 'provider')}
              onEdit={() => setEditing(p)}
              onDeleted={() => void list.reload()}
            />
          ))}
        </div>
      )}
      {editing && plugins.data && (
        <ProviderForm
          plugins={plugins.data}
          provider={editing === 'new' ? undefined : editing}
          onClose={() => setEditing(null)}
          onSaved={saved}
        />
      )}
    </Page>
  );
}

function ProviderCard({
  provider: p,
  fresh,
  kindName,
  onEdit,
  onDeleted,
}: {
  provider: Provider;
  fresh: boolean;
  kindName: string;
  onEdit: () => void;
  onDeleted: () => void;
}) {
  const [showLog, setShowLog] = useState(false);
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (fresh) ref.current?.scrollIntoView({ block: 'nearest' });
  }, [fresh]);
  return (
    <Card
      class="item-card"
      title={shownName(p.name)}
      actions={<StatusBadge status={p.enabled ? p.status : 'disabled'} />}
    >
      <div class="meta">
        <span>{kindName}</span>
        {p.core_managed && <Badge tone="info">{t('providers.managed')}</Badge>}
        {p.auth_mode && (
          <Badge tone={p.auth_mode === 'none' ? 'warn' : 'neutral'}>{t(`providers.auth_${p.auth_mode}`)}</Badge>
        )}
        {!p.plugin_enabled && <Badge tone="danger">{t('providers.plugin_missing')}</Badge>}
      </div>
      {p.status_detail && (
        <p class="muted small" title={p.status_detail}>
          {problemText(p.status_detail)}
        </p>
      )}
      {fresh && p.webhook_url && (
        <div ref={ref}>
          <Note tone="ok">{t('connection.created_lead')}</Note>
        </div>
      )}
      <ConnectionPanel provider={p} open={fresh} />
      <div class="card-foot">
        {p.plugin_enabled && <TestEventButton path={`/api/providers/${p.id}/test-event`} />}
        {!p.core_managed && (
          <Button small icon="edit" onClick={onEdit}>
            {t('common.edit')}
          </Button>
        )}
        {p.webhook_url && (
          <Button small variant="ghost" aria-expanded={showLog} onClick={() => setShowLog(!showLog)}>
            {t('providers.webhook_log')}
          </Button>
        )}
        {!p.core_managed && (
          <ConfirmButton
            onConfirm={async () => {
              await del(`/api/providers/${p.id}`);
              toast.ok(t('common.deleted'));
              onDeleted();
            }}
          />
        )}
      </div>
      {showLog && <WebhookLog id={p.id} />}
    </Card>
  );
}

function WebhookLog({ id }: { id: string }) {
  const log = useAsync(
    () => get<{ entries: WebhookLogEntry[] }>(`/api/providers/${id}/webhook-log`, { limit: 20 }).then((r) => r.entries),
    [id],
  );
  // New requests appear as they come in.
  useLive(
    ['webhook_log'],
    () => void log.reload(),
    (h) => h.provider_id === id,
  );
  if (log.error) return <ErrorNote error={log.error} />;
  if (!log.data) return <Loading />;
  if (!log.data.length) return <p class="muted small">{t('providers.webhook_log_empty')}</p>;
  return (
    <div class="table-wrap">
      <table class="table compact">
        <thead>
          <tr>
            <th>{t('common.time')}</th>
            <th>{t('providers.status_code')}</th>
            <th>{t('common.details')}</th>
          </tr>
        </thead>
        <tbody>
          {log.data.map((e) => (
            <tr key={e.id}>
              <td class="nowrap">{dateTime(e.received_at)}</td>
              <td>
                <Badge tone={e.status_code < 300 ? 'ok' : e.status_code < 500 ? 'warn' : 'danger'}>
                  {e.status_code}
                </Badge>
              </td>
              <td class="wrap" title={e.error_message ?? undefined}>
                {e.error_message ? rejectionText(e.error_message, e.status_code) : ''}
                {e.payload_excerpt && <code class="excerpt">{e.payload_excerpt}</code>}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
