import type { Migration } from './types.ts';

/**
 * Chat controls. Messages form a tree: `parent_id` is the message a message follows (NULL for a
 * chat's first), siblings are alternatives (a regenerated reply, an edited question), and `active`
 * marks the branch shown and sent to the model. Assistant messages record the `model` that wrote
 * them and their `attachments` (JSON, e.g. generated reports). Chats may choose a `model`.
 * `ai_usage_models` counts messages and tokens per user, day and model for the admin usage view.
 * Earlier messages become one chain: each follows the one before it in its chat.
 */
export default {
  id: '0020_chat_controls',
  up: (d) => {
    const ine = d.name === 'postgresql' ? 'IF NOT EXISTS ' : '';
    return [
      `ALTER TABLE chat_messages ADD COLUMN ${ine}parent_id TEXT NULL`,
      `ALTER TABLE chat_messages ADD COLUMN ${ine}active ${d.bool} NOT NULL DEFAULT ${d.t}`,
      `ALTER TABLE chat_messages ADD COLUMN ${ine}model TEXT NULL`,
      `ALTER TABLE chat_messages ADD COLUMN ${ine}attachments ${d.json} NULL`,
      `ALTER TABLE chats ADD COLUMN ${ine}model TEXT NULL`,
      'UPDATE chat_messages SET parent_id = (SELECT p.id FROM chat_messages p WHERE p.chat_id = ' +
        'chat_messages.chat_id AND p.id < chat_messages.id ORDER BY p.id DESC LIMIT 1) WHERE parent_id IS NULL',
      `CREATE INDEX IF NOT EXISTS chat_messages_parent ON chat_messages (chat_id, parent_id)`,
      `CREATE TABLE IF NOT EXISTS ai_usage_models (
        user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        day TEXT NOT NULL,
        model TEXT NOT NULL,
        messages INTEGER NOT NULL DEFAULT 0,
        tokens INTEGER NOT NULL DEFAULT 0,
        updated_at TEXT NOT NULL,
        PRIMARY KEY (user_id, day, model)
      )`,
      `CREATE INDEX IF NOT EXISTS ai_usage_models_day ON ai_usage_models (day)`,
    ];
  },
} satisfies Migration;
