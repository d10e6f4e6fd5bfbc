/** Targets: where notifications go. Each card can send a test message and shows the outcome. */
import { useState } from 'preact/hooks';
import { del, get, post } from '../../lib/api.ts';
import { useAsync } from '../../lib/hooks.ts';
import { t } from '../../lib/i18n.ts';
import { pluginName, usePlugins } from '../../lib/plugins.ts';
import type { Bot, Target, TestOutcome } from '../../lib/types.ts';
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
import { failureText } from '../../ui/failures.ts';
import { languageName } from '../../ui/names.ts';
import { errorText, toast } from '../../ui/toast.tsx';
import { TargetForm } from './target-form.tsx';

export function TargetsPage() {
  const plugins = usePlugins();
  const data = useAsync(async () => {
    const [a, b] = await Promise.all([
      get<{ targets: Target[] }>('/api/targets', { limit: 200 }),
      get<{ bots: Bot[] }>('/api/bots', { limit: 200 }),
    ]);
    return { targets: a.targets, bots: b.bots };
  }, []);
  const [editing, setEditing] = useState<Target | 'new' | null>(null);
  const d = data.data;
  return (
    <Page
      title={t('targets.title')}
      subtitle={t('targets.subtitle')}
      actions={
        <Button variant="primary" icon="plus" disabled={!plugins.data} onClick={() => setEditing('new')}>
          {t('targets.add')}
        </Button>
      }
    >
      <ErrorNote error={data.error ?? plugins.error} />
      {!d ? (
        <Loading />
      ) : !d.targets.length ? (
        <Empty>{t('targets.empty')}</Empty>
      ) : (
        <div class="cards">
          {d.targets.map((tg) => (
            <TargetCard
              key={tg.id}
              target={tg}
              kindName={pluginName(plugins.data, tg.kind, 'target')}
              onEdit={() => setEditing(tg)}
              onDeleted={() => void data.reload()}
            />
          ))}
        </div>
      )}
      {editing && d && plugins.data && (
        <TargetForm
          plugins={plugins.data}
          bots={d.bots}
          target={editing === 'new' ? undefined : editing}
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

function TargetCard({
  target: tg,
  kindName,
  onEdit,
  onDeleted,
}: {
  target: Target;
  kindName: string;
  onEdit: () => void;
  onDeleted: () => void;
}) {
  const [testing, setTesting] = useState(false);
  const [result, setResult] = useState<TestOutcome | null>(null);
  const test = async () => {
    setTesting(true);
    setResult(null);
    try {
      setResult(await post<TestOutcome>(`/api/targets/${tg.id}/test`, {}));
    } catch (err) {
      setResult({ ok: false, detail: errorText(err) });
    } finally {
      setTesting(false);
    }
  };
  return (
    <Card
      class="item-card"
      title={tg.name}
      actions={<StatusBadge status={!tg.enabled ? 'disabled' : tg.consecutive_failures > 0 ? 'degraded' : 'active'} />}
    >
      <div class="meta">
        <span>{kindName}</span>
        <Badge>{languageName(tg.locale)}</Badge>
        {!tg.plugin_enabled && <Badge tone="danger">{t('providers.plugin_missing')}</Badge>}
      </div>
      {tg.last_error && (
        <p class="small hint-danger" title={tg.last_error}>
          {t('targets.last_error', { error: failureText(tg.last_error) })}
        </p>
      )}
      {result && (
        <Note tone={result.ok ? 'ok' : 'danger'}>
          <strong>{result.ok ? t('targets.test_ok') : t('targets.test_failed')}</strong>
          {result.status_code !== undefined && (
            <>
              {' '}
              <Badge tone={result.ok ? 'ok' : 'danger'}>{result.status_code}</Badge>
            </>
          )}
          {!result.ok && result.detail && (
            <span class="test-detail" data-testid="test-detail">
              {result.detail}
            </span>
          )}
        </Note>
      )}
      <div class="card-foot">
        <Button small icon="send" busy={testing} onClick={test}>
          {t('targets.send_test')}
        </Button>
        <Button small icon="edit" onClick={onEdit}>
          {t('common.edit')}
        </Button>
        <ConfirmButton
          onConfirm={async () => {
            await del(`/api/targets/${tg.id}`);
            toast.ok(t('common.deleted'));
            onDeleted();
          }}
        />
      </div>
    </Card>
  );
}
