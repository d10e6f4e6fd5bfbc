/**
 * The start page: the relay at a glance, charts of the last 30 days, recent events and today's assistant usage.
 * Until its steps are done (and remembered in this browser), a first-run checklist leads. The checklist and the
 * charts (uPlot) are chunks of their own, loaded when shown, so a first visit does not pay for them.
 */
import { useEffect, useState } from 'preact/hooks';
import { get } from '../lib/api.ts';
import { useAsync } from '../lib/hooks.ts';
import { locale, num, relative, t } from '../lib/i18n.ts';
import { useLive } from '../lib/live.ts';
import { useQuota } from '../lib/quota.ts';
import { sessionNow } from '../lib/session.ts';
import type { Deferred, EventRow, Provider, Stats, Target, Tracker } from '../lib/types.ts';
import { Card, Empty, ErrorNote, Loading, Page, StatusBadge } from '../ui/basics.tsx';
import { eventLabel } from '../ui/labels.ts';
import { LiveBadge } from '../ui/live.tsx';
import { shownName } from '../ui/names.ts';
import { QuotaBar } from '../ui/quota-bar.tsx';

/** A module loaded when `when` first holds (null until then), or why it could not be. */
function useChunk<T>(load: () => Promise<T>, when: boolean): { mod: T | null; error: unknown } {
  const [mod, setMod] = useState<T | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    if (!when || mod) return;
    let alive = true;
    load().then(
      (m) => alive && setMod(() => m),
      (err) => alive && setError(err),
    );
    return () => {
      alive = false;
    };
  }, [when]);
  return { mod, error };
}
const loadOnboarding = () => import('./onboarding.tsx');
const loadCharts = () => import('../ui/charts.tsx');
const onboardedKey = (userId: string) => `herald.onboarded.${userId}`;
/** True when this browser remembers the user's first-run checklist as done. */
function onboardedHere(userId: string): boolean {
  try {
    return localStorage.getItem(onboardedKey(userId)) === '1';
  } catch {
    return false;
  }
}
/** Remembers the checklist as done (the checklist calls it when its last step ticks). */
export function rememberOnboarded(userId: string): void {
  try {
    localStorage.setItem(onboardedKey(userId), '1');
  } catch {
    /* not remembered: the list shows, folded, next time too */
  }
}
/** The browser's time zone, which the charts count days in. */
const zone = () => Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';

export function OverviewPage() {
  const data = useAsync(async () => {
    const [p, tr, tg, d, e] = await Promise.all([
      get<{ providers: Provider[] }>('/api/providers', { limit: 200 }),
      get<{ trackers: Tracker[] }>('/api/trackers', { limit: 200 }),
      get<{ targets: Target[] }>('/api/targets', { limit: 200 }),
      get<{ deferred: Deferred[] }>('/api/deferred', { limit: 200 }),
      get<{ events: EventRow[] }>('/api/events', { limit: 8, locale: locale() }),
    ]);
    return {
      providers: p.providers,
      trackers: tr.trackers,
      targets: tg.targets,
      deferred: d.deferred,
      events: e.events,
    };
  }, [locale()]);
  // Recent events and the deferred count follow the pipeline.
  useLive(['event', 'deferred'], () => void data.reload());
  const { quota } = useQuota();
  const d = data.data;
  const user = sessionNow().user;
  const [remembered] = useState(() => Boolean(user && onboardedHere(user.id)));
  const { mod: onboarding, error: onboardingError } = useChunk(loadOnboarding, Boolean(d && user && !remembered));
  const chartsWanted = Boolean(d && (remembered || d.events.length > 0));
  const { mod: charts, error: chartsError } = useChunk(loadCharts, chartsWanted);
  const stats = useAsync(async () => (chartsWanted ? get<Stats>('/api/stats', { tz: zone() }) : null), [chartsWanted]);
  useLive(['event', 'delivery'], () => chartsWanted && void stats.reload());
  const counts = d
    ? [
        { key: 'providers', n: d.providers.length, href: '#/providers' },
        { key: 'trackers', n: d.trackers.length, href: '#/trackers' },
        { key: 'targets', n: d.targets.length, href: '#/targets' },
        { key: 'deferred', n: d.deferred.length, href: '#/deferred' },
      ]
    : [];
  const troubled = d?.providers.filter((p) => p.enabled && !['ok', 'running', 'pending'].includes(p.status)) ?? [];
  return (
    <Page
      title={t('overview.title')}
      subtitle={t('overview.greeting', { email: user?.email ?? '' })}
      actions={<LiveBadge />}
    >
      <ErrorNote error={data.error ?? onboardingError ?? chartsError ?? stats.error} />
      {!d ? (
        <Loading />
      ) : (
        <>
          {user &&
            !remembered &&
            (onboarding ? <onboarding.Onboarding userId={user.id} data={d} /> : !onboardingError && <Loading />)}
          <div class="stats-grid">
            {counts.map((s) => (
              <a key={s.key} class="card stat-card" href={s.href}>
                <span class="stat-num">{num(s.n)}</span>
                <span class="muted">{t(`nav.${s.key}`)}</span>
              </a>
            ))}
          </div>
          {chartsWanted &&
            (charts && stats.data ? <charts.Charts stats={stats.data} /> : !chartsError && !stats.error && <Loading />)}
          <div class="grid-2 align-start">
            <Card
              title={t('overview.recent_events')}
              actions={
                <a href="#/events" class="small">
                  {t('overview.all_events')}
                </a>
              }
            >
              {!d.events.length ? (
                <Empty>
                  {d.providers.some((p) => p.kind !== 'bridge_self' && !p.core_managed)
                    ? t('overview_next.no_events_yet')
                    : t('overview_next.no_sources')}{' '}
                  <a href="#/providers">{t('overview_next.to_sources')}</a>
                </Empty>
              ) : (
                <ul class="recent">
                  {d.events.map((e) => (
                    <li key={e.id}>
                      <span class="recent-title" title={e.event_type}>
                        {e.message || eventLabel(e.event_type)}
                      </span>
                      <StatusBadge status={e.dispatch_status} />
                      <span class="muted small">{relative(e.occurred_at)}</span>
                    </li>
                  ))}
                </ul>
              )}
            </Card>
            <div class="stack">
              <Card
                title={t('overview.assistant')}
                actions={
                  <a href="#/chats" class="small">
                    {t('overview.open_chats')}
                  </a>
                }
              >
                <QuotaBar quota={quota} />
              </Card>
              {troubled.length > 0 && (
                <Card title={t('overview.attention')}>
                  <ul class="recent">
                    {troubled.map((p) => (
                      <li key={p.id}>
                        <a href="#/providers">{shownName(p.name)}</a>
                        <StatusBadge status={p.status} />
                      </li>
                    ))}
                  </ul>
                </Card>
              )}
            </div>
          </div>
        </>
      )}
    </Page>
  );
}
