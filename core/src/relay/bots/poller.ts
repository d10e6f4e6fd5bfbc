/** Long polling of one bot: fetch updates, record them, remember the offset, back off on failure. */
import type { Core } from '../../core.ts';
import type { MessagingBotDriver } from '../../plugin-api/index.ts';
import { errorCode } from '../../plugin-api/index.ts';
import { BOT_CALL_TIMEOUT_MS, type BotRow, deadline, driverContext, safeMessage } from './driver.ts';
import type { BotMessages } from './messages.ts';
import { greet, recordUpdate } from './updates.ts';

/** Seconds the bot service holds one long-polling request (the driver's getUpdates) open. */
export const LONG_POLL_SECONDS = 25;
const MAX_BACKOFF_MS = 60_000;

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const t = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}

/**
 * One loop per polling bot, on the scheduler leader only. Updates are processed before the offset
 * that confirms them is stored, so a crash replays them (at least once); recording is idempotent.
 */
export class Poller {
  readonly botId: string;
  private abort = new AbortController();
  private done: Promise<void>;
  private status = '';
  private core: Core;
  private driver: MessagingBotDriver;
  private messages: BotMessages;
  private bot: BotRow;
  /** Backoff base; tests shorten it. */
  private backoffBaseMs: number;

  constructor(core: Core, bot: BotRow, driver: MessagingBotDriver, messages: BotMessages, backoffBaseMs = 1000) {
    this.core = core;
    this.bot = bot;
    this.driver = driver;
    this.messages = messages;
    this.botId = bot.id;
    this.backoffBaseMs = backoffBaseMs;
    this.done = this.run().catch((err) =>
      core.logs.get('bots').error({ bot_id: bot.id, error: safeMessage(core, err) }, 'bot polling loop crashed'),
    );
  }

  private async setStatus(status: string, detail: string | null): Promise<void> {
    if (status === this.status) return;
    this.status = status;
    await this.core.db
      .run('UPDATE bots SET status = ?, status_detail = ? WHERE id = ?', [status, detail, this.bot.id])
      .catch(() => {});
  }

  private async run(): Promise<void> {
    const { core, driver, bot } = this;
    const signal = this.abort.signal;
    const ctx = driverContext(core, bot);
    const log = core.logs.get('bots');
    let offset = Number(bot.update_offset) || 0;
    let failures = 0;
    // A service may refuse polling while a webhook is set (left over from webhook mode).
    await driver.deleteWebhook(ctx, bot.token, deadline(BOT_CALL_TIMEOUT_MS, signal)).catch(() => {});
    while (!signal.aborted) {
      let stored = offset;
      try {
        const updates = await driver.getUpdates(ctx, bot.token, offset, LONG_POLL_SECONDS, signal);
        if (signal.aborted) break;
        try {
          for (const raw of updates) {
            const parsed = driver.parseUpdate(raw);
            if (parsed) {
              const greetChat = await recordUpdate(core, bot, parsed);
              if (greetChat) await greet(core, bot, greetChat, driver, this.messages, signal);
            }
            // The driver says what the offset means; a value that is not a whole number keeps the old one.
            const next = driver.nextOffset(raw, offset);
            if (Number.isSafeInteger(next)) offset = next;
          }
        } finally {
          if (offset !== stored) {
            await core.db.run('UPDATE bots SET update_offset = ? WHERE id = ?', [offset, bot.id]);
            stored = offset;
          }
        }
        if (failures > 0) log.info({ bot_id: bot.id }, 'bot polling works again');
        failures = 0;
        await this.setStatus('running', null);
      } catch (err) {
        if (signal.aborted) break;
        const detail = safeMessage(core, err);
        if (errorCode(err) === 'AUTH_FAILED') {
          // Hammering a revoked token helps nobody: wait for the owner to change it.
          await this.setStatus('auth_failed', 'the bot token was rejected');
          log.warn({ bot_id: bot.id }, 'bot token rejected; polling stops until the token changes');
          return;
        }
        failures++;
        if (failures === 1) log.warn({ bot_id: bot.id, error: detail }, 'bot polling failed; retrying with backoff');
        await this.setStatus('error', detail);
        const delay =
          Math.min(MAX_BACKOFF_MS, this.backoffBaseMs * 2 ** Math.min(failures - 1, 10)) * (0.8 + Math.random() * 0.4);
        await sleep(delay, signal);
      }
    }
  }

  /** Stops the loop; an open long poll is aborted, so this returns promptly. */
  async stop(): Promise<void> {
    this.abort.abort();
    await this.done;
  }
}
