import type { Migration } from './types.ts';

/**
 * The addresses each account logged in from successfully, with when it last did. While the
 * account is locked by failures from many addresses, these still get through (auth/login-limiter.ts):
 * kept in the database, so that a restart, or another replica, does not lock the real user out of
 * addresses he had used. Keyed by the account's normalized email, as the throttle counts it.
 */
export default {
  id: '0028_login_known_addresses',
  up: () => [
    `CREATE TABLE IF NOT EXISTS login_known_addresses (
      account TEXT NOT NULL,
      address TEXT NOT NULL,
      last_success_at TEXT NOT NULL,
      PRIMARY KEY (account, address)
    )`,
    'CREATE INDEX IF NOT EXISTS idx_login_known_addresses_last ON login_known_addresses (last_success_at)',
  ],
} satisfies Migration;
