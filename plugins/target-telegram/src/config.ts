/** Configuration of a Telegram target: which bot posts, where, and how. */

import type { Static } from '@herald/plugin-api';
import { Type } from '@herald/plugin-api';
import { DEFAULT_API_ROOT } from './telegram-api.ts';

export const configSchema = Type.Object({
  bot_id: Type.String({ minLength: 1, description: 'Id of the Telegram bot record that sends the messages' }),
  chat_id: Type.String({
    pattern: '^(-?[0-9]{1,20}|@[A-Za-z][A-Za-z0-9_]{3,31})$',
    description: 'Numeric chat id (groups are negative, e.g. -1001234567890) or @channelusername',
  }),
  message_thread_id: Type.Optional(Type.Integer({ minimum: 1, description: 'Forum topic to post in' })),
  silent: Type.Optional(Type.Boolean({ default: false, description: 'Deliver without a notification sound' })),
  disable_link_preview: Type.Optional(Type.Boolean({ default: false, description: 'Do not show link previews' })),
  api_root: Type.Optional(
    Type.String({
      default: DEFAULT_API_ROOT,
      pattern: '^https?://[^/?#]+(/[^?#]*)?$',
      description: 'Bot API server; change only for a self-hosted telegram-bot-api server',
    }),
  ),
});

export type TelegramTargetConfig = Static<typeof configSchema>;
