/** The start page: the relay at a glance, recent events and today's assistant usage. */
import { get } from '../lib/api.ts';
import { useAsync } from '../lib/hooks.ts';
import { locale, num, relative, t } from '../lib/i18n.ts';
import { useLive } from '../lib/live.ts';
import { useQuota } from '../lib/quota.ts';
import { sessionNow } from '../lib/session.ts';
import type { Deferred, EventRow, Provider, Target, Tracker } from '../lib/types.ts';
import { Card, Empty, ErrorNote, Loading, Page, StatusBadge } from '../ui/basics.tsx';
import { eventLabel } from '../ui/labels.ts';
import { LiveBadge } from '../ui/live.tsx';
import { shownName } from '../ui/names.ts';
import { QuotaBar } from '../ui/quota-bar.tsx';

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
  const stats = d
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
      subtitle={t('overview.greeting', { email: sessionNow().user?.email ?? '' })}
      actions={<LiveBadge />}
    >
      <ErrorNote error={data.error} />
      {!d ? (
        <Loading />
      ) : (
        <>
          <div class="stats-grid">
            {stats.map((s) => (
              <a key={s.key} class="card stat-card" href={s.href}>
                <span class="stat-num">{num(s.n)}</span>
                <span class="muted">{t(`nav.${s.key}`)}</span>
              </a>
            ))}
          </div>
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
                <Empty>{t('events.empty')}</Empty>
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
