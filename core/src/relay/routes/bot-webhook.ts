/**
 * `POST /api/bots/{webhook_path_id}/webhook`: updates pushed by a bot service in webhook mode. The
 * route is the same for every bot kind; the kind's driver checks that the request came from its
 * service and reads the update.
 */
import Type from 'typebox';
import type { App } from '../../http/server.ts';
import type { Core } from '../../core.ts';
import { notFound, unauthorized } from '../../http/problem.ts';
import type { BotWebhookRequest, MessagingBotDriver } from '../../plugin-api/index.ts';
import { botDriver, botDrivers, type BotRow } from '../bots/driver.ts';
import { botRuntime } from '../bots/runtime.ts';
import { greet, recordUpdate } from '../bots/updates.ts';

/** A driver's verdict on a request; a driver that throws refuses it. */
function verified(driver: MessagingBotDriver, req: BotWebhookRequest, secret: string): boolean {
  try { return driver.verifyWebhook(req, secret) === true; } catch { return false; }
}

export async function botWebhookRoutes(app: App, core: Core): Promise<void> {
  app.post('/api/bots/:id/webhook', {
    schema: { tags: ['relay'], security: [], params: Type.Object({ id: Type.String({ minLength: 1, maxLength: 128 }) }) },
  }, async (req) => {
    const secret = core.config.messagingWebhookSecret;
    // Without the shared secret no webhook can have been set, so nothing is accepted.
    if (!secret) throw unauthorized('The bot webhook secret is missing or wrong.');
    const inbound: BotWebhookRequest = {
      headers: req.headers as Record<string, string | undefined>,
      rawBody: (req as { rawBody?: Buffer }).rawBody ?? Buffer.alloc(0),
      body: req.body,
    };
    const bot = await core.db.get<BotRow>('SELECT * FROM bots WHERE webhook_path_id = ?', [(req.params as { id: string }).id]);
    const driver = bot ? botDriver(core, bot.kind) : undefined;
    // The request is authenticated before the path is reported on, so that path ids cannot be
    // probed: for an unknown path, 404 only when some bot kind's driver accepts the request.
    if (!bot || !driver) {
      if (!botDrivers(core).some((d) => verified(d, inbound, secret))) throw unauthorized('The bot webhook secret is missing or wrong.');
      throw notFound('Bot');
    }
    if (!verified(driver, inbound, secret)) throw unauthorized('The bot webhook secret is missing or wrong.');
    const update = driver.parseUpdate(req.body);
    if (update) {
      const chat = await recordUpdate(core, bot, update);
      // Answer at once; the greeting goes out in the background (shutdown waits for it).
      if (chat) botRuntime(core).track(greet(core, bot, chat, driver, botRuntime(core).messages));
    }
    return { ok: true };
  });
}
