/**
 * @herald/target-telegram: delivers notifications to Telegram chats, channels and forum topics
 * through a bot, and drives the bots themselves (webhook, long polling, chat discovery).
 */
import { defineTarget, PLUGIN_API_VERSION } from '@herald/plugin-api';
import enLocale from '../locales/en.json' with { type: 'json' };
import ruLocale from '../locales/ru.json' with { type: 'json' };
import { configSchema } from './config.ts';
import { createTelegramBotDriver } from './driver.ts';
import { createTelegramTarget, MAX_MESSAGE_LENGTH } from './target.ts';

export type { TelegramTargetConfig } from './config.ts';
export { configSchema } from './config.ts';
export { createTelegramBotDriver, parseUpdate } from './driver.ts';
export { splitHtml, visibleLength } from './html-split.ts';

export default defineTarget({
  manifest: {
    id: 'telegram',
    kind: 'target',
    apiVersion: PLUGIN_API_VERSION,
    displayName: 'Telegram',
    locales: { en: enLocale, ru: ruLocale },
    description: 'Sends notifications to a Telegram chat, channel or forum topic through a bot.',
    configSchema,
    // The plugin splits long messages itself (Telegram counts visible characters, not markup).
    // About one message a second to a chat, short bursts tolerated.
    limits: { maxMessageLength: MAX_MESSAGE_LENGTH, formats: ['html'], overflow: 'plugin', ratePerSecond: 1, burst: 3 },
  },
  create: (ctx) => createTelegramTarget(ctx),
  botDriver: createTelegramBotDriver(),
});
