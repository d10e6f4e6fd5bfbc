/** `POST /api/bots/{webhook_path_id}/webhook`: updates pushed by the bot service in webhook mode. */
import crypto from 'node:crypto';
import Type from 'typebox';
import type { App } from '../../http/server.ts';
import type { Core } from '../../core.ts';
import { notFound, unauthorized } from '../../http/problem.ts';
import { botDriver, type BotRow } from '../bots/driver.ts';
import { botRuntime } from '../bots/runtime.ts';
import { greet, recordUpdate } from '../bots/updates.ts';

/** Telegram's header carrying the `secret_token` given to setWebhook. */
export const BOT_SECRET_HEADER = 'x-telegram-bot-api-secret-token';

/** Constant-time comparison that does not leak the length either (both sides hashed first). */
function sameSecret(given: string, expected: string): boolean {
  const a = crypto.createHash('sha256').update(given).digest();
  const b = crypto.createHash('sha256').update(expected).digest();
  return crypto.timingSafeEqual(a, b);
}

export async function botWebhookRoutes(app: App, core: Core): Promise<void> {
  app.post('/api/bots/:id/webhook', {
    schema: { tags: ['relay'], security: [], params: Type.Object({ id: Type.String({ minLength: 1, maxLength: 128 }) }) },
  }, async (req) => {
    const secret = core.config.messagingWebhookSecret;
    const given = req.headers[BOT_SECRET_HEADER];
    // The secret is checked before the path so that path ids cannot be probed.
    if (!secret || typeof given !== 'string' || !sameSecret(given, secret)) {
      throw unauthorized('The bot webhook secret is missing or wrong.');
    }
    const bot = await core.db.get<BotRow>('SELECT * FROM bots WHERE webhook_path_id = ?', [(req.params as { id: string }).id]);
    if (!bot) throw notFound('Bot');
    const driver = botDriver(core, bot.kind);
    if (!driver) throw notFound('Bot');
    const update = driver.parseUpdate(req.body);
    if (update) {
      const chat = await recordUpdate(core, bot, update);
      // Answer at once; the greeting goes out in the background (shutdown waits for it).
      if (chat) botRuntime(core).track(greet(core, bot, chat, driver, botRuntime(core).messages));
    }
    return { ok: true };
  });
}
