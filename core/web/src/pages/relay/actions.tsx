/**
 * Scheduled actions: a digest of a tracker's events, a fixed message, or the assistant's summary of
 * the user's events (an AI digest), sent on a cron schedule.
 * The list shows each schedule in words with its next and last run; the form checks the schedule
 * as it is typed (sub-minute schedules are refused) and shows the next five runs.
 */
import { useEffect, useState } from 'preact/hooks';
import { ApiError, api, del, get, patch, post } from '../../lib/api.ts';
import { useForm } from '../../lib/form.ts';
import { useAsync } from '../../lib/hooks.ts';
import { dateTime, locale, relative, t } from '../../lib/i18n.ts';
import type { Action, ActionConfig, ActionCreateBody, ActionKind, Provider, Target, Tracker } from '../../lib/types.ts';
import { Badge, Button, ConfirmButton, Empty, ErrorNote, Loading, Page, StatusBadge } from '../../ui/basics.tsx';
import { Field } from '../../ui/field.tsx';
import { Modal } from '../../ui/modal.tsx';
import { shownName } from '../../ui/names.ts';
import { browserZone, TimeZoneSelect, zoneName } from '../../ui/timezone.tsx';
import { errorText, problemVars, toast } from '../../ui/toast.tsx';

const KINDS: readonly ActionKind[] = ['digest', 'message', 'ai_digest'];
interface Data {
  actions: Action[];
  trackers: Tracker[];
  targets: Target[];
  providers: Provider[];
}

export function ActionsPage() {
  const data = useAsync<Data>(async () => {
    const [a, b, c, p] = await Promise.all([
      get<{ actions: Action[] }>('/api/actions', { limit: 200 }),
      get<{ trackers: Tracker[] }>('/api/trackers', { limit: 200 }),
      get<{ targets: Target[] }>('/api/targets', { limit: 200 }),
      get<{ providers: Provider[] }>('/api/providers', { limit: 200 }),
    ]);
    return { actions: a.actions, trackers: b.trackers, targets: c.targets, providers: p.providers };
  }, []);
  const [editing, setEditing] = useState<Action | 'new' | null>(null);
  const d = data.data;
  return (
    <Page
      title={t('actions.title')}
      subtitle={t('actions.subtitle')}
      actions={
        <Button variant="primary" icon="plus" disabled={!d} onClick={() => setEditing('new')}>
          {t('actions.add')}
        </Button>
      }
    >
      <ErrorNote error={data.error} />
      {!d ? (
        <Loading />
      ) : !d.actions.length ? (
        <Empty>{t('actions.empty')}</Empty>
      ) : (
        <div class="table-wrap card">
          <table class="table stack-table" data-testid="actions-table">
            <thead>
              <tr>
                <th>{t('common.name')}</th>
                <th>{t('actions.schedule')}</th>
                <th>{t('actions.next_run')}</th>
                <th>{t('actions.last_run')}</th>
                <th>{t('common.enabled')}</th>
                <th>
                  <span class="sr-only">{t('common.actions')}</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {d.actions.map((a) => (
                <ActionRow
                  key={a.id}
                  action={a}
                  data={d}
                  onEdit={() => setEditing(a)}
                  onChanged={() => void data.reload()}
                />
              ))}
            </tbody>
          </table>
        </div>
      )}
      {editing && d && (
        <ActionForm
          action={editing === 'new' ? undefined : editing}
          trackers={d.trackers}
          targets={d.targets}
          providers={d.providers}
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

function ActionRow({
  action: a,
  data,
  onEdit,
  onChanged,
}: {
  action: Action;
  data: Data;
  onEdit: () => void;
  onChanged: () => void;
}) {
  const [running, setRunning] = useState(false);
  const [toggling, setToggling] = useState(false);
  // Shown switched at once; put back when the change is refused.
  const [on, setOn] = useState(a.enabled);
  useEffect(() => setOn(a.enabled), [a.enabled]);
  const targetCount = ((a.config.target_ids as string[] | undefined) ?? []).length;
  const what =
    a.kind === 'digest'
      ? t('actions.digest_of', { tracker: data.trackers.find((x) => x.id === a.config.tracker_id)?.name ?? '—' })
      : a.kind === 'ai_digest'
        ? t('actions.ai_digest_to', { count: targetCount })
        : t('actions.message_to', { count: targetCount });
  const run = async () => {
    setRunning(true);
    try {
      const r = await post<Action>(`/api/actions/${a.id}/run`);
      if (r.last_status === 'ok') toast.ok(t('actions.ran_ok'));
      else toast.error(new ApiError(422, 'action_failed', r.last_error ?? '', [], null, { error: r.last_error ?? '' }));
      onChanged();
    } catch (err) {
      toast.error(err);
    } finally {
      setRunning(false);
    }
  };
  const toggle = async (want: boolean) => {
    setOn(want);
    setToggling(true);
    try {
      await patch(`/api/actions/${a.id}`, { enabled: want });
      toast.ok(want ? t('actions.enabled_now') : t('actions.disabled_now'));
      onChanged();
    } catch (err) {
      setOn(!want);
      toast.error(err);
    } finally {
      setToggling(false);
    }
  };
  return (
    <tr data-testid="action-row">
      <td data-label={t('common.name')}>
        <strong>{a.name}</strong> <Badge>{t(`actions.kind_${a.kind}`)}</Badge>
        <small class="hint">{what}</small>
      </td>
      <td data-label={t('actions.schedule')}>
        {describeSchedule(a.schedule)}
        <small class="hint">
          <code>{a.schedule}</code> · <span title={a.timezone}>{zoneName(a.timezone)}</span>
        </small>
      </td>
      <td data-label={t('actions.next_run')} class="nowrap">
        {a.next_run_at ? (
          <>
            {dateTime(a.next_run_at)}
            <small class="hint">{relative(a.next_run_at)}</small>
          </>
        ) : (
          <span class="muted">—</span>
        )}
      </td>
      <td data-label={t('actions.last_run')}>
        {a.last_run_at ? (
          <>
            <span class="nowrap">{dateTime(a.last_run_at)}</span> <StatusBadge status={a.last_status ?? 'ok'} />
          </>
        ) : (
          <span class="muted">{t('actions.never_ran')}</span>
        )}
        {a.last_error && (
          <small class="hint hint-danger" data-testid="action-error">
            {a.last_error}
          </small>
        )}
      </td>
      <td data-label={t('common.enabled')}>
        <label class="check">
          <input
            type="checkbox"
            checked={on}
            disabled={toggling}
            onChange={(e) => void toggle(e.currentTarget.checked)}
            data-testid="action-enabled"
          />
          <span class="sr-only">{t('common.enabled')}</span>
        </label>
      </td>
      <td class="row-actions">
        <Button small icon="send" busy={running} onClick={run} data-testid="action-run">
          {t('actions.run_now')}
        </Button>
        <Button small icon="edit" onClick={onEdit}>
          {t('common.edit')}
        </Button>
        <ConfirmButton
          onConfirm={async () => {
            await del(`/api/actions/${a.id}`);
            toast.ok(t('common.deleted'));
            onChanged();
          }}
        />
      </td>
    </tr>
  );
}

/** A time in the action's own zone (the schedule's times are wall-clock times there). */
function inZone(iso: string, timeZone: string): string {
  try {
    return new Intl.DateTimeFormat(locale() === 'ru' ? 'ru-RU' : 'en-GB', {
      dateStyle: 'medium',
      timeStyle: 'short',
      timeZone,
    }).format(new Date(iso));
  } catch {
    return dateTime(iso);
  }
}

const WEEKDAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] as const;
const NICKNAMES: Record<string, string> = {
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
  '@monthly': '0 0 1 * *',
  '@weekly': '0 0 * * 0',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@hourly': '0 * * * *',
};
const pad = (s: string) => s.padStart(2, '0');
const isNum = (s: string) => /^\d{1,2}$/.test(s);

/** A schedule in words for the common shapes; anything else is called a custom schedule. */
export function describeSchedule(expr: string): string {
  const raw = expr.trim();
  let f = (NICKNAMES[raw.toLowerCase()] ?? raw).split(/\s+/);
  if (f.length === 6) {
    if (f[0] !== '0') return t('actions.words.custom');
    f = f.slice(1);
  }
  if (f.length !== 5) return t('actions.words.custom');
  const [min, hour, dom, mon, dow] = f as [string, string, string, string, string];
  const everyDay = dom === '*' && mon === '*';
  if (min === '*' && hour === '*' && everyDay && dow === '*') return t('actions.words.every_minute');
  const step = /^\*\/(\d+)$/.exec(min);
  if (step && hour === '*' && everyDay && dow === '*')
    return t('actions.words.every_n_minutes', { count: Number(step[1]) });
  if (isNum(min) && hour === '*' && everyDay && dow === '*') return t('actions.words.hourly', { minute: pad(min) });
  if (!isNum(min) || !isNum(hour)) return t('actions.words.custom');
  const at = `${pad(hour)}:${pad(min)}`;
  if (everyDay && dow === '*') return t('actions.words.daily', { time: at });
  if (everyDay && (dow === '1-5' || dow === 'MON-FRI' || dow === 'mon-fri'))
    return t('actions.words.weekdays', { time: at });
  if (everyDay && /^[0-7](,[0-7])*$/.test(dow)) {
    const days = dow
      .split(',')
      .map((n) => t(`actions.days.${WEEKDAYS[Number(n) % 7]}`))
      .join(', ');
    return t('actions.words.weekly', { days, time: at });
  }
  if (isNum(dom) && mon === '*' && dow === '*') return t('actions.words.monthly', { day: Number(dom), time: at });
  return t('actions.words.custom');
}

/**
 * What the client can tell before asking the service: the field count and a seconds field that fires more than once a
 * minute.
 */
function quickCheck(expr: string): { code: string; params: Record<string, string | number> } | null {
  const s = expr.trim();
  if (!s) return { code: 'schedule_field_count', params: { schedule: s, count: 0 } };
  if (s.startsWith('@')) return null;
  const f = s.split(/\s+/);
  if (f.length !== 5 && f.length !== 6)
    return { code: 'schedule_field_count', params: { schedule: s, count: f.length } };
  if (f.length === 6 && !isNum(f[0]!)) return { code: 'schedule_sub_minute', params: { schedule: s } };
  return null;
}

type Preview = { next: string[] } | { error: unknown } | null;

/** Asks the service for the next five runs while the user types (the same check the save does). */
function useSchedulePreview(schedule: string, timezone: string): Preview {
  const [preview, setPreview] = useState<Preview>(null);
  useEffect(() => {
    const quick = quickCheck(schedule);
    if (quick) {
      setPreview({ error: new ApiError(422, quick.code, '', [], null, quick.params) });
      return;
    }
    const ac = new AbortController();
    const timer = setTimeout(() => {
      api<{ next: string[] }>('GET', '/api/actions/schedule-preview', {
        query: { schedule, timezone },
        signal: ac.signal,
      })
        .then((r) => setPreview({ next: r.next }))
        .catch((err) => {
          if ((err as Error).name !== 'AbortError') setPreview({ error: err });
        });
    }, 250);
    return () => {
      clearTimeout(timer);
      ac.abort();
    };
  }, [schedule, timezone]);
  return preview;
}

interface FormProps {
  action?: Action;
  trackers: Tracker[];
  targets: Target[];
  providers: Provider[];
  onClose: () => void;
  onSaved: () => void;
}

/** A list of ids from an action's stored config (anything else: none). */
const ids = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);

/** What the form edits: the create body with every field present, the config of each kind spread out. */
interface Values extends Required<Omit<ActionCreateBody, 'config'>> {
  tracker_id: string;
  title: string;
  body: string;
  target_ids: string[];
  provider_ids: string[];
}

function ActionForm({ action, trackers, targets, providers, onClose, onSaved }: FormProps) {
  const form = useForm<Values>(() => ({
    name: action?.name ?? '',
    kind: action?.kind ?? 'message',
    schedule: action?.schedule ?? '0 9 * * *',
    timezone: action?.timezone ?? browserZone(),
    enabled: action?.enabled ?? true,
    tracker_id: String(action?.config.tracker_id ?? trackers[0]?.id ?? ''),
    title: String(action?.config.title ?? ''),
    body: String(action?.config.body ?? ''),
    target_ids: ids(action?.config.target_ids),
    provider_ids: ids(action?.config.provider_ids),
  }));
  const {
    kind,
    schedule,
    timezone,
    tracker_id: trackerId,
    title,
    body,
    target_ids: targetIds,
    provider_ids: providerIds,
  } = form.values;
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [scheduleError, setScheduleError] = useState<string | null>(null);
  const preview = useSchedulePreview(schedule, timezone);
  const previewError = preview && 'error' in preview ? errorText(preview.error) : null;

  const targetPicker = (
    <fieldset class="fieldset">
      <legend class="field-label">{t('actions.targets')}</legend>
      {!targets.length && <p class="small hint-danger">{t('actions.no_targets')}</p>}
      <div class="check-list">
        {targets.map((tg) => (
          <label key={tg.id} class="check">
            <input
              type="checkbox"
              checked={targetIds.includes(tg.id)}
              data-testid="action-target"
              onChange={(e) =>
                form.set(
                  'target_ids',
                  e.currentTarget.checked ? [...targetIds, tg.id] : targetIds.filter((x) => x !== tg.id),
                )
              }
            />
            <span>{tg.name}</span>
          </label>
        ))}
      </div>
    </fieldset>
  );

  const submit = async (e: Event) => {
    e.preventDefault();
    setError(null);
    const quick = quickCheck(schedule);
    if (quick) {
      setScheduleError(t(`problem.${quick.code}`, problemVars(quick.params)));
      return;
    }
    if (kind !== 'digest' && !targetIds.length) {
      setError(new ApiError(422, 'action_needs_target', ''));
      return;
    }
    setBusy(true);
    const config: ActionConfig =
      kind === 'digest'
        ? { tracker_id: trackerId }
        : kind === 'ai_digest'
          ? { target_ids: targetIds, ...(providerIds.length ? { provider_ids: providerIds } : {}) }
          : { target_ids: targetIds, title, body };
    const { name, enabled } = form.values;
    const payload: ActionCreateBody = { name, kind, schedule: schedule.trim(), timezone, enabled, config };
    try {
      if (action) await patch(`/api/actions/${action.id}`, payload);
      else await post('/api/actions', payload);
      onSaved();
    } catch (err) {
      if (err instanceof ApiError && (err.code.startsWith('schedule_') || err.code === 'invalid_timezone'))
        setScheduleError(errorText(err));
      else setError(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <Modal title={action ? t('actions.edit') : t('actions.add')} onClose={onClose} wide>
      <form class="stack" onSubmit={submit} noValidate data-testid="action-form">
        <div class="grid-2">
          <Field label={t('common.name')}>
            <input required maxLength={200} {...form.text('name')} data-testid="action-name" />
          </Field>
          <Field label={t('actions.kind')} hints={[t(`actions.kind_${kind}_help`)]}>
            <select {...form.choice('kind', KINDS)} data-testid="action-kind">
              <option value="message">{t('actions.kind_message')}</option>
              <option value="digest">{t('actions.kind_digest')}</option>
              <option value="ai_digest">{t('actions.kind_ai_digest')}</option>
            </select>
          </Field>
        </div>
        <div class="grid-2">
          <Field
            label={t('actions.schedule')}
            error={scheduleError ?? previewError}
            hints={[t('actions.schedule_help')]}
          >
            <input
              required
              maxLength={120}
              value={schedule}
              spellcheck={false}
              autocomplete="off"
              class="mono"
              onInput={(e) => {
                form.set('schedule', e.currentTarget.value);
                setScheduleError(null);
              }}
              data-testid="action-schedule"
            />
          </Field>
          <Field label={t('actions.timezone')}>
            <TimeZoneSelect
              value={timezone}
              onChange={(z) => {
                form.set('timezone', z);
                setScheduleError(null);
              }}
              testId="action-timezone"
            />
          </Field>
        </div>
        <div class="schedule-preview" aria-live="polite" data-testid="schedule-preview">
          {preview && 'next' in preview && (
            <>
              <p class="small">
                <strong>{describeSchedule(schedule)}</strong> · {t('actions.next_runs', { zone: timezone })}
              </p>
              <ol class="next-runs">
                {preview.next.map((iso) => (
                  <li key={iso} data-testid="next-run">
                    {inZone(iso, timezone)}
                  </li>
                ))}
              </ol>
            </>
          )}
        </div>
        {kind === 'ai_digest' ? (
          <>
            {targetPicker}
            <fieldset class="fieldset">
              <legend class="field-label">{t('actions.providers')}</legend>
              <p class="small muted">{providers.length ? t('actions.providers_help') : t('actions.no_providers')}</p>
              <div class="check-list">
                {providers.map((p) => (
                  <label key={p.id} class="check">
                    <input
                      type="checkbox"
                      checked={providerIds.includes(p.id)}
                      data-testid="action-provider"
                      onChange={(e) =>
                        form.set(
                          'provider_ids',
                          e.currentTarget.checked ? [...providerIds, p.id] : providerIds.filter((x) => x !== p.id),
                        )
                      }
                    />
                    <span>{shownName(p.name)}</span>
                  </label>
                ))}
              </div>
            </fieldset>
          </>
        ) : kind === 'digest' ? (
          <Field
            label={t('actions.tracker')}
            hints={[!trackers.length && { text: t('actions.no_trackers'), danger: true }]}
          >
            <select
              required
              {...form.choice(
                'tracker_id',
                trackers.map((tr) => tr.id),
              )}
              data-testid="action-tracker"
            >
              {trackers.map((tr) => (
                <option key={tr.id} value={tr.id}>
                  {shownName(tr.name)}
                </option>
              ))}
            </select>
          </Field>
        ) : (
          <>
            <Field label={t('actions.message_title')} hints={[t('actions.message_help')]}>
              <input required maxLength={200} {...form.text('title')} data-testid="action-title" />
            </Field>
            <Field label={t('actions.message_body')}>
              <textarea required maxLength={4000} rows={4} {...form.text('body')} data-testid="action-body" />
            </Field>
            {targetPicker}
          </>
        )}
        <label class="check">
          <input type="checkbox" {...form.check('enabled')} />
          <span>{t('common.enabled')}</span>
        </label>
        <ErrorNote error={error} />
        <div class="form-actions">
          <Button onClick={onClose}>{t('common.cancel')}</Button>
          <Button type="submit" variant="primary" busy={busy} data-testid="action-save">
            {t('common.save')}
          </Button>
        </div>
      </form>
    </Modal>
  );
}
