/**
 * The event log: filters kept in the URL, each event's readable message and dispatch status at a
 * glance, and on demand its deliveries per target (resend one, or all failed ones) with the history
 * of what was done by hand. Events chosen with their checkboxes, or all matching the filters, can be
 * replayed to chosen targets with today's templates, after a preview of the first messages. "Ask the
 * assistant" on an event opens a chat whose replies carry that event.
 */
import './events.css';
import { Fragment } from 'preact';
import { useState } from 'preact/hooks';
import { get, post } from '../../lib/api.ts';
import { useAsync, useInterval } from '../../lib/hooks.ts';
import { dateTime, locale, t, tOr } from '../../lib/i18n.ts';
import { useLive, useLiveState } from '../../lib/live.ts';
import { usePlugins } from '../../lib/plugins.ts';
import { navigate, useLocation } from '../../lib/router.ts';
import type { DeliveryHistory, EventRow, Provider } from '../../lib/types.ts';
import { Badge, Button, Empty, ErrorNote, Json, Loading, Page, StatusBadge } from '../../ui/basics.tsx';
import { failureText, reasonText } from '../../ui/failures.ts';
import { Icon } from '../../ui/icons.tsx';
import { eventLabel, severityLabel, sourceLabel } from '../../ui/labels.ts';
import { DueTime, LiveBadge } from '../../ui/live.tsx';
import { shownName } from '../../ui/names.ts';
import { toast } from '../../ui/toast.tsx';
import { ReplayDialog } from './replay.tsx';

const STATUSES = ['pending', 'dispatched', 'deferred', 'dropped', 'failed', 'partial'];
const RESENDABLE = ['failed', 'dropped', 'sent'];
const PAGE = 50;
const FILTERS = ['provider_id', 'event_type', 'dispatch_status', 'since', 'until'] as const;
type Filters = Record<(typeof FILTERS)[number], string>;

/** ISO time ↔ the value of a `datetime-local` input, in the browser's zone. */
const toLocalInput = (iso: string) => {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  return new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
};
const fromLocalInput = (v: string) => (v ? new Date(v).toISOString() : '');

function History({ items }: { items: DeliveryHistory[] }) {
  if (!items.length) return null;
  return (
    <div>
      <h3>{t('ops.history')}</h3>
      <ul class="ops-history" data-testid="event-history">
        {items.map((h) => (
          <li key={h.id}>
            <span>
              {t(`ops.history_${h.action}`, {
                time: dateTime(h.at),
                actor: h.actor_email ?? t('ops.someone'),
                target: h.target_name ?? t('ops.deleted_target'),
              })}
            </span>
            <span class="muted small">
              {t('ops.history_previous', { status: tOr(`status.${h.previous.status}`, h.previous.status) })} ·{' '}
              {t('events.attempts', { count: h.previous.attempts })}
              {h.previous.last_error ? (
                <span title={h.previous.last_error}>
                  {' · '}
                  {failureText(h.previous.last_error, h.previous.last_status_code)}
                </span>
              ) : null}
            </span>
          </li>
        ))}
      </ul>
    </div>
  );
}

function Details({ e, onChanged }: { e: EventRow; onChanged: () => void }) {
  const [busy, setBusy] = useState('');
  const resend = async (deliveryId?: string) => {
    setBusy(deliveryId ?? 'all');
    try {
      const r = await post<{ resent: unknown[] }>(
        `/api/events/${e.id}/resend`,
        deliveryId ? { delivery_id: deliveryId } : {},
      );
      toast.ok(t('ops.resent', { count: r.resent.length }));
      onChanged();
    } catch (err) {
      toast.error(err);
    } finally {
      setBusy('');
    }
  };
  const failed = e.deliveries.filter((d) => d.status === 'failed').length;
  // A chat about this event: its replies carry the event, its deliveries and the provider's recent events.
  const ask = async () => {
    setBusy('ask');
    try {
      const chat = await post<{ id: string }>('/api/v1/chats', { event_id: e.id });
      navigate(`/chats/${chat.id}?ask=1`);
    } catch (err) {
      toast.error(err);
      setBusy('');
    }
  };
  return (
    <div class="details ops-details">
      <p>
        <Button
          small
          icon="send"
          busy={busy === 'ask'}
          disabled={Boolean(busy)}
          onClick={() => void ask()}
          title={t('lab.ask_help')}
          data-testid="ask-assistant"
        >
          {t('lab.ask')}
        </Button>
      </p>
      <div>
        <h3>{t('events.deliveries')}</h3>
        {!e.deliveries.length ? (
          <p class="muted small">{t('events.no_deliveries')}</p>
        ) : (
          <ul class="deliveries">
            {e.deliveries.map((d) => (
              <li key={d.id} data-testid="delivery">
                <strong>{d.target_name ?? d.target_id.slice(0, 8)}</strong> <StatusBadge status={d.status} />
                {d.digest_event_id && (
                  <span class="muted small" title={t('digest.in_digest_help')} data-testid="in-digest">
                    {t('digest.in_digest')}
                  </span>
                )}
                <span class="muted small">{t('events.attempts', { count: d.attempts })}</span>
                {d.sent_at && <span class="muted small">{t('ops.sent_at', { time: dateTime(d.sent_at) })}</span>}
                {d.next_attempt_at && (d.status === 'queued' || d.status === 'deferred') && (
                  <DueTime at={d.next_attempt_at} deferred={d.status === 'deferred'} />
                )}
                {d.send_mode === 'edit' && (
                  <span class="muted small" title={t('updates.edited_help')} data-testid="send-mode">
                    {t('updates.edited')}
                  </span>
                )}
                {d.send_mode === 'reply' && (
                  <span class="muted small" title={t('updates.replied_help')} data-testid="send-mode">
                    {t('updates.replied')}
                  </span>
                )}
                {d.last_error && (
                  <span class="small hint-danger ops-error" title={d.last_error}>
                    {failureText(d.last_error, d.last_status_code)}
                  </span>
                )}
                {d.rendered && (d.rendered.title || d.rendered.body) && (
                  <figure class="delivered-text" data-testid="delivered-text">
                    <figcaption class="muted small">{t('delivered.text')}</figcaption>
                    {d.rendered.title && <strong>{d.rendered.title}</strong>}
                    {d.rendered.body && <p>{d.rendered.body}</p>}
                  </figure>
                )}
                {RESENDABLE.includes(d.status) && (
                  <Button
                    small
                    icon="refresh"
                    busy={busy === d.id}
                    disabled={Boolean(busy)}
                    onClick={() => resend(d.id)}
                    aria-label={t('ops.resend_to', { target: d.target_name ?? d.target_id.slice(0, 8) })}
                  >
                    {t('ops.resend')}
                  </Button>
                )}
              </li>
            ))}
          </ul>
        )}
        {failed > 0 && (
          <p>
            <Button
              small
              variant="primary"
              icon="refresh"
              busy={busy === 'all'}
              disabled={Boolean(busy)}
              onClick={() => resend()}
            >
              {t('ops.resend_failed', { count: failed })}
            </Button>
          </p>
        )}
      </div>
      <History items={e.history} />
      <details>
        <summary class="muted small">{t('events.payload')}</summary>
        <Json value={e.payload} />
      </details>
      {e.details != null && (
        <div>
          <h3>{t('events.details')}</h3>
          {typeof (e.details as { reason?: unknown }).reason === 'string' && (
            <p data-testid="event-reason">
              <strong>{t('event_detail.reason')}:</strong> {reasonText((e.details as { reason: string }).reason)}
            </p>
          )}
          <details>
            <summary class="muted small">{t('event_detail.raw')}</summary>
            <Json value={e.details} />
          </details>
        </div>
      )}
    </div>
  );
}

export function EventsPage() {
  const plugins = usePlugins();
  const loc = useLocation();
  const refs = useAsync(
    () => get<{ providers: Provider[] }>('/api/providers', { limit: 200 }).then((p) => p.providers),
    [],
  );
  const filters = Object.fromEntries(FILTERS.map((k) => [k, loc.query.get(k) ?? ''])) as Filters;
  const [older, setOlder] = useState<EventRow[]>([]);
  const [more, setMore] = useState(false);
  const [open, setOpen] = useState<Set<string>>(new Set());
  const lang = locale();
  const first = useAsync(
    () => get<{ events: EventRow[] }>('/api/events', { ...filters, locale: lang, limit: PAGE }).then((r) => r.events),
    [...FILTERS.map((k) => filters[k]), lang],
  );
  // Keep the newest page fresh while the user has not paged back: on the live hints of new events and settled
  // deliveries, and by polling while the live connection is down.
  const live = useLiveState();
  // Only a refresh asked for shows as busy: the live ones stay quiet.
  const [refreshing, setRefreshing] = useState(false);
  useLive(
    ['event', 'delivery'],
    () => {
      if (!older.length) void first.reload();
    },
    (h) => h.kind !== 'event' || !filters.provider_id || h.provider_id === filters.provider_id,
  );
  useInterval(() => {
    if (!older.length && live !== 'live') void first.reload();
  }, 10_000);

  const rows = [...(first.data ?? []), ...older];
  const canMore = (older.length ? older.length % PAGE === 0 : (first.data?.length ?? 0) === PAGE) && rows.length > 0;
  const loadMore = async () => {
    setMore(true);
    try {
      const r = await get<{ events: EventRow[] }>('/api/events', {
        ...filters,
        locale: lang,
        limit: PAGE,
        before: rows[rows.length - 1].id,
      });
      setOlder([...older, ...r.events]);
    } finally {
      setMore(false);
    }
  };
  const setFilter = (k: keyof Filters, v: string) => {
    setOlder([]);
    const q = new URLSearchParams();
    for (const key of FILTERS) {
      const val = key === k ? v : filters[key];
      if (val) q.set(key, val);
    }
    const s = q.toString();
    navigate(s ? `/events?${s}` : '/events', true);
  };
  const anyFilter = FILTERS.some((k) => filters[k]);
  const toggle = (id: string) => {
    const s = new Set(open);
    if (s.has(id)) s.delete(id);
    else s.add(id);
    setOpen(s);
  };
  // Replay: events picked by their checkboxes, or every event matching the filters.
  const [picked, setPicked] = useState<Set<string>>(new Set());
  const [allMatching, setAllMatching] = useState(false);
  const [replaying, setReplaying] = useState(false);
  const pick = (id: string) => {
    const s = new Set(picked);
    if (s.has(id)) s.delete(id);
    else s.add(id);
    setPicked(s);
  };
  const pageAll = rows.length > 0 && rows.every((e) => picked.has(e.id));
  const pickPage = () => setPicked(pageAll ? new Set() : new Set(rows.map((e) => e.id)));
  const matchFilter = Object.fromEntries(FILTERS.filter((k) => filters[k]).map((k) => [k, filters[k]]));
  // Only the types of the kinds the user has sources of (and the one filtered on), by their names.
  const kinds = new Set((refs.data ?? []).map((p) => p.kind));
  const types = [
    ...new Set([
      ...(plugins.data ?? [])
        .filter((p) => p.kind === 'provider' && kinds.has(p.id))
        .flatMap((p) => Object.keys(p.events)),
      ...(filters.event_type ? [filters.event_type] : []),
    ]),
  ]
    .map((x) => ({ x, label: eventLabel(x, plugins.data) }))
    .sort((a, b) => a.label.localeCompare(b.label, lang));
  const providerName = (e: EventRow) =>
    e.provider_name || refs.data?.some((p) => p.id === e.provider_id)
      ? shownName(e.provider_name ?? refs.data?.find((p) => p.id === e.provider_id)?.name ?? '')
      : sourceLabel(e.provider_kind, plugins.data);

  return (
    <Page
      title={t('events.title')}
      subtitle={t('events.subtitle')}
      actions={
        <>
          <LiveBadge />
          <Button
            icon="refresh"
            onClick={() => {
              setOlder([]);
              setRefreshing(true);
              void first.reload().finally(() => setRefreshing(false));
            }}
            busy={refreshing}
          >
            {t('common.refresh')}
          </Button>
        </>
      }
    >
      <div class="filters card ops-filters" data-testid="event-filters">
        <label class="field">
          <span class="field-label">{t('events.provider')}</span>
          <select
            value={filters.provider_id}
            onChange={(e) => setFilter('provider_id', e.currentTarget.value)}
            data-testid="provider-filter"
          >
            <option value="">{t('common.all')}</option>
            {refs.data?.map((p) => (
              <option key={p.id} value={p.id}>
                {shownName(p.name)}
              </option>
            ))}
          </select>
        </label>
        <label class="field">
          <span class="field-label">{t('events.type')}</span>
          <select
            value={filters.event_type}
            onChange={(e) => setFilter('event_type', e.currentTarget.value)}
            data-testid="type-filter"
          >
            <option value="">{t('common.all')}</option>
            {types.map(({ x, label }) => (
              <option key={x} value={x} title={x}>
                {label}
              </option>
            ))}
          </select>
        </label>
        <label class="field">
          <span class="field-label">{t('events.status')}</span>
          <select
            value={filters.dispatch_status}
            onChange={(e) => setFilter('dispatch_status', e.currentTarget.value)}
            data-testid="status-filter"
          >
            <option value="">{t('common.all')}</option>
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {tOr(`status.${s}`, s)}
              </option>
            ))}
          </select>
        </label>
        <label class="field">
          <span class="field-label">{t('ops.since')}</span>
          <input
            type="datetime-local"
            value={filters.since ? toLocalInput(filters.since) : ''}
            data-testid="since-filter"
            onChange={(e) => setFilter('since', fromLocalInput(e.currentTarget.value))}
          />
        </label>
        <label class="field">
          <span class="field-label">{t('ops.until')}</span>
          <input
            type="datetime-local"
            value={filters.until ? toLocalInput(filters.until) : ''}
            data-testid="until-filter"
            onChange={(e) => setFilter('until', fromLocalInput(e.currentTarget.value))}
          />
        </label>
        {anyFilter && (
          <Button
            variant="ghost"
            onClick={() => {
              setOlder([]);
              navigate('/events', true);
            }}
          >
            {t('ops.clear_filters')}
          </Button>
        )}
      </div>
      {rows.length > 0 && (
        <div class="replay-bar" data-testid="replay-bar">
          <span class="muted small" data-testid="replay-count">
            {allMatching ? t('replay.all_matching_chosen') : t('replay.chosen', { count: picked.size })}
          </span>
          <label class="check">
            <input
              type="checkbox"
              checked={allMatching}
              data-testid="replay-all-matching"
              onChange={(e) => setAllMatching(e.currentTarget.checked)}
            />
            <span>{anyFilter ? t('replay.all_matching') : t('replay.all_events')}</span>
          </label>
          <Button
            small
            icon="refresh"
            disabled={!allMatching && !picked.size}
            onClick={() => setReplaying(true)}
            data-testid="replay-open"
          >
            {t('replay.open')}
          </Button>
        </div>
      )}
      {replaying && (
        <ReplayDialog
          selection={allMatching ? { filter: matchFilter } : { event_ids: [...picked] }}
          onClose={() => setReplaying(false)}
          onDone={() => {
            setReplaying(false);
            setPicked(new Set());
            setAllMatching(false);
            setOlder([]);
            void first.reload();
          }}
        />
      )}
      <ErrorNote error={first.error} />
      {!first.data ? (
        <Loading />
      ) : !rows.length ? (
        <Empty>{t('events.empty')}</Empty>
      ) : (
        <div class="table-wrap card">
          <table class="table events ops-table ops-events">
            <thead>
              <tr>
                <th class="ops-pick">
                  <input
                    type="checkbox"
                    checked={pageAll}
                    disabled={allMatching}
                    onChange={pickPage}
                    aria-label={t('replay.pick_page')}
                    data-testid="event-select-page"
                  />
                </th>
                <th>
                  <span class="sr-only">{t('common.details')}</span>
                </th>
                <th>{t('common.time')}</th>
                <th>{t('events.provider')}</th>
                <th>{t('events.type')}</th>
                <th>{t('ops.message')}</th>
                <th>{t('events.status')}</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((e) => (
                <Fragment key={e.id}>
                  <tr class={`ops-row${open.has(e.id) ? ' expanded' : ''}`} data-testid="event-row">
                    <td class="ops-pick">
                      <input
                        type="checkbox"
                        checked={allMatching || picked.has(e.id)}
                        disabled={allMatching}
                        onChange={() => pick(e.id)}
                        aria-label={t('replay.pick', { message: e.message || eventLabel(e.event_type, plugins.data) })}
                        data-testid="event-select"
                      />
                    </td>
                    <td class="ops-x">
                      <button
                        type="button"
                        class="icon-btn expander"
                        aria-expanded={open.has(e.id)}
                        aria-label={t('events.toggle_details')}
                        onClick={() => toggle(e.id)}
                      >
                        <Icon name="chevron" size={16} />
                      </button>
                    </td>
                    <td class="nowrap ops-time">{dateTime(e.occurred_at)}</td>
                    <td class="ops-provider">{providerName(e)}</td>
                    <td class="ops-type" title={e.event_type}>
                      {eventLabel(e.event_type, plugins.data)}
                    </td>
                    <td class="ops-msg">
                      {e.severity !== 'info' && (
                        <>
                          <span title={t('events.severity')}>
                            <Badge tone={e.severity === 'critical' ? 'danger' : 'warn'}>
                              {severityLabel(e.severity)}
                            </Badge>
                          </span>{' '}
                        </>
                      )}
                      <span data-testid="event-message">{e.message}</span>
                    </td>
                    <td class="ops-st">
                      <StatusBadge status={e.dispatch_status} />
                    </td>
                  </tr>
                  {open.has(e.id) && (
                    <tr class="details-row">
                      <td colSpan={7}>
                        <Details
                          e={e}
                          onChanged={() => {
                            setOlder([]);
                            void first.reload();
                          }}
                        />
                      </td>
                    </tr>
                  )}
                </Fragment>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {canMore && (
        <div class="center">
          <Button busy={more} onClick={loadMore}>
            {t('common.load_more')}
          </Button>
        </div>
      )}
    </Page>
  );
}
