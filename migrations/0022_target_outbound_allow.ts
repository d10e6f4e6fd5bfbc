import type { Migration } from './types.ts';

/**
 * `targets.outbound_allow`: as `providers.outbound_allow` (0014), for one target's plugin instance.
 * SQLite has no `ADD COLUMN IF NOT EXISTS`: skipped once the column exists.
 */
export default {
  id: '0022_target_outbound_allow',
  pending: (d) =>
    d.name === 'sqlite'
      ? `SELECT 1 - COUNT(*) AS n FROM pragma_table_info('targets') WHERE name = 'outbound_allow'`
      : 'SELECT 1 - COUNT(*) AS n FROM information_schema.columns WHERE table_schema = current_schema() AND ' +
        `table_name = 'targets' AND column_name = 'outbound_allow'`,
  up: (d) => [
    `ALTER TABLE targets ADD COLUMN ${d.name === 'postgresql' ? 'IF NOT EXISTS ' : ''}outbound_allow ${d.json} NULL`,
  ],
} satisfies Migration;
