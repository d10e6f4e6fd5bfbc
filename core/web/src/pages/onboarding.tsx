/**
 * The overview's first-run checklist: add a source, add a target (and send it a test), link them with a tracker,
 * see the first event arrive (the overview refetches on live hints, so this step ticks by itself). The built-in
 * self-monitoring source does not count as one of yours. Once every step is done the list folds away, and the
 * browser remembers it so that later visits show the overview alone. Its own chunk: a visit after that never
 * downloads it.
 */
import './onboarding.css';
import { useEffect, useState } from 'preact/hooks';
import { post } from '../lib/api.ts';
import { t } from '../lib/i18n.ts';
import { usePlugins } from '../lib/plugins.ts';
import type { EventRow, Provider, Target, Tracker } from '../lib/types.ts';
import { Button, Note } from '../ui/basics.tsx';
import { InlineMd } from '../ui/inline-md.tsx';
import { shownName } from '../ui/names.ts';
import { toast } from '../ui/toast.tsx';
import { rememberOnboarded } from './overview.tsx';
import { ConnectionPanel } from './relay/connection.tsx';

/** The built-in self-monitoring source: not one of "your sources". */
const SELF = 'bridge_self';

export interface OnboardingData {
  providers: Provider[];
  targets: Target[];
  trackers: Tracker[];
  events: EventRow[];
}

/** The steps and whether each is done. */
export function onboardingSteps(d: OnboardingData) {
  const own = d.providers.filter((p) => p.kind !== SELF && !p.core_managed);
  return {
    own,
    steps: [
      { key: 'source', done: own.length > 0, href: '#/providers' },
      { key: 'target', done: d.targets.length > 0, href: '#/targets' },
      {
        key: 'link',
        done: d.trackers.some((tr) => tr.target_ids.length > 0 && own.some((p) => p.id === tr.provider_id)),
        href: '#/trackers',
      },
      { key: 'event', done: d.events.some((e) => e.provider_kind !== SELF), href: '#/events' },
    ],
  };
}

function SendTest({ target }: { target: Target }) {
  const [busy, setBusy] = useState(false);
  const [ok, setOk] = useState<boolean | null>(null);
  const send = async () => {
    setBusy(true);
    try {
      setOk((await post<{ ok: boolean }>(`/api/targets/${target.id}/test`, {})).ok);
    } catch (err) {
      toast.error(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <div class="row">
      <Button
        small
        icon="send"
        busy={busy}
        onClick={() => void send()}
        aria-label={t('onboarding.send_test', { target: shownName(target.name) })}
        data-testid="onboarding-send-test"
      >
        {t('targets.send_test')}
      </Button>
      {ok !== null && (
        <span
          class={`small ${ok ? 'onboarding-ok' : 'hint-danger'}`}
          role="status"
          data-testid="onboarding-test-result"
        >
          {ok ? t('targets.test_ok') : t('targets.test_failed')}
        </span>
      )}
    </div>
  );
}

/** What a source kind asks of the sending app, for the kinds this service has (before any source exists). */
function SourceKinds() {
  const plugins = usePlugins();
  const kinds = (plugins.data ?? []).filter((p) => p.kind === 'provider' && !p.core_managed && p.id !== SELF);
  if (!kinds.length) return null;
  return (
    <ul class="onboarding-kinds" data-testid="onboarding-kinds">
      {kinds.map((p) => (
        <li key={p.id}>
          <strong>{p.display_name}</strong>
          {p.description && (
            <span class="muted small">
              {' — '}
              <InlineMd text={p.description} />
            </span>
          )}
        </li>
      ))}
    </ul>
  );
}

export function Onboarding({ userId, data }: { userId: string; data: OnboardingData }) {
  const { own, steps } = onboardingSteps(data);
  const done = steps.filter((s) => s.done).length;
  const all = done === steps.length;
  // Done already when first shown: nothing to show. Done while shown: the list folds, saying so.
  const [wasOpen] = useState(!all);
  useEffect(() => {
    if (all) rememberOnboarded(userId);
  }, [all, userId]);
  if (all && !wasOpen) return null;
  // The newest source of yours with a webhook: what to paste into its app, and a command that sends a test.
  const hooked = own.find((p) => p.webhook_url);
  return (
    <details class="card onboarding" open={!all} data-testid="onboarding">
      <summary class="card-head">
        <h2>{t('onboarding.title')}</h2>
        <span class="muted" data-testid="onboarding-progress">
          {t('onboarding.progress', { done, total: steps.length })}
        </span>
      </summary>
      {all ? <Note tone="ok">{t('onboarding.all_done')}</Note> : <p class="muted">{t('onboarding.intro')}</p>}
      <ol class="onboarding-steps">
        {steps.map((s) => (
          <li key={s.key} class={s.done ? 'done' : ''} data-testid={`step-${s.key}`} data-done={String(s.done)}>
            <span class="step-mark" aria-hidden="true">
              {s.done ? '✓' : '○'}
            </span>
            <div class="stack">
              <div>
                <strong>{t(`onboarding.${s.key}`)}</strong>{' '}
                <span class="sr-only">{s.done ? t('onboarding.done') : t('onboarding.not_done')}</span>
                <a href={s.href} class="small">
                  {t(`onboarding.${s.key}_go`)}
                </a>
              </div>
              <span class="muted small">
                <InlineMd text={t(`onboarding.${s.key}_help`)} />
              </span>
              {s.key === 'source' && !s.done && <SourceKinds />}
              {s.key === 'target' && data.targets[0] && <SendTest target={data.targets[0]} />}
              {s.key === 'event' && !s.done && hooked && (
                <div data-testid="onboarding-connection">
                  <p class="small">{t('onboarding.paste', { name: shownName(hooked.name) })}</p>
                  <ConnectionPanel provider={hooked} open />
                </div>
              )}
            </div>
          </li>
        ))}
      </ol>
    </details>
  );
}
