import type { Migration } from './types.ts';

/**
 * Each webhook-mode bot proves its deliveries with its own secret, derived from
 * SERVICE_MESSAGING_WEBHOOK_SECRET and its webhook path, no longer with that shared value itself.
 * `webhook_key_id` says what the bot service was last given: NULL nothing (or not known), `shared`
 * the shared value (webhooks registered before this migration), else the fingerprint of the key
 * its own secret was derived from. Bots marked `shared` are registered again with their own secret
 * when the service starts, and until that succeeds deliveries carrying the shared value are still
 * accepted for them. Skipped when the column is already there.
 */
export default {
  id: '0007_bot_webhook_secret',
  pending: (d) =>
    d.name === 'sqlite'
      ? `SELECT 1 - COUNT(*) AS n FROM pragma_table_info('bots') WHERE name = 'webhook_key_id'`
      : 'SELECT 1 - COUNT(*) AS n FROM information_schema.columns WHERE table_schema = current_schema() AND ' +
        `table_name = 'bots' AND column_name = 'webhook_key_id'`,
  up: () => [
    'ALTER TABLE bots ADD COLUMN webhook_key_id TEXT NULL',
    `UPDATE bots SET webhook_key_id = 'shared' WHERE mode = 'webhook'`,
  ],
} satisfies Migration;
