/** Checking a bot token with the bot service and pointing the service at our webhook. */
import type { Core } from '../../core.ts';
import type { MessagingBotDriver } from '../../plugin-api/index.ts';
import { errorCode } from '../../plugin-api/index.ts';
import { BOT_CALL_TIMEOUT_MS, botWebhookUrl, deadline, driverContext, rememberToken, safeMessage } from './driver.ts';
import { botWebhookSecret, webhookKeyId } from './webhook-secret.ts';

export interface Connection {
  botId: string | null;
  username: string | null;
  /** `ok` when verified (and, in webhook mode, the webhook set); `pending` when the service was unreachable. */
  status: 'ok' | 'pending' | 'error' | 'auth_failed';
  detail: string | null;
  /**
   * Set when the webhook was registered: the fingerprint of the key its secret derives from (the bot's
   * `webhook_key_id`).
   */
  webhookKeyId?: string;
}

/**
 * Asks the bot service who the token belongs to and, in webhook mode, registers our webhook with
 * the bot's own secret (see webhook-secret.ts). Never throws: the outcome is in the returned status.
 */
export async function connectBot(
  core: Core,
  driver: MessagingBotDriver,
  bot: { kind?: string; token: string; mode: string; webhook_path_id: string; api_root?: string | null },
): Promise<Connection> {
  rememberToken(core, bot.token);
  const ctx = driverContext(core, bot);
  let me: { botId: string; username?: string };
  try {
    me = await driver.getMe(ctx, bot.token, deadline(BOT_CALL_TIMEOUT_MS));
  } catch (err) {
    if (errorCode(err) === 'AUTH_FAILED')
      return { botId: null, username: null, status: 'auth_failed', detail: 'the bot token was rejected' };
    return {
      botId: null,
      username: null,
      status: 'pending',
      detail: `the bot service could not be reached: ${safeMessage(core, err)}`,
    };
  }
  const found = { botId: me.botId, username: me.username ?? null };
  if (bot.mode !== 'webhook') return { ...found, status: 'ok', detail: null };
  const key = core.config.messagingWebhookSecret;
  if (!key) return { ...found, status: 'error', detail: 'webhook mode needs SERVICE_MESSAGING_WEBHOOK_SECRET' };
  const secret = botWebhookSecret(key, bot.webhook_path_id);
  core.logs.secrets.add(secret);
  try {
    await driver.setWebhook(
      ctx,
      bot.token,
      botWebhookUrl(core, bot.webhook_path_id),
      secret,
      deadline(BOT_CALL_TIMEOUT_MS),
    );
    return { ...found, status: 'ok', detail: null, webhookKeyId: webhookKeyId(key) };
  } catch (err) {
    if (errorCode(err) === 'AUTH_FAILED')
      return { ...found, status: 'auth_failed', detail: 'the bot token was rejected' };
    return { ...found, status: 'error', detail: `registering the webhook failed: ${safeMessage(core, err)}` };
  }
}
