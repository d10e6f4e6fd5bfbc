import type { Migration } from './types.ts';

/**
 * What users did to an event's deliveries by hand: a resend (the delivery row got a new id and
 * went back to the queue; the replaced attempt's record is kept here), a deferred delivery sent
 * now, or one dropped. `target_id` has no foreign key so the record outlives a deleted target;
 * the event's own `details` column is rewritten by the dispatcher and cannot hold it.
 */
export default {
  id: '0013_delivery_history',
  up: () => [
    `CREATE TABLE IF NOT EXISTS delivery_history (
      id TEXT PRIMARY KEY,
      event_id TEXT NOT NULL REFERENCES event_log(id) ON DELETE CASCADE,
      user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      actor_id TEXT NULL REFERENCES users(id) ON DELETE SET NULL,
      action TEXT NOT NULL,
      target_id TEXT NOT NULL,
      delivery_id TEXT NOT NULL,
      previous_delivery_id TEXT NULL,
      previous_status TEXT NOT NULL,
      previous_attempts INTEGER NOT NULL DEFAULT 0,
      previous_error TEXT NULL,
      previous_status_code INTEGER NULL,
      previous_sent_at TEXT NULL,
      created_at TEXT NOT NULL
    )`,
    'CREATE INDEX IF NOT EXISTS delivery_history_event ON delivery_history (event_id, created_at)',
  ],
} satisfies Migration;
