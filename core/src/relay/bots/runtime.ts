/**
 * The messaging-bot runtime: one polling loop per polling bot on the scheduler leader, and the shared bits of the
 * webhook route.
 */

import { ConfigurationError } from '../../config/config.ts';
import type { Core } from '../../core.ts';
import type { MessagingBotDriver } from '../../plugin-api/index.ts';
import { connectBot } from './connect.ts';
import { type BotRow, botDriver, rememberToken, safeMessage } from './driver.ts';
import { BotMessages } from './messages.ts';
import { Poller } from './poller.ts';
import { webhookKeyId } from './webhook-secret.ts';

export class BotRuntime {
  readonly messages = new BotMessages();
  private pollers = new Map<string, Poller>();
  /** The `updated_at` of the record each loop started from (to notice edits made through another replica). */
  private versions = new Map<string, string>();
  private watchTimer?: NodeJS.Timeout;
  private background = new Set<Promise<unknown>>();
  private running = false;
  private core: Core;
  /** Backoff base of polling loops, in ms (tests shorten it). */
  backoffBaseMs = 1000;

  constructor(core: Core) {
    this.core = core;
  }

  /** Tracks a fire-and-forget task (a /start reply) so shutdown can wait for it. */
  track(p: Promise<unknown>): void {
    const q = p.catch(() => {}).finally(() => this.background.delete(q));
    this.background.add(q);
  }

  /**
   * Refuses boot when a webhook-mode bot exists without the webhook key, then starts polling (leader only) and
   * registers webhooks that are behind.
   */
  async start(): Promise<void> {
    const webhookBots = await this.core.db.get<{ n: number | string }>(
      `SELECT COUNT(*) AS n FROM bots WHERE mode = 'webhook'`,
    );
    if (Number(webhookBots?.n ?? 0) > 0 && !this.core.config.messagingWebhookSecret) {
      throw new ConfigurationError(
        'SERVICE_MESSAGING_WEBHOOK_SECRET is required because a messaging bot runs in webhook mode; set ' +
          'it, or switch the bot to polling',
      );
    }
    for (const b of await this.core.db.all<{ token: string }>('SELECT token FROM bots'))
      rememberToken(this.core, this.core.atRest.openLenient(b.token));
    this.running = true;
    this.core.jobs.onLeadershipChange((leader) => {
      void (leader ? this.startAll() : this.stopAll());
    });
    if (this.core.jobs.isLeader()) await this.startAll();
    if (this.core.db.dialect === 'postgresql') {
      this.watchTimer = setInterval(() => {
        void this.reconcile().catch((err) => this.core.logs.get('bots').warn({ err }, 'reconciling bot loops failed'));
      }, 3000);
      this.watchTimer.unref();
    }
  }

  /**
   * Several replicas: the leader aligns its loops with the bots table (bots added, edited or removed through another
   * replica).
   */
  async reconcile(): Promise<void> {
    if (!this.running || !this.core.jobs.isLeader()) return;
    const rows = await this.core.db.all<BotRow>('SELECT * FROM bots ORDER BY id');
    const polling = new Map(rows.filter((r) => r.mode === 'polling').map((r) => [r.id, r]));
    for (const id of [...this.pollers.keys()]) {
      const row = polling.get(id);
      if (!row || this.versions.get(id) !== row.updated_at) await this.removed(id);
    }
    for (const row of polling.values()) await this.startOne(row);
  }

  private async startAll(): Promise<void> {
    if (!this.running) return;
    const rows = await this.core.db.all<BotRow>('SELECT * FROM bots ORDER BY id');
    for (const row of rows) await this.startOne(row);
  }

  private async stopAll(): Promise<void> {
    const all = [...this.pollers.values()];
    this.pollers.clear();
    await Promise.all(all.map((p) => p.stop()));
  }

  /** Starts the loop of a polling bot (or retries a webhook bot's registration), from its stored record. */
  private async startOne(stored: BotRow): Promise<void> {
    if (!this.running || !this.core.jobs.isLeader() || this.pollers.has(stored.id)) return;
    const driver = botDriver(this.core, stored.kind);
    if (!driver || stored.status === 'auth_failed') return;
    const row = await this.opened(stored);
    if (!row) return;
    rememberToken(this.core, row.token);
    if (row.mode === 'polling') {
      this.pollers.set(row.id, new Poller(this.core, row, driver, this.messages, this.backoffBaseMs));
      this.versions.set(row.id, row.updated_at);
      return;
    }
    if (this.needsWebhook(row)) this.track(this.registerWebhook(row, driver));
  }

  /**
   * The record with its token opened. A token no key opens sets the bot to `auth_failed`, the status
   * the runtime leaves alone, with the reason: the bot waits for its owner to enter the token again.
   */
  private async opened(stored: BotRow): Promise<BotRow | undefined> {
    try {
      return { ...stored, token: this.core.atRest.open(stored.token, 'the bot token') };
    } catch (err) {
      await this.core.db
        .run('UPDATE bots SET status = ?, status_detail = ? WHERE id = ?', [
          'auth_failed',
          (err as Error).message,
          stored.id,
        ])
        .catch(() => {});
      this.core.logs.get('bots').error({ bot_id: stored.id }, (err as Error).message);
      return undefined;
    }
  }

  /**
   * Whether a webhook bot's registration is behind: never set (the service was unreachable), or
   * set with another secret than its own under the current key (the shared value before per-bot
   * secrets, a key since changed, a path id new from a restore). A rejected token waits for an edit.
   */
  private needsWebhook(row: BotRow): boolean {
    const key = this.core.config.messagingWebhookSecret;
    if (row.mode !== 'webhook' || row.status === 'auth_failed' || !key) return false;
    return row.status !== 'ok' || row.webhook_key_id !== webhookKeyId(key);
  }

  /** Registers the bot's webhook with its own secret and records the outcome, unless the record changed meanwhile. */
  private async registerWebhook(row: BotRow, driver: MessagingBotDriver): Promise<void> {
    const log = this.core.logs.get('bots');
    try {
      const c = await connectBot(this.core, driver, row);
      await this.core.db.run(
        `UPDATE bots SET status = ?, status_detail = ?, bot_id = COALESCE(bot_id, ?), username = COALESCE(?, username),
          webhook_key_id = COALESCE(?, webhook_key_id)
         WHERE id = ? AND updated_at = ? AND mode = 'webhook'`,
        [c.status, c.detail, c.botId, c.username, c.webhookKeyId ?? null, row.id, row.updated_at],
      );
      if (c.webhookKeyId && c.webhookKeyId !== row.webhook_key_id)
        log.info({ bot_id: row.id }, 'bot webhook registered with its own secret');
      else if (!c.webhookKeyId)
        log.warn(
          { bot_id: row.id, status: c.status, detail: c.detail },
          'registering the bot webhook failed; trying again later',
        );
    } catch (err) {
      log.warn({ bot_id: row.id, error: safeMessage(this.core, err) }, 'registering the bot webhook failed');
    }
  }

  /**
   * Leader: registers again every webhook bot whose registration is behind (see needsWebhook). Runs
   * at start for each bot and then as a periodic job, so a bot service that was unreachable is
   * caught up with, and the shared value stops being accepted as soon as a bot has its own secret.
   */
  async refreshWebhooks(): Promise<void> {
    if (!this.running || !this.core.jobs.isLeader()) return;
    for (const stored of await this.core.db.all<BotRow>(`SELECT * FROM bots WHERE mode = 'webhook' ORDER BY id`)) {
      const driver = botDriver(this.core, stored.kind);
      if (!driver || !this.needsWebhook(stored)) continue;
      const row = await this.opened(stored);
      if (row) await this.registerWebhook(row, driver);
    }
  }

  /** A bot record changed: its loop restarts with the new settings (or stops). */
  async changed(id: string): Promise<void> {
    await this.removed(id);
    const row = await this.core.db.get<BotRow>('SELECT * FROM bots WHERE id = ?', [id]);
    if (row && row.mode === 'polling') await this.startOne(row);
  }

  /** A bot record is going away or switching mode: stop its loop first. */
  async removed(id: string): Promise<void> {
    const p = this.pollers.get(id);
    if (!p) return;
    this.pollers.delete(id);
    await p.stop();
  }

  /** Whether a polling loop runs for a bot (tests, readiness). */
  polling(id: string): boolean {
    return this.pollers.has(id);
  }

  async stop(): Promise<void> {
    clearInterval(this.watchTimer);
    this.running = false;
    await this.stopAll();
    await Promise.allSettled([...this.background]);
  }
}

/** The runtime of this core, created on first use (routes may need it before startBots runs). */
export function botRuntime(core: Core): BotRuntime {
  let r = core.services.get('bots') as BotRuntime | undefined;
  if (!r) {
    r = new BotRuntime(core);
    core.services.set('bots', r);
  }
  return r;
}
