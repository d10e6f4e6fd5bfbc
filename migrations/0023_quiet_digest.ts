import type { Migration } from './types.ts';

/**
 * A digest at the end of quiet hours. `trackers.quiet_release` says how a tracker's deferred
 * notifications go out when its window ends: `each` (one by one, as before) or `digest` (one
 * message per target). `deliveries.digest_id` links a delivery that went in a digest to the
 * digest's event (of type `quiet_hours_digest`); it is `in_digest` while that one is being sent,
 * then `sent` or `failed` with it.
 * SQLite has no `ADD COLUMN IF NOT EXISTS`: the statements are skipped once the columns exist.
 */
export default {
  id: '0023_quiet_digest',
  pending: (d) =>
    d.name === 'sqlite'
      ? `SELECT 2 - (SELECT COUNT(*) FROM pragma_table_info('trackers') WHERE name = 'quiet_release')
         - (SELECT COUNT(*) FROM pragma_table_info('deliveries') WHERE name = 'digest_id') AS n`
      : `SELECT 2 - COUNT(*) AS n FROM information_schema.columns WHERE table_schema = current_schema()
         AND ((table_name = 'trackers' AND column_name = 'quiet_release') OR (table_name = 'deliveries' ` +
        `AND column_name = 'digest_id'))`,
  up: (d) => {
    const ine = d.name === 'postgresql' ? 'IF NOT EXISTS ' : '';
    return [
      `ALTER TABLE trackers ADD COLUMN ${ine}quiet_release TEXT NOT NULL DEFAULT 'each'`,
      `ALTER TABLE deliveries ADD COLUMN ${ine}digest_id TEXT NULL`,
      'CREATE INDEX IF NOT EXISTS deliveries_digest ON deliveries (digest_id) WHERE digest_id IS NOT NULL',
    ];
  },
} satisfies Migration;
