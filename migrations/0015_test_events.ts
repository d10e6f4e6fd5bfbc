import type { Migration } from './types.ts';

/**
 * Test events: `event_log.test` marks an event an operator raised with "send a test event" (a
 * sample payload of the provider's event type, sent through the normal pipeline), so the log and
 * the rendered message can say it is a test. SQLite has no `ADD COLUMN IF NOT EXISTS`: skipped
 * once the column exists.
 */
export default {
  id: '0015_test_events',
  pending: (d) =>
    d.name === 'sqlite'
      ? `SELECT 1 - COUNT(*) AS n FROM pragma_table_info('event_log') WHERE name = 'test'`
      : 'SELECT 1 - COUNT(*) AS n FROM information_schema.columns WHERE table_schema = current_schema() AND ' +
        `table_name = 'event_log' AND column_name = 'test'`,
  up: (d) => [
    `ALTER TABLE event_log ADD COLUMN ${d.name === 'postgresql' ? 'IF NOT EXISTS ' : ''}test ${d.bool} NOT NULL ` +
      `DEFAULT ${d.f}`,
  ],
} satisfies Migration;
