import type { Migration } from './types.ts';

/**
 * The payload log covers the messaging-bot webhook route too: a row names either a provider or a
 * bot (`bot_id`), so `provider_id` becomes optional. SQLite cannot drop a NOT NULL constraint in
 * place, so its table is rebuilt with the rows copied over; PostgreSQL alters it. Skipped once
 * `bot_id` exists.
 */
const COLUMNS =
  'id, user_id, provider_id, received_at, status_code, error_message, payload_excerpt, source_ip, event_ids';

export default {
  id: '0009_bot_webhook_log',
  pending: (d) =>
    d.name === 'sqlite'
      ? `SELECT 1 - COUNT(*) AS n FROM pragma_table_info('webhook_payload_log') WHERE name = 'bot_id'`
      : 'SELECT 1 - COUNT(*) AS n FROM information_schema.columns WHERE table_schema = current_schema() AND ' +
        `table_name = 'webhook_payload_log' AND column_name = 'bot_id'`,
  up: (d) =>
    d.name === 'sqlite'
      ? [
          `CREATE TABLE webhook_payload_log_0009 (
          id TEXT PRIMARY KEY,
          user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
          provider_id TEXT NULL REFERENCES providers(id) ON DELETE CASCADE,
          bot_id TEXT NULL REFERENCES bots(id) ON DELETE CASCADE,
          received_at TEXT NOT NULL,
          status_code INTEGER NOT NULL,
          error_message TEXT NULL,
          payload_excerpt TEXT NULL,
          source_ip TEXT NULL,
          event_ids ${d.json} NULL
        )`,
          `INSERT INTO webhook_payload_log_0009 (${COLUMNS}) SELECT ${COLUMNS} FROM webhook_payload_log`,
          'DROP TABLE webhook_payload_log',
          'ALTER TABLE webhook_payload_log_0009 RENAME TO webhook_payload_log',
          'CREATE INDEX IF NOT EXISTS webhook_log_provider ON webhook_payload_log (provider_id, id)',
          'CREATE INDEX IF NOT EXISTS webhook_log_bot ON webhook_payload_log (bot_id, id)',
        ]
      : [
          'ALTER TABLE webhook_payload_log ALTER COLUMN provider_id DROP NOT NULL',
          'ALTER TABLE webhook_payload_log ADD COLUMN IF NOT EXISTS bot_id TEXT NULL REFERENCES bots(id) ON ' +
            'DELETE CASCADE',
          'CREATE INDEX IF NOT EXISTS webhook_log_bot ON webhook_payload_log (bot_id, id)',
        ],
} satisfies Migration;
