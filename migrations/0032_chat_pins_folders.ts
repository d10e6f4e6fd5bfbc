import type { Migration } from './types.ts';

/**
 * Chats can be pinned (listed first) and put in a folder (a short name of the user's choosing, at most 100
 * characters, NULL for none).
 */
export default {
  id: '0032_chat_pins_folders',
  // SQLite cannot guard ADD COLUMN: skipped when the columns are already there.
  pending: (d) =>
    d.name === 'sqlite'
      ? `SELECT 1 - COUNT(*) AS n FROM pragma_table_info('chats') WHERE name = 'pinned'`
      : 'SELECT 1 AS n',
  up: (d) =>
    d.name === 'sqlite'
      ? [
          `ALTER TABLE chats ADD COLUMN pinned ${d.bool} NOT NULL DEFAULT ${d.f}`,
          'ALTER TABLE chats ADD COLUMN folder TEXT NULL',
        ]
      : [
          `ALTER TABLE chats ADD COLUMN IF NOT EXISTS pinned ${d.bool} NOT NULL DEFAULT ${d.f}`,
          'ALTER TABLE chats ADD COLUMN IF NOT EXISTS folder TEXT NULL',
        ],
} satisfies Migration;
