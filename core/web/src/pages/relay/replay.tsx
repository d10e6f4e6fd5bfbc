/**
 * The replay dialog of the event log: choose targets, preview the first messages each would get
 * (rendered now, with today's templates, in the target's language), then replay after confirming.
 * Everything goes through POST /api/events/replay (dry_run for the preview).
 */
import { useState } from 'preact/hooks';
import { get, post } from '../../lib/api.ts';
import { useAsync } from '../../lib/hooks.ts';
import { dateTime, t } from '../../lib/i18n.ts';
import type { ReplayPreview, ReplayQueued, Target } from '../../lib/types.ts';
import { Button, ErrorNote, Loading, Note } from '../../ui/basics.tsx';
import { eventLabel } from '../../ui/labels.ts';
import { Modal } from '../../ui/modal.tsx';
import { languageName } from '../../ui/names.ts';
import { toast } from '../../ui/toast.tsx';

export type ReplaySelection = { event_ids: string[] } | { filter: Record<string, string> };

export function ReplayDialog({
  selection,
  onClose,
  onDone,
}: {
  selection: ReplaySelection;
  onClose: () => void;
  onDone: () => void;
}) {
  const targets = useAsync(() => get<{ targets: Target[] }>('/api/targets', { limit: 200 }).then((r) => r.targets), []);
  const [chosen, setChosen] = useState<string[]>([]);
  const [preview, setPreview] = useState<ReplayPreview | null>(null);
  const [confirming, setConfirming] = useState(false);
  const [busy, setBusy] = useState('');
  const [error, setError] = useState<unknown>(null);
  const choose = (id: string, on: boolean) => {
    setChosen(on ? [...chosen, id] : chosen.filter((x) => x !== id));
    setPreview(null);
    setConfirming(false);
  };
  const run = async (dry: boolean) => {
    setBusy(dry ? 'preview' : 'replay');
    setError(null);
    try {
      const r = await post<ReplayPreview | ReplayQueued>('/api/events/replay', {
        ...selection,
        target_ids: chosen,
        dry_run: dry,
      });
      if (r.dry_run) {
        setPreview(r);
        return;
      }
      toast.ok(t('replay.queued', { count: r.queued }));
      if (r.skipped.length) toast.ok(t('replay.skipped', { count: r.skipped.length }));
      onDone();
    } catch (err) {
      setError(err);
      setConfirming(false);
    } finally {
      setBusy('');
    }
  };
  const usable = (targets.data ?? []).filter((x) => x.enabled);

  return (
    <Modal title={t('replay.title')} onClose={onClose} wide>
      <div class="stack" data-testid="replay-dialog">
        <p class="hint">{t('replay.lead')}</p>
        <p class="small" data-testid="replay-selection">
          {'event_ids' in selection
            ? t('replay.chosen', { count: selection.event_ids.length })
            : t('replay.all_matching_chosen')}
        </p>
        <fieldset class="subform">
          <legend>{t('replay.targets')}</legend>
          {!targets.data ? (
            <Loading />
          ) : !usable.length ? (
            <p class="muted small">{t('replay.no_targets')}</p>
          ) : (
            <div class="check-list">
              {usable.map((x) => (
                <label class="check" key={x.id}>
                  <input
                    type="checkbox"
                    checked={chosen.includes(x.id)}
                    data-testid="replay-target"
                    onChange={(e) => choose(x.id, e.currentTarget.checked)}
                  />
                  <span>
                    {x.name} <small class="muted">{languageName(x.locale)}</small>
                  </span>
                </label>
              ))}
            </div>
          )}
        </fieldset>
        <ErrorNote error={targets.error ?? error} />
        {preview && (
          <div class="replay-preview" data-testid="replay-preview">
            <Note>{t('replay.will_replay', { count: preview.events })}</Note>
            {preview.targets.map((x) => (
              <section key={x.target_id}>
                <h3>{t('replay.as_target_gets', { target: x.target_name, language: languageName(x.locale) })}</h3>
                {!x.messages.length ? (
                  <p class="muted small">{t('replay.nothing_matches')}</p>
                ) : (
                  x.messages.map((m) => (
                    <div class="replay-msg" key={m.event_id} data-testid="replay-message">
                      <div class="muted small">
                        {dateTime(m.occurred_at)} · <span title={m.event_type}>{eventLabel(m.event_type)}</span>
                      </div>
                      <strong>{m.plain_title}</strong>
                      {m.plain_body && <pre>{m.plain_body}</pre>}
                      {m.template_error && <p class="small hint-danger">{t('replay.template_error')}</p>}
                    </div>
                  ))
                )}
                {preview.events > x.messages.length && (
                  <p class="muted small">{t('replay.and_more', { count: preview.events - x.messages.length })}</p>
                )}
              </section>
            ))}
          </div>
        )}
        <div class="form-actions">
          <Button onClick={onClose}>{t('common.cancel')}</Button>
          <Button
            icon="send"
            disabled={!chosen.length}
            busy={busy === 'preview'}
            onClick={() => run(true)}
            data-testid="replay-preview-button"
          >
            {t('replay.preview')}
          </Button>
          {!confirming ? (
            <Button
              variant="primary"
              icon="refresh"
              disabled={!chosen.length || Boolean(busy)}
              onClick={() => setConfirming(true)}
              data-testid="replay-submit"
            >
              {t('replay.replay')}
            </Button>
          ) : (
            <Button variant="danger" busy={busy === 'replay'} onClick={() => run(false)} data-testid="replay-confirm">
              {preview
                ? t('replay.confirm_counted', { count: preview.events, targets: chosen.length })
                : t('replay.confirm')}
            </Button>
          )}
        </div>
      </div>
    </Modal>
  );
}
