import type { Migration } from './types.ts';

/**
 * Web Push (the `webpush` target kind): the service's VAPID key pair, one row made on first need
 * (`id` 1; concurrent replicas insert with ON CONFLICT DO NOTHING and read the winner), its private
 * key sealed at rest; and the browsers each user subscribed in the web client. An endpoint is
 * one browser's push resource: it belongs to one user at a time. `auth` (the browser's auth
 * secret, a credential) is sealed at rest; `p256dh` is the browser's public key.
 */
export default {
  id: '0027_webpush',
  up: () => [
    `CREATE TABLE IF NOT EXISTS webpush_vapid (
      id INTEGER PRIMARY KEY CHECK (id = 1),
      public_key TEXT NOT NULL,
      private_key TEXT NOT NULL,
      created_at TEXT NOT NULL
    )`,
    `CREATE TABLE IF NOT EXISTS webpush_subscriptions (
      id TEXT PRIMARY KEY,
      user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      endpoint TEXT NOT NULL UNIQUE,
      p256dh TEXT NOT NULL,
      auth TEXT NOT NULL,
      label TEXT NOT NULL DEFAULT '',
      created_at TEXT NOT NULL,
      last_success_at TEXT NULL
    )`,
    `CREATE INDEX IF NOT EXISTS webpush_subscriptions_user ON webpush_subscriptions (user_id)`,
  ],
} satisfies Migration;
