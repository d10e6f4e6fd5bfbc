/** Self-monitoring: when the service should warn about its own failures (per user thresholds). */
import { useEffect, useState } from 'preact/hooks';
import { get, patch } from '../../lib/api.ts';
import { useAsync } from '../../lib/hooks.ts';
import { t } from '../../lib/i18n.ts';
import type { SelfMonitoring } from '../../lib/types.ts';
import { Badge, Button, Card, ErrorNote, Loading, Page } from '../../ui/basics.tsx';
import { toast } from '../../ui/toast.tsx';

const ITEMS = [
  { track: 'track_poll_failures', threshold: 'poll_failure_threshold', key: 'poll' },
  { track: 'track_deferred_backlog', threshold: 'deferred_backlog_threshold', key: 'backlog' },
  { track: 'track_target_failures', threshold: 'target_failure_threshold', key: 'target' },
] as const;

export function MonitoringPage() {
  const data = useAsync(() => get<SelfMonitoring>('/api/self-monitoring'), []);
  const [form, setForm] = useState<SelfMonitoring | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    if (data.data) setForm(data.data);
  }, [data.data]);
  const submit = async (e: Event) => {
    e.preventDefault();
    if (!form) return;
    setBusy(true);
    setError(null);
    const body: Record<string, unknown> = {};
    for (const i of ITEMS) {
      body[i.track] = form[i.track];
      body[i.threshold] = form[i.threshold];
    }
    try {
      data.set(await patch<SelfMonitoring>('/api/self-monitoring', body));
      toast.ok(t('common.saved'));
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <Page title={t('monitoring.title')} subtitle={t('monitoring.subtitle')}>
      <ErrorNote error={data.error} />
      {!form ? (
        <Loading />
      ) : (
        <form onSubmit={submit} class="stack">
          <Card>
            <div class="stack">
              {ITEMS.map((i) => (
                <div class="setting-row" key={i.key}>
                  <label class="check">
                    <input
                      type="checkbox"
                      checked={form[i.track]}
                      onChange={(e) => setForm({ ...form, [i.track]: e.currentTarget.checked })}
                    />
                    <span>
                      <strong>{t(`monitoring.${i.key}`)}</strong>
                      <small class="hint">{t(`monitoring.${i.key}_help`)}</small>
                    </span>
                  </label>
                  <label class="field narrow">
                    <span class="field-label">{t('monitoring.threshold')}</span>
                    <input
                      type="number"
                      min={1}
                      max={100000}
                      required
                      disabled={!form[i.track]}
                      value={form[i.threshold]}
                      onInput={(e) => setForm({ ...form, [i.threshold]: Number(e.currentTarget.value) })}
                    />
                  </label>
                </div>
              ))}
              {form.backlog_latched && (
                <p>
                  <Badge tone="warn">{t('monitoring.backlog_latched')}</Badge>
                </p>
              )}
              <p class="hint">{t('monitoring.link_hint')}</p>
            </div>
          </Card>
          <ErrorNote error={error} />
          <div class="form-actions">
            <Button type="submit" variant="primary" busy={busy}>
              {t('common.save')}
            </Button>
          </div>
        </form>
      )}
    </Page>
  );
}
