/** The event log: filters, dispatch status at a glance, and each event's details on demand. */
import { Fragment } from 'preact';
import { useState } from 'preact/hooks';
import { get } from '../../lib/api.ts';
import { useAsync, useInterval } from '../../lib/hooks.ts';
import { dateTime, t, tOr } from '../../lib/i18n.ts';
import { usePlugins } from '../../lib/plugins.ts';
import type { EventRow, Provider, Target } from '../../lib/types.ts';
import { Badge, Button, Empty, ErrorNote, Json, Loading, Page, StatusBadge } from '../../ui/basics.tsx';
import { Icon } from '../../ui/icons.tsx';

const STATUSES = ['pending', 'dispatched', 'deferred', 'dropped', 'failed', 'partial'];
const PAGE = 50;

interface Filters { provider_id: string; event_type: string; dispatch_status: string }

export function EventsPage() {
  const plugins = usePlugins();
  const refs = useAsync(async () => {
    const [p, tg] = await Promise.all([get<{ providers: Provider[] }>('/api/providers', { limit: 200 }), get<{ targets: Target[] }>('/api/targets', { limit: 200 })]);
    return { providers: p.providers, targets: tg.targets };
  }, []);
  const [filters, setFilters] = useState<Filters>({ provider_id: '', event_type: '', dispatch_status: '' });
  const [older, setOlder] = useState<EventRow[]>([]);
  const [more, setMore] = useState(false);
  const [open, setOpen] = useState<Set<string>>(new Set());
  const first = useAsync(() => get<{ events: EventRow[] }>('/api/events', { ...filters, limit: PAGE }).then((r) => r.events), [filters.provider_id, filters.event_type, filters.dispatch_status]);
  // Keep the newest page fresh while the user has not paged back.
  useInterval(() => { if (!older.length) void first.reload(); }, 10_000);

  const rows = [...(first.data ?? []), ...older];
  const canMore = (older.length ? older.length % PAGE === 0 : (first.data?.length ?? 0) === PAGE) && rows.length > 0;
  const loadMore = async () => {
    setMore(true);
    try {
      const r = await get<{ events: EventRow[] }>('/api/events', { ...filters, limit: PAGE, before: rows[rows.length - 1].id });
      setOlder([...older, ...r.events]);
    } finally { setMore(false); }
  };
  const setFilter = (k: keyof Filters, v: string) => { setOlder([]); setFilters({ ...filters, [k]: v }); };
  const toggle = (id: string) => { const s = new Set(open); if (s.has(id)) s.delete(id); else s.add(id); setOpen(s); };
  const types = [...new Set((plugins.data ?? []).flatMap((p) => Object.keys(p.events)))].sort();
  const providerName = (id: string | null) => refs.data?.providers.find((p) => p.id === id)?.name;
  const targetName = (id: string) => refs.data?.targets.find((x) => x.id === id)?.name ?? id.slice(0, 8);

  return (
    <Page title={t('events.title')} subtitle={t('events.subtitle')}
      actions={<Button icon="refresh" onClick={() => { setOlder([]); void first.reload(); }} busy={first.loading && Boolean(first.data)}>{t('common.refresh')}</Button>}>
      <div class="filters card">
        <label class="field"><span class="field-label">{t('events.provider')}</span>
          <select value={filters.provider_id} onChange={(e) => setFilter('provider_id', (e.target as HTMLSelectElement).value)}>
            <option value="">{t('common.all')}</option>
            {refs.data?.providers.map((p) => <option key={p.id} value={p.id}>{p.name}</option>)}
          </select></label>
        <label class="field"><span class="field-label">{t('events.type')}</span>
          <select value={filters.event_type} onChange={(e) => setFilter('event_type', (e.target as HTMLSelectElement).value)}>
            <option value="">{t('common.all')}</option>
            {types.map((x) => <option key={x} value={x}>{x}</option>)}
          </select></label>
        <label class="field"><span class="field-label">{t('events.status')}</span>
          <select value={filters.dispatch_status} onChange={(e) => setFilter('dispatch_status', (e.target as HTMLSelectElement).value)} data-testid="status-filter">
            <option value="">{t('common.all')}</option>
            {STATUSES.map((s) => <option key={s} value={s}>{tOr(`status.${s}`, s)}</option>)}
          </select></label>
      </div>
      <ErrorNote error={first.error} />
      {!first.data ? <Loading /> : !rows.length ? <Empty>{t('events.empty')}</Empty> : (
        <div class="table-wrap card">
          <table class="table events">
            <thead><tr><th><span class="sr-only">{t('common.details')}</span></th><th>{t('common.time')}</th><th>{t('events.provider')}</th><th>{t('events.type')}</th><th>{t('events.severity')}</th><th>{t('events.status')}</th></tr></thead>
            <tbody>
              {rows.map((e) => (
                <Fragment key={e.id}>
                  <tr class={open.has(e.id) ? 'expanded' : ''} data-testid="event-row">
                    <td><button type="button" class="icon-btn expander" aria-expanded={open.has(e.id)} aria-label={t('events.toggle_details')} onClick={() => toggle(e.id)}><Icon name="chevron" size={16} /></button></td>
                    <td class="nowrap">{dateTime(e.occurred_at)}</td>
                    <td>{providerName(e.provider_id) ?? e.provider_kind}</td>
                    <td><code>{e.event_type}</code></td>
                    <td><Badge tone={e.severity === 'critical' ? 'danger' : e.severity === 'warning' ? 'warn' : 'neutral'}>{tOr(`severity.${e.severity}`, e.severity)}</Badge></td>
                    <td><StatusBadge status={e.dispatch_status} /></td>
                  </tr>
                  {open.has(e.id) && (
                    <tr class="details-row"><td colSpan={6}>
                      <div class="details">
                        <div><h3>{t('events.deliveries')}</h3>
                          {!e.deliveries.length ? <p class="muted small">{t('events.no_deliveries')}</p> : (
                            <ul class="deliveries">{e.deliveries.map((d) => (
                              <li key={d.target_id}><strong>{targetName(d.target_id)}</strong> <StatusBadge status={d.status} />
                                <span class="muted small">{t('events.attempts', { count: d.attempts })}</span>
                                {d.last_error && <span class="small hint-danger">{d.last_status_code ? `${d.last_status_code} · ` : ''}{d.last_error}</span>}</li>
                            ))}</ul>
                          )}
                        </div>
                        <div><h3>{t('events.payload')}</h3><Json value={e.payload} /></div>
                        {e.details != null && <div><h3>{t('events.details')}</h3><Json value={e.details} /></div>}
                      </div>
                    </td></tr>
                  )}
                </Fragment>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {canMore && <div class="center"><Button busy={more} onClick={loadMore}>{t('common.load_more')}</Button></div>}
    </Page>
  );
}
