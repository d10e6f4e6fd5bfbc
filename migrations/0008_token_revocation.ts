import type { Migration } from './types.ts';

/**
 * Revocable access tokens. `users.token_version` is written into every token issued; raising it
 * (password, role or activation change) retires every earlier token of that user at once.
 * `revoked_tokens` lists single tokens signed out before they expire, by token id (`jti`), until
 * their `expires_at`; the daily retention job deletes the rows past it.
 */
export default {
  id: '0008_token_revocation',
  // SQLite cannot guard ADD COLUMN: skipped when the column is already there.
  pending: (d) =>
    d.name === 'sqlite'
      ? `SELECT 1 - COUNT(*) AS n FROM pragma_table_info('users') WHERE name = 'token_version'`
      : 'SELECT 1 AS n',
  up: (d) => [
    `ALTER TABLE users ADD COLUMN ${d.name === 'postgresql' ? 'IF NOT EXISTS ' : ''}token_version INTEGER NOT ` +
      'NULL DEFAULT 0',
    `CREATE TABLE IF NOT EXISTS revoked_tokens (
      jti TEXT PRIMARY KEY,
      user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      expires_at TEXT NOT NULL
    )`,
    'CREATE INDEX IF NOT EXISTS idx_revoked_tokens_expires ON revoked_tokens (expires_at)',
  ],
} satisfies Migration;
