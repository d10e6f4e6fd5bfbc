import type { Migration } from './types.ts';

/**
 * An accepted webhook request is recorded on the event it raised instead of in two more rows:
 * `event_log.replay_key` / `replay_expires_at` carry the replay key the provider's plugin returned
 * (the key a later delivery with the same id is refused by, unique per provider while set), and
 * `hook_ip` / `hook_excerpt` / `hook_event_ids` carry the request's payload-log entry (status 202,
 * read by the webhook-log API next to webhook_payload_log, which keeps every other request).
 * `hook_event_ids` is set only when the request raised more than this one event.
 * SQLite has no `ADD COLUMN IF NOT EXISTS`: the statements are skipped once the columns exist.
 */
const COLUMNS = ['replay_key', 'replay_expires_at', 'hook_ip', 'hook_excerpt', 'hook_event_ids'];

export default {
  id: '0024_event_webhook_columns',
  pending: (d) =>
    d.name === 'sqlite'
      ? `SELECT ${COLUMNS.length} - COUNT(*) AS n FROM pragma_table_info('event_log') WHERE name IN ` +
        `(${COLUMNS.map((c) => `'${c}'`).join(', ')})`
      : `SELECT ${COLUMNS.length} - COUNT(*) AS n FROM information_schema.columns WHERE table_schema = current_schema()
         AND table_name = 'event_log' AND column_name IN (${COLUMNS.map((c) => `'${c}'`).join(', ')})`,
  up: (d) => {
    const ine = d.name === 'postgresql' ? 'IF NOT EXISTS ' : '';
    return [
      `ALTER TABLE event_log ADD COLUMN ${ine}replay_key TEXT NULL`,
      `ALTER TABLE event_log ADD COLUMN ${ine}replay_expires_at TEXT NULL`,
      `ALTER TABLE event_log ADD COLUMN ${ine}hook_ip TEXT NULL`,
      `ALTER TABLE event_log ADD COLUMN ${ine}hook_excerpt TEXT NULL`,
      `ALTER TABLE event_log ADD COLUMN ${ine}hook_event_ids ${d.json} NULL`,
      'CREATE UNIQUE INDEX IF NOT EXISTS event_log_replay ON event_log (provider_id, replay_key) WHERE replay_key ' +
        'IS NOT NULL',
    ];
  },
} satisfies Migration;
