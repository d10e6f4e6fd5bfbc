/** Configuration of a chat incoming-webhook target (Discord, Slack or Mattermost). */

import type { Static } from '@herald/plugin-api';
import { Secret, Type } from '@herald/plugin-api';

export const CHAT_FORMATS = ['discord', 'slack', 'mattermost'] as const;

export const configSchema = Type.Object({
  format: Type.Union([Type.Literal('discord'), Type.Literal('slack'), Type.Literal('mattermost')], {
    description: 'Which service the webhook URL belongs to',
  }),
  // The URL itself is the credential: whoever has it can post to the channel.
  url: Secret({
    pattern: '^https?://[^/?#]+/',
    description: 'Incoming-webhook URL copied from the service (kept secret)',
  }),
  username: Type.Optional(
    Type.String({ minLength: 1, maxLength: 80, description: 'Display name override for the posts' }),
  ),
  icon_url: Type.Optional(
    Type.String({ pattern: '^https?://', description: 'Avatar / icon URL override for the posts' }),
  ),
  thread_id: Type.Optional(
    Type.String({
      pattern: '^[0-9]{1,20}$',
      description: 'Discord only: post into this thread of the webhook channel',
    }),
  ),
  channel: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 64,
      description: 'Mattermost only: channel name (or @username) overriding the webhook default',
    }),
  ),
});

export type ChatWebhookConfig = Static<typeof configSchema>;
export type ChatFormat = ChatWebhookConfig['format'];
