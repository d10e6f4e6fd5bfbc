import type { Migration } from './types.ts';

/**
 * The index of the statuses other than `dispatched` (0033) carries the provider after the id: a page of one provider's
 * failed events, or of a status the provider has none of, checks each entry's provider in the index itself instead of
 * reading its row (a million events with 10,000 failed ones of other providers: 29 ms → ~1 ms a page). The id stays
 * before it, so a status alone is still read newest first without a sort. The index holds the events that did not end
 * dispatched (1–2 % of a log), so the wider entry costs little to write or keep.
 */
export default {
  id: '0034_event_log_unsettled_provider',
  up: () => [
    'DROP INDEX IF EXISTS event_log_user_unsettled',
    'CREATE INDEX IF NOT EXISTS event_log_user_unsettled ON event_log (user_id, dispatch_status, id, provider_id) ' +
      "WHERE dispatch_status <> 'dispatched'",
  ],
} satisfies Migration;
