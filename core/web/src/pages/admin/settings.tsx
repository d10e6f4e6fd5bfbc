/** Service-wide settings: self-registration and the defaults new users and limits start from. */
import { useEffect, useState } from 'preact/hooks';
import { get, patch } from '../../lib/api.ts';
import { useAsync } from '../../lib/hooks.ts';
import { t } from '../../lib/i18n.ts';
import type { Settings } from '../../lib/types.ts';
import { Button, Card, ErrorNote, Loading, Page } from '../../ui/basics.tsx';
import { toast } from '../../ui/toast.tsx';

const NUMBERS = ['default_max_chats', 'default_max_ai_messages_per_day', 'default_max_ai_tokens_per_day'] as const;

export function SettingsPage() {
  const data = useAsync(() => get<Settings>('/api/v1/admin/settings'), []);
  const [form, setForm] = useState<Settings | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => { if (data.data) setForm(data.data); }, [data.data]);
  const submit = async (e: Event) => {
    e.preventDefault();
    if (!form) return;
    setBusy(true);
    setError(null);
    try { data.set(await patch<Settings>('/api/v1/admin/settings', form)); toast.ok(t('common.saved')); } catch (err) { setError(err); } finally { setBusy(false); }
  };
  return (
    <Page title={t('settings.title')} subtitle={t('settings.subtitle')}>
      <ErrorNote error={data.error} />
      {!form ? <Loading /> : (
        <form class="stack" onSubmit={submit}>
          <Card>
            <div class="stack">
              <label class="check"><input type="checkbox" checked={form.self_registration_enabled} onChange={(e) => setForm({ ...form, self_registration_enabled: (e.target as HTMLInputElement).checked })} />
                <span><strong>{t('settings.self_registration')}</strong><small class="hint">{t('settings.self_registration_help')}</small></span></label>
              <div class="grid-3">
                {NUMBERS.map((k) => (
                  <label class="field" key={k}><span class="field-label">{t(`settings.${k}`)}</span>
                    <input type="number" min={0} required value={form[k]} onInput={(e) => setForm({ ...form, [k]: Number((e.target as HTMLInputElement).value) })} /></label>
                ))}
              </div>
              <p class="hint">{t('settings.defaults_help')}</p>
            </div>
          </Card>
          <ErrorNote error={error} />
          <div class="form-actions"><Button type="submit" variant="primary" busy={busy}>{t('common.save')}</Button></div>
        </form>
      )}
    </Page>
  );
}
