import type { Migration } from './types.ts';

/**
 * A per-user storage limit for the assistant's documents, memory entries and reports, in MB
 * (1,000,000 bytes): `NULL` follows SERVICE_USER_STORAGE_MB, a number is an administrator's
 * override for that user (assistant/storage.ts says what is counted).
 */
export default {
  id: '0030_user_storage_limit',
  // SQLite cannot guard ADD COLUMN: skipped when the column is already there.
  pending: (d) =>
    d.name === 'sqlite'
      ? `SELECT 1 - COUNT(*) AS n FROM pragma_table_info('users') WHERE name = 'max_storage_mb'`
      : 'SELECT 1 AS n',
  up: (d) => [
    d.name === 'sqlite'
      ? 'ALTER TABLE users ADD COLUMN max_storage_mb INTEGER NULL'
      : 'ALTER TABLE users ADD COLUMN IF NOT EXISTS max_storage_mb INTEGER NULL',
  ],
} satisfies Migration;
