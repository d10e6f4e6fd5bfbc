/**
 * The event log's filter, defined once: `GET /api/events` takes it as query parameters and
 * `POST /api/events/replay` as its `filter` object. A new filter is one field here and one clause
 * in `eventFilterSql`.
 */
import Type, { type Static } from 'typebox';
import { IsoTime, Uuid } from '../../http/schemas.ts';
import { DispatchStatusSchema, EVENT_TYPE_MAX } from '../vocabulary.ts';
import { type Page, pageSql } from './common.ts';

/** The filter's fields (each optional). */
export const EventFilterFields = {
  provider_id: Type.Optional(Uuid),
  event_type: Type.Optional(Type.String({ maxLength: EVENT_TYPE_MAX })),
  dispatch_status: Type.Optional(DispatchStatusSchema),
  since: Type.Optional(IsoTime),
  until: Type.Optional(IsoTime),
};
const EventFilter = Type.Object(EventFilterFields);
export type EventFilter = Static<typeof EventFilter>;

/**
 * ` AND …` conditions on `event_log e` for the filter, their values pushed onto `params`; `since`
 * inclusive, `until` exclusive. Times are stored as UTC ISO strings: normalised here so they compare
 * as text on both databases.
 */
export function eventFilterSql(f: EventFilter, params: unknown[]): string {
  let where = '';
  if (f.provider_id) {
    // With a narrower filter beside it, its index reads fewer rows than the provider's (a status other than
    // dispatched, a type, a window); `|| ''` keeps the planner off the provider's index, which SQLite's sampled
    // statistics cannot tell apart from them (a provider with no partial event read all its events, 1–2 s).
    const narrower = f.event_type || (f.dispatch_status && f.dispatch_status !== 'dispatched') || f.since || f.until;
    where += narrower ? " AND (e.provider_id || '') = ?" : ' AND e.provider_id = ?';
    params.push(f.provider_id);
  }
  if (f.event_type) {
    where += ' AND e.event_type = ?';
    params.push(f.event_type);
  }
  if (f.dispatch_status) {
    where += ' AND e.dispatch_status = ?';
    params.push(f.dispatch_status);
    // Spelled out so both databases may read the index of the statuses other than dispatched (migration 0033).
    if (f.dispatch_status !== 'dispatched') where += " AND e.dispatch_status <> 'dispatched'";
  }
  if (f.since) {
    where += ' AND e.occurred_at >= ?';
    params.push(new Date(f.since).toISOString());
  }
  if (f.until) {
    where += ' AND e.occurred_at < ?';
    params.push(new Date(f.until).toISOString());
  }
  return where;
}

/** An event with its provider's name (`e`), as the event log's reads show it. */
export const EVENT_SELECT =
  'SELECT e.*, p.name AS provider_name FROM event_log e LEFT JOIN providers p ON p.id = e.provider_id';

/**
 * The page of the caller's events `GET /api/events` lists (newest first, with the provider's name): the ids are
 * chosen first, from an index alone where the filter has one (migration 0033), and only that page's rows are read.
 * Read in one statement, a filter matching many events in a past window would read and sort each whole row.
 */
export function eventPageSql(userId: string, f: EventFilter, page: Page, params: unknown[]): string {
  params.push(userId);
  const where = `e.user_id = ?${eventFilterSql(f, params)}`;
  const ids = `SELECT e.id FROM event_log e WHERE ${where}${pageSql('e', page, params)}`;
  return `${EVENT_SELECT} WHERE e.id IN (${ids}) ORDER BY e.id DESC`;
}
