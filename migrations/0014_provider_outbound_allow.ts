import type { Migration } from './types.ts';

/**
 * `providers.outbound_allow`: private ranges (CIDRs) or host names an administrator lets this one
 * provider's plugin instance reach, on top of the service-wide `SERVICE_OUTBOUND_ALLOW_CIDRS`
 * (a JSON array; NULL is none). SQLite has no `ADD COLUMN IF NOT EXISTS`: skipped once the column exists.
 */
export default {
  id: '0014_provider_outbound_allow',
  pending: (d) =>
    d.name === 'sqlite'
      ? `SELECT 1 - COUNT(*) AS n FROM pragma_table_info('providers') WHERE name = 'outbound_allow'`
      : 'SELECT 1 - COUNT(*) AS n FROM information_schema.columns WHERE table_schema = current_schema() AND ' +
        `table_name = 'providers' AND column_name = 'outbound_allow'`,
  up: (d) => [
    `ALTER TABLE providers ADD COLUMN ${d.name === 'postgresql' ? 'IF NOT EXISTS ' : ''}outbound_allow ${d.json} NULL`,
  ],
} satisfies Migration;
