import type { Migration } from './types.ts';

/**
 * Indexes for the event log's filters (`GET /api/events`, replay): a page walks the user's events
 * newest first until it has its rows, so a rare event type, a status few events have, or a time
 * window in the past read most of the log without them (a million events: 0.1–2 s a page). Each
 * index leads with the user and ends with the id, so a page of one filter is read in id order from
 * the index alone. Statuses other than `dispatched` are indexed apart: most events end dispatched,
 * and leaving them out keeps the index small and the settle of a dispatched event one entry removed.
 * That index takes the place of `event_log_pending` (0002), which no statement reads: an event
 * written pending and settled still costs one entry added and one removed, as it did there.
 */
export default {
  id: '0033_event_log_filter_indexes',
  up: () => [
    'CREATE INDEX IF NOT EXISTS event_log_user_type ON event_log (user_id, event_type, id)',
    'CREATE INDEX IF NOT EXISTS event_log_user_occurred ON event_log (user_id, occurred_at, id)',
    'CREATE INDEX IF NOT EXISTS event_log_user_unsettled ON event_log (user_id, dispatch_status, id) ' +
      "WHERE dispatch_status <> 'dispatched'",
    'DROP INDEX IF EXISTS event_log_pending',
  ],
} satisfies Migration;
