import type { Migration } from './types.ts';

/**
 * `deferred_dispatch (event_id)`: an event's deletion (the retention's batches, a user's deleted event) cascades to
 * the deferred deliveries that name it, and without an index on the column each deleted event read the whole table
 * (`SCAN deferred_dispatch` in SQLite's plan of the cascade's lookup): a batch of 2,000 events read it 2,000 times.
 * The table holds only the deliveries held back (quiet hours, a digest), so the index is small to keep.
 */
export default {
  id: '0035_deferred_dispatch_event',
  up: () => ['CREATE INDEX IF NOT EXISTS deferred_event ON deferred_dispatch (event_id)'],
} satisfies Migration;
