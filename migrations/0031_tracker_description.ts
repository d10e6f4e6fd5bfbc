import type { Migration } from './types.ts';

/** A tracker's description: the operator's own note on what it is for (at most 500 characters, NULL for none). */
export default {
  id: '0031_tracker_description',
  // SQLite cannot guard ADD COLUMN: skipped when the column is already there.
  pending: (d) =>
    d.name === 'sqlite'
      ? `SELECT 1 - COUNT(*) AS n FROM pragma_table_info('trackers') WHERE name = 'description'`
      : 'SELECT 1 AS n',
  up: (d) => [
    d.name === 'sqlite'
      ? 'ALTER TABLE trackers ADD COLUMN description TEXT NULL'
      : 'ALTER TABLE trackers ADD COLUMN IF NOT EXISTS description TEXT NULL',
  ],
} satisfies Migration;
