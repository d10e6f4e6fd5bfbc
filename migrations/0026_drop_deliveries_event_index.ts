import type { Migration } from './types.ts';

/**
 * `deliveries_event (event_id)` repeats the leading column of the UNIQUE (event_id, target_id)
 * index every delivery already has, which serves the same lookups (a delivery's event, the
 * cascade from event_log): one b-tree less to write for every delivery ingested.
 */
export default {
  id: '0026_drop_deliveries_event_index',
  up: () => ['DROP INDEX IF EXISTS deliveries_event'],
} satisfies Migration;
