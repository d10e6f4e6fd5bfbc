/**
 * Service-wide settings: self-registration, the defaults new users and limits start from, and the models users may
 * pick.
 */
import { useEffect, useState } from 'preact/hooks';
import { get, patch, put } from '../../lib/api.ts';
import { useForm } from '../../lib/form.ts';
import { useAsync } from '../../lib/hooks.ts';
import { t } from '../../lib/i18n.ts';
import type { AdminModels, Settings, SettingsPatchBody } from '../../lib/types.ts';
import { Button, Card, ErrorNote, Loading, Page } from '../../ui/basics.tsx';
import { toast } from '../../ui/toast.tsx';

const NUMBERS = ['default_max_chats', 'default_max_ai_messages_per_day', 'default_max_ai_tokens_per_day'] as const;

export function SettingsPage() {
  const data = useAsync(() => get<Settings>('/api/v1/admin/settings'), []);
  return (
    <Page title={t('settings.title')} subtitle={t('settings.subtitle')}>
      <ErrorNote error={data.error} />
      {!data.data ? <Loading /> : <SettingsForm initial={data.data} onSaved={data.set} />}
      <ModelsCard />
    </Page>
  );
}

/** The service-wide settings, edited as the change body they are sent as. */
function SettingsForm({ initial, onSaved }: { initial: Settings; onSaved: (s: Settings) => void }) {
  const form = useForm<Required<SettingsPatchBody>>(initial);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const body: SettingsPatchBody = form.values;
      onSaved(await patch<Settings>('/api/v1/admin/settings', body));
      toast.ok(t('common.saved'));
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="stack" onSubmit={submit}>
      <Card>
        <div class="stack">
          <label class="check">
            <input type="checkbox" {...form.check('self_registration_enabled')} />
            <span>
              <strong>{t('settings.self_registration')}</strong>
              <small class="hint">{t('settings.self_registration_help')}</small>
            </span>
          </label>
          <div class="grid-3">
            {NUMBERS.map((k) => (
              <label class="field" key={k}>
                <span class="field-label">{t(`settings.${k}`)}</span>
                <input type="number" min={0} required {...form.number(k)} />
              </label>
            ))}
          </div>
          <p class="hint">{t('settings.defaults_help')}</p>
        </div>
      </Card>
      <ErrorNote error={error} />
      <div class="form-actions">
        <Button type="submit" variant="primary" busy={busy}>
          {t('common.save')}
        </Button>
      </div>
    </form>
  );
}

/** Which models users may choose for a chat, and the default (AI_MODEL when left empty). */
function ModelsCard() {
  const data = useAsync(() => get<AdminModels>('/api/v1/admin/models'), []);
  const [allowed, setAllowed] = useState('');
  const [def, setDef] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    if (data.data) {
      setAllowed(data.data.models_allowed.join('\n'));
      setDef(data.data.default_model);
    }
  }, [data.data]);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    const models_allowed = allowed
      .split('\n')
      .map((m) => m.trim())
      .filter(Boolean);
    try {
      data.set(await put<AdminModels>('/api/v1/admin/models', { models_allowed, default_model: def.trim() }));
      toast.ok(t('common.saved'));
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  const d = data.data;
  return (
    <form class="stack" onSubmit={submit} data-testid="models-settings">
      <Card title={t('models_admin.title')}>
        <ErrorNote error={data.error} />
        {!d ? (
          <Loading />
        ) : (
          <div class="stack">
            <label class="field">
              <span class="field-label">{t('models_admin.allowed')}</span>
              <textarea
                rows={4}
                value={allowed}
                onInput={(e) => setAllowed(e.currentTarget.value)}
                data-testid="models-allowed"
              />
              <small class="hint">{t('models_admin.allowed_help')}</small>
            </label>
            <label class="field">
              <span class="field-label">{t('models_admin.default')}</span>
              <input
                value={def}
                maxLength={200}
                placeholder={d.configured_model}
                onInput={(e) => setDef(e.currentTarget.value)}
                data-testid="models-default"
              />
              <small class="hint">{t('models_admin.default_help', { model: d.configured_model })}</small>
            </label>
            <p class="hint">
              {d.endpoint_models?.length
                ? t('models_admin.endpoint', { models: d.endpoint_models.join(', ') })
                : t('models_admin.endpoint_none')}
            </p>
            <p class="hint" data-testid="models-effective">
              {t('models_admin.effective', { models: d.effective.join(', ') })}
            </p>
          </div>
        )}
      </Card>
      <ErrorNote error={error} />
      <div class="form-actions">
        <Button type="submit" variant="primary" busy={busy}>
          {t('common.save')}
        </Button>
      </div>
    </form>
  );
}
