/**
 * Create or edit a tracker: its provider, which event types notify, quiet hours with a time zone
 * and a per-type policy, the plugin's tracker settings, and the targets it notifies.
 */
import { useState } from 'preact/hooks';
import { api, patch, post } from '../../lib/api.ts';
import { t, tOr } from '../../lib/i18n.ts';
import { cleanConfig, initialConfig } from '../../lib/schema.ts';
import type { Plugin, Provider, QuietHours, Target, Tracker } from '../../lib/types.ts';
import { Badge, Button, ErrorNote } from '../../ui/basics.tsx';
import { InlineMd } from '../../ui/inline-md.tsx';
import { eventLabel, kindLabel, severityLabel } from '../../ui/labels.ts';
import { Modal } from '../../ui/modal.tsx';
import { shownName } from '../../ui/names.ts';
import { FixBelow, SchemaForm, useFormChecks } from '../../ui/schema-form.tsx';
import { browserZone, TimeZoneSelect } from '../../ui/timezone.tsx';

const POLICIES = ['defer', 'send', 'drop'] as const;
const RELEASES = ['each', 'digest'] as const;

interface Props {
  plugins: Plugin[];
  providers: Provider[];
  targets: Target[];
  tracker?: Tracker;
  onClose: () => void;
  onSaved: () => void;
}

export function TrackerForm({ plugins, providers, targets, tracker, onClose, onSaved }: Props) {
  const [providerId, setProviderId] = useState(
    tracker?.provider_id ?? providers.find((p) => !p.core_managed)?.id ?? providers[0]?.id ?? '',
  );
  const provider = providers.find((p) => p.id === providerId);
  const plugin = plugins.find((p) => p.kind === 'provider' && p.id === provider?.kind);
  const events = Object.entries(plugin?.events ?? {});
  const [name, setName] = useState(tracker?.name ?? '');
  const [description, setDescription] = useState(tracker?.description ?? '');
  const [enabled, setEnabled] = useState(tracker?.enabled ?? true);
  const [types, setTypes] = useState<Record<string, boolean>>(tracker?.event_types ?? {});
  const [quiet, setQuiet] = useState<QuietHours | null>(tracker?.quiet_hours ?? null);
  const [policies, setPolicies] = useState<Record<string, string>>(tracker?.quiet_policies ?? {});
  const [release, setRelease] = useState<'each' | 'digest'>(tracker?.quiet_release ?? 'each');
  const [config, setConfig] = useState(() => initialConfig(plugin?.tracker_schema, tracker?.config));
  const [linked, setLinked] = useState<string[]>(tracker?.target_ids ?? []);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const { checks, validate, fromServer, reset } = useFormChecks(plugin?.tracker_schema, config, tracker?.secrets_set);
  const [placed, setPlaced] = useState(false);

  const pickProvider = (id: string) => {
    setProviderId(id);
    setTypes({});
    setPolicies({});
    setConfig(
      initialConfig(
        plugins.find((p) => p.kind === 'provider' && p.id === providers.find((x) => x.id === id)?.kind)?.tracker_schema,
      ),
    );
    reset();
    setPlaced(false);
  };

  const submit = async (e: Event) => {
    e.preventDefault();
    if (!validate()) return;
    setBusy(true);
    setError(null);
    setPlaced(false);
    const eventTypes: Record<string, boolean> = {};
    for (const [type] of events) eventTypes[type] = types[type] !== false;
    const body: Record<string, unknown> = {
      provider_id: providerId,
      name,
      description: description.trim() || null,
      enabled,
      event_types: eventTypes,
      quiet_hours: quiet,
      quiet_policies: policies,
      quiet_release: release,
    };
    if (plugin?.tracker_schema?.properties)
      body.config = cleanConfig(plugin.tracker_schema, config, tracker?.secrets_set);
    try {
      const saved = tracker
        ? await patch<Tracker>(`/api/trackers/${tracker.id}`, body)
        : await post<Tracker>('/api/trackers', body);
      const before = new Set(saved.target_ids);
      for (const id of linked) if (!before.has(id)) await api('PUT', `/api/trackers/${saved.id}/targets/${id}`);
      for (const id of before) if (!linked.includes(id)) await api('DELETE', `/api/trackers/${saved.id}/targets/${id}`);
      onSaved();
    } catch (err) {
      if (fromServer(err)) setPlaced(true);
      else setError(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <Modal title={tracker ? t('trackers.edit') : t('trackers.add')} onClose={onClose} wide>
      <form class="stack" onSubmit={submit}>
        <div class="grid-2">
          <label class="field">
            <span class="field-label">{t('trackers.provider')}</span>
            <select
              required
              value={providerId}
              disabled={Boolean(tracker)}
              onChange={(e) => pickProvider(e.currentTarget.value)}
              data-testid="tracker-provider"
            >
              {providers.map((p) => (
                <option key={p.id} value={p.id}>
                  {shownName(p.name)}
                </option>
              ))}
            </select>
          </label>
          <label class="field">
            <span class="field-label">{t('common.name')}</span>
            <input
              required
              maxLength={200}
              value={name}
              onInput={(e) => setName(e.currentTarget.value)}
              data-testid="tracker-name"
            />
          </label>
        </div>
        <label class="field">
          <span class="field-label">{t('trackers.description')}</span>
          <textarea
            maxLength={500}
            rows={2}
            value={description}
            onInput={(e) => setDescription(e.currentTarget.value)}
            aria-describedby="tracker-description-help"
            data-testid="tracker-description"
          />
          <small id="tracker-description-help" class="muted">
            {t('trackers.description_help')}
          </small>
        </label>
        <label class="check">
          <input type="checkbox" checked={enabled} onChange={(e) => setEnabled(e.currentTarget.checked)} />
          <span>{t('common.enabled')}</span>
        </label>

        <fieldset class="subform">
          <legend>{t('trackers.event_types')}</legend>
          {!events.length && <p class="muted small">{t('trackers.no_event_types')}</p>}
          <div class="event-types">
            {events.map(([type, spec]) => (
              <div class="event-type" key={type}>
                <label class="check">
                  <input
                    type="checkbox"
                    checked={types[type] !== false}
                    onChange={(e) => setTypes({ ...types, [type]: e.currentTarget.checked })}
                    data-testid={`event-${type}`}
                  />
                  <span>
                    <span class="type-line">
                      <strong title={type}>{eventLabel(type, plugins)}</strong>
                      <Badge
                        tone={
                          spec.severity === 'critical' ? 'danger' : spec.severity === 'warning' ? 'warn' : 'neutral'
                        }
                      >
                        {severityLabel(spec.severity)}
                      </Badge>
                    </span>
                    {spec.description && (
                      <small class="hint">
                        <InlineMd text={spec.description} />
                      </small>
                    )}
                  </span>
                </label>
                {quiet && (
                  <label class="inline-field">
                    <span class="sr-only">{t('trackers.quiet_policy_for', { type: eventLabel(type, plugins) })}</span>
                    <select
                      value={policies[type] ?? ''}
                      onChange={(e) => {
                        const v = e.currentTarget.value;
                        const next = { ...policies };
                        if (v) next[type] = v;
                        else delete next[type];
                        setPolicies(next);
                      }}
                    >
                      <option value="">
                        {t('trackers.policy_default', {
                          policy: tOr(`trackers.policy_${spec.quiet_hours}`, spec.quiet_hours),
                        })}
                      </option>
                      {POLICIES.map((p) => (
                        <option key={p} value={p}>
                          {t(`trackers.policy_${p}`)}
                        </option>
                      ))}
                    </select>
                  </label>
                )}
              </div>
            ))}
          </div>
        </fieldset>

        <fieldset class="subform">
          <legend>{t('trackers.quiet_hours')}</legend>
          <label class="check">
            <input
              type="checkbox"
              checked={Boolean(quiet)}
              data-testid="quiet-toggle"
              onChange={(e) =>
                setQuiet(e.currentTarget.checked ? { start: '22:00', end: '07:00', timezone: browserZone() } : null)
              }
            />
            <span>
              {t('trackers.quiet_enable')}
              <small class="hint">{t('trackers.quiet_help')}</small>
            </span>
          </label>
          {quiet && (
            <div class="grid-3">
              <label class="field">
                <span class="field-label">{t('trackers.quiet_start')}</span>
                <input
                  type="time"
                  required
                  value={quiet.start}
                  onInput={(e) => setQuiet({ ...quiet, start: e.currentTarget.value })}
                />
              </label>
              <label class="field">
                <span class="field-label">{t('trackers.quiet_end')}</span>
                <input
                  type="time"
                  required
                  value={quiet.end}
                  onInput={(e) => setQuiet({ ...quiet, end: e.currentTarget.value })}
                />
              </label>
              <label class="field">
                <span class="field-label">{t('trackers.timezone')}</span>
                <TimeZoneSelect
                  value={quiet.timezone}
                  onChange={(z) => setQuiet({ ...quiet, timezone: z })}
                  testId="quiet-timezone"
                />
              </label>
            </div>
          )}
          {quiet && (
            <div role="radiogroup" aria-label={t('digest.release_label')} class="stack" data-testid="quiet-release">
              {RELEASES.map((r) => (
                <label class="radio" key={r}>
                  <input
                    type="radio"
                    name="quiet_release"
                    value={r}
                    checked={release === r}
                    onChange={() => setRelease(r)}
                    data-testid={`quiet-release-${r}`}
                  />
                  <span>
                    {t(`digest.release_${r}`)}
                    <small class="hint">{t(`digest.release_${r}_help`)}</small>
                  </span>
                </label>
              ))}
            </div>
          )}
        </fieldset>

        {plugin?.tracker_schema?.properties && Object.keys(plugin.tracker_schema.properties).length > 0 && (
          <fieldset class="subform">
            <legend>{t('trackers.settings')}</legend>
            <SchemaForm
              key={plugin.id}
              schema={plugin.tracker_schema}
              value={config}
              onChange={setConfig}
              secretsSet={tracker?.secrets_set}
              checks={checks}
            />
          </fieldset>
        )}

        <fieldset class="subform">
          <legend>{t('trackers.targets')}</legend>
          {!targets.length && <p class="muted small">{t('trackers.no_targets')}</p>}
          {targets.map((tg) => (
            <label class="check" key={tg.id}>
              <input
                type="checkbox"
                checked={linked.includes(tg.id)}
                data-testid={`link-${tg.name}`}
                onChange={(e) =>
                  setLinked(e.currentTarget.checked ? [...linked, tg.id] : linked.filter((x) => x !== tg.id))
                }
              />
              <span>
                {tg.name} <small class="muted">{kindLabel(tg.kind, plugins, 'target')}</small>
              </span>
            </label>
          ))}
        </fieldset>
        {placed && <FixBelow />}
        <ErrorNote error={error} />
        <div class="form-actions">
          <Button onClick={onClose}>{t('common.cancel')}</Button>
          <Button type="submit" variant="primary" busy={busy}>
            {t('common.save')}
          </Button>
        </div>
      </form>
    </Modal>
  );
}
