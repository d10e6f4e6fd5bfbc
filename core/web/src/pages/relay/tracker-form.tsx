/**
 * Create or edit a tracker: its provider, which event types notify, quiet hours with a time zone
 * and a per-type policy, the plugin's tracker settings, and the targets it notifies.
 */
import { useState } from 'preact/hooks';
import { api, patch, post } from '../../lib/api.ts';
import { oneOf, useForm } from '../../lib/form.ts';
import { t, tOr } from '../../lib/i18n.ts';
import { cleanConfig, initialConfig } from '../../lib/schema.ts';
import type {
  Plugin,
  Provider,
  QuietPolicy,
  QuietRelease,
  Target,
  Tracker,
  TrackerCreateBody,
} from '../../lib/types.ts';
import { Badge, Button, ErrorNote } from '../../ui/basics.tsx';
import { InlineMd } from '../../ui/inline-md.tsx';
import { eventLabel, kindLabel, severityLabel } from '../../ui/labels.ts';
import { Modal } from '../../ui/modal.tsx';
import { shownName } from '../../ui/names.ts';
import { FixBelow, SchemaForm, useFormChecks } from '../../ui/schema-form.tsx';
import { browserZone, TimeZoneSelect } from '../../ui/timezone.tsx';

const POLICIES: readonly QuietPolicy[] = ['defer', 'send', 'drop'];
const RELEASES: readonly QuietRelease[] = ['each', 'digest'];

/** What the form edits: the create body with every setting present (the plugin's config kept apart). */
type Values = Omit<Required<TrackerCreateBody>, 'config'>;

/** A tracker's settings, or a new one's (the server's defaults). */
const valuesOf = (tracker: Tracker | undefined, providerId: string): Values => ({
  provider_id: tracker?.provider_id ?? providerId,
  name: tracker?.name ?? '',
  description: tracker?.description ?? null,
  enabled: tracker?.enabled ?? true,
  event_types: tracker?.event_types ?? {},
  quiet_hours: tracker?.quiet_hours ?? null,
  quiet_policies: tracker?.quiet_policies ?? {},
  quiet_release: tracker?.quiet_release ?? 'each',
});

interface Props {
  plugins: Plugin[];
  providers: Provider[];
  targets: Target[];
  tracker?: Tracker;
  onClose: () => void;
  onSaved: () => void;
}

export function TrackerForm({ plugins, providers, targets, tracker, onClose, onSaved }: Props) {
  const form = useForm<Values>(() =>
    valuesOf(tracker, providers.find((p) => !p.core_managed)?.id ?? providers[0]?.id ?? ''),
  );
  const { provider_id: providerId, event_types: types, quiet_hours: quiet, quiet_policies: policies } = form.values;
  const provider = providers.find((p) => p.id === providerId);
  const plugin = plugins.find((p) => p.kind === 'provider' && p.id === provider?.kind);
  const events = Object.entries(plugin?.events ?? {});
  const [config, setConfig] = useState(() => initialConfig(plugin?.tracker_schema, tracker?.config));
  const [linked, setLinked] = useState<string[]>(tracker?.target_ids ?? []);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const { checks, validate, fromServer, reset } = useFormChecks(plugin?.tracker_schema, config, tracker?.secrets_set);
  const [placed, setPlaced] = useState(false);

  const pickProvider = (id: string) => {
    form.merge({ provider_id: id, event_types: {}, quiet_policies: {} });
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
    const body: TrackerCreateBody = { ...form.values, event_types: eventTypes };
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
            <input required maxLength={200} {...form.text('name')} data-testid="tracker-name" />
          </label>
        </div>
        <label class="field">
          <span class="field-label">{t('trackers.description')}</span>
          <textarea
            maxLength={500}
            rows={2}
            {...form.optionalText('description')}
            aria-describedby="tracker-description-help"
            data-testid="tracker-description"
          />
          <small id="tracker-description-help" class="muted">
            {t('trackers.description_help')}
          </small>
        </label>
        <label class="check">
          <input type="checkbox" {...form.check('enabled')} />
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
                    onChange={(e) => form.set('event_types', { ...types, [type]: e.currentTarget.checked })}
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
                        const v = oneOf(POLICIES, e.currentTarget.value);
                        const next = { ...policies };
                        if (v) next[type] = v;
                        else delete next[type];
                        form.set('quiet_policies', next);
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
                form.set(
                  'quiet_hours',
                  e.currentTarget.checked ? { start: '22:00', end: '07:00', timezone: browserZone() } : null,
                )
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
                  onInput={(e) => form.set('quiet_hours', { ...quiet, start: e.currentTarget.value })}
                />
              </label>
              <label class="field">
                <span class="field-label">{t('trackers.quiet_end')}</span>
                <input
                  type="time"
                  required
                  value={quiet.end}
                  onInput={(e) => form.set('quiet_hours', { ...quiet, end: e.currentTarget.value })}
                />
              </label>
              <label class="field">
                <span class="field-label">{t('trackers.timezone')}</span>
                <TimeZoneSelect
                  value={quiet.timezone}
                  onChange={(z) => form.set('quiet_hours', { ...quiet, timezone: z })}
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
                    checked={form.values.quiet_release === r}
                    onChange={() => form.set('quiet_release', r)}
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
