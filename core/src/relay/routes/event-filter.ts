/**
 * The event log's filter, defined once: `GET /api/events` takes it as query parameters and
 * `POST /api/events/replay` as its `filter` object. A new filter is one field here and one clause
 * in `eventFilterSql`.
 */
import Type, { type Static } from 'typebox';
import { IsoTime, Uuid } from '../../http/schemas.ts';
import { DispatchStatusSchema, EVENT_TYPE_MAX } from '../vocabulary.ts';

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
    where += ' AND e.provider_id = ?';
    params.push(f.provider_id);
  }
  if (f.event_type) {
    where += ' AND e.event_type = ?';
    params.push(f.event_type);
  }
  if (f.dispatch_status) {
    where += ' AND e.dispatch_status = ?';
    params.push(f.dispatch_status);
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
