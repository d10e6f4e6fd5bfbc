import type { Migration } from './types.ts';

/**
 * Messages that follow the state. `deliveries.message_ref` keeps where the channel put a sent
 * message (the target's opaque JSON, e.g. a Telegram chat and message id) and `send_mode` how the
 * delivery went out: `send` (a new message), `edit` (the earlier message was updated) or `reply`
 * (a reply threaded to it). `message_threads` is the correlation index: per target and correlation
 * key (provider instance, thread, key from the payload) the latest event and the message it
 * follows, so a later event edits that message, across retries and restarts.
 * `targets.update_messages` lets a user turn following off for one target (new messages only).
 * SQLite has no `ADD COLUMN IF NOT EXISTS`: the statements are skipped once the columns exist.
 */
export default {
  id: '0021_message_updates',
  pending: (d) =>
    d.name === 'sqlite'
      ? `SELECT 3 - (SELECT COUNT(*) FROM pragma_table_info('deliveries') WHERE name IN ('message_ref', 'send_mode'))
         - (SELECT COUNT(*) FROM pragma_table_info('targets') WHERE name = 'update_messages') AS n`
      : `SELECT 3 - COUNT(*) AS n FROM information_schema.columns WHERE table_schema = current_schema()
         AND ((table_name = 'deliveries' AND column_name IN ('message_ref', 'send_mode')) OR (table_name = ` +
        `'targets' AND column_name = 'update_messages'))`,
  up: (d) => {
    const ine = d.name === 'postgresql' ? 'IF NOT EXISTS ' : '';
    return [
      `ALTER TABLE deliveries ADD COLUMN ${ine}message_ref ${d.json} NULL`,
      `ALTER TABLE deliveries ADD COLUMN ${ine}send_mode TEXT NULL`,
      `ALTER TABLE targets ADD COLUMN ${ine}update_messages ${d.bool} NOT NULL DEFAULT ${d.t}`,
      `CREATE TABLE IF NOT EXISTS message_threads (
        target_id TEXT NOT NULL REFERENCES targets(id) ON DELETE CASCADE,
        correlation_key TEXT NOT NULL,
        user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        event_id TEXT NOT NULL,
        event_type TEXT NOT NULL,
        delivery_id TEXT NOT NULL,
        message_ref ${d.json} NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        PRIMARY KEY (target_id, correlation_key)
      )`,
      'CREATE INDEX IF NOT EXISTS message_threads_updated ON message_threads (updated_at)',
    ];
  },
} satisfies Migration;
