import type { Core } from '../core.ts';
import type { Feature } from '../features.ts';
import { runDueActions } from './actions/runner.ts';
import { botRuntime, startBots } from './bots/index.ts';
import { createSmtpListener, type SmtpListener } from './inbound/smtp.ts';
import { webhookRoutes } from './inbound/webhooks.ts';
import { Relay } from './pipeline/relay.ts';
import { RETENTION_JOB, RETENTION_START_DELAY_MS, retentionJob } from './retention.ts';
import { registerRelayRoutes } from './routes/index.ts';

/** How often a replica aligns its provider instances with the database (PostgreSQL only). */
const RECONCILE_MS = 3000;
/** How often the leader registers again the webhooks of bots whose registration is behind. */
const BOT_WEBHOOKS_MS = 10 * 60_000;

const relays = new WeakMap<Core, { relay: Relay; stopBots?: () => Promise<void>; smtp?: SmtpListener }>();

export { applyRetention, RETENTION_BATCH } from './retention.ts';

export default {
  name: 'relay',
  async register(app, core) {
    // Built first (TLS files read, smtp-server loaded) so that unusable SERVICE_SMTP_* settings refuse the boot before
    // anything else starts; it listens in start().
    const smtp = await createSmtpListener(core, () => relay);
    const relay = new Relay(core);
    relays.set(core, { relay, smtp });
    core.services.set('relay', relay);
    if (smtp) core.services.set('smtp', smtp);
    await webhookRoutes(app, core, relay);
    await registerRelayRoutes(app, core);
    // At start too (a minute after, off the boot's path), unless a run with the same period completed within the day.
    let atStart = true;
    core.jobs.register(RETENTION_JOB, {
      interval: 'every 1 day',
      runOnStart: true,
      startDelayMs: RETENTION_START_DELAY_MS,
      run: async (signal) => {
        const first = atStart;
        atStart = false;
        await retentionJob(core, signal, first);
      },
    });
    core.jobs.register('actions', { interval: 30_000, run: () => runDueActions(core, relay) });
    core.jobs.register('deferred-release', {
      interval: 60_000,
      leaderOnly: false,
      run: async () => {
        await relay.dispatcher.releaseDue();
      },
    });
    // Webhook bots whose service was unreachable when their webhook was due are registered later.
    core.jobs.register('bot-webhooks', { interval: BOT_WEBHOOKS_MS, run: () => botRuntime(core).refreshWebhooks() });
  },
  async start(core) {
    const state = relays.get(core)!;
    if (core.db.dialect === 'sqlite') {
      // One process owns an SQLite file: whatever was mid-send when it last stopped goes back to the queue now.
      await core.db.run(`UPDATE deliveries SET status = 'queued', lease_until = NULL WHERE status = 'sending'`);
    }
    state.relay.dispatcher.start();
    await core.plugins.startProviders();
    // Several replicas share a PostgreSQL database: changes made through another replica reach this one's instances
    // within seconds.
    if (core.db.dialect === 'postgresql') core.plugins.watch(RECONCILE_MS);
    state.stopBots = await startBots(core);
    // After the providers: a message is accepted only once an instance can take it.
    await state.smtp?.start();
    // A dispatch thread (SERVICE_DISPATCH_THREAD) boots alongside the rest: ready once it takes deliveries.
    await (state.relay.dispatcher as { started?: () => Promise<void> }).started?.();
  },
  /**
   * At the signal: no more claims and no new sends; sends in flight get the grace period, then are cut off and
   * requeued.
   */
  async drain(core, grace) {
    const state = relays.get(core);
    // Messages in flight on the SMTP listener are recorded (and answered) before the database closes.
    await Promise.all([state?.smtp?.drain(grace), state?.relay.dispatcher.stop(grace)]);
  },
  async stop(core) {
    const state = relays.get(core);
    if (!state) return;
    await state.smtp?.close();
    await state.stopBots?.();
    await state.relay.dispatcher.stop();
  },
} satisfies Feature;
