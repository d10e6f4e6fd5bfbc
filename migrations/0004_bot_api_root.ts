import type { Migration } from './types.ts';

/** A bot may talk to a self-hosted Bot API server instead of the public one. */
export default {
  id: '0004_bot_api_root',
  up: () => ['ALTER TABLE bots ADD COLUMN api_root TEXT NULL'],
} satisfies Migration;
