import type { Migration } from './types.ts';

/**
 * Secrets at rest: one value sealed with the key this database's secrets are sealed with, so a
 * boot with another SERVICE_SECRET_KEY is refused before it reads or writes any secret. Migrations
 * do not hold the key: the boot step after them (`core/src/secrets/seal-stored.ts`) writes the
 * value and seals the secrets stored in clear by earlier versions.
 */
export default {
  id: '0010_secret_key_check',
  up: () => [
    `CREATE TABLE IF NOT EXISTS secret_key_check (
      id INTEGER PRIMARY KEY CHECK (id = 1),
      sealed TEXT NOT NULL,
      updated_at TEXT NOT NULL
    )`,
  ],
} satisfies Migration;
