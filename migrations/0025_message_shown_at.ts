import type { Migration } from './types.ts';

/**
 * When a message was last brought back into view by flipping alternatives (`shown_at`, NULL until
 * then). Flipping back to an earlier alternative shows, at each step below it, the reply that was
 * on screen there last (else the newest), as the conversation was left, not the newest branch.
 */
export default {
  id: '0025_message_shown_at',
  up: (d) => [
    `ALTER TABLE chat_messages ADD COLUMN ${d.name === 'postgresql' ? 'IF NOT EXISTS ' : ''}shown_at TEXT NULL`,
  ],
} satisfies Migration;
