import { purgeRevokedTokens } from '../auth/revocation.ts';
import type { Core } from '../core.ts';
import type { Feature } from '../features.ts';
import { runDueActions } from './actions/runner.ts';
import { botRuntime, startBots } from './bots/index.ts';
import { createSmtpListener, type SmtpListener } from './inbound/smtp.ts';
import { webhookRoutes } from './inbound/webhooks.ts';
import { Relay } from './pipeline/relay.ts';
import { registerRelayRoutes } from './routes/index.ts';

/** How often a replica aligns its provider instances with the database (PostgreSQL only). */
const RECONCILE_MS = 3000;
/** How often the leader registers again the webhooks of bots whose registration is behind. */
const BOT_WEBHOOKS_MS = 10 * 60_000;

const relays = new WeakMap<Core, { relay: Relay; stopBots?: () => Promise<void>; smtp?: SmtpListener }>();

/**
 * Deletes event_log rows older than the retention period (0 keeps everything), with what hangs off
 * them, and whatever has expired whatever the period: sign-outs of tokens past their expiry.
 */
/**
 * Rows deleted per statement by the retention. One statement for a year of a busy lab's events (half a million
 * events, their deliveries and history by cascade) held the database for 22 s: SQLite's single connection served
 * nothing else, webhooks were refused as locked, and deliveries whose settle could not be written were sent again
 * (scripts/bench/RESULTS.md, issue 27 item 7). In batches, the relay's statements run between them.
 */
export const RETENTION_BATCH = 500;

/** Deletes the rows of `table` that match `where`, RETENTION_BATCH at a time, letting other work run in between. */
async function deleteInBatches(core: Core, table: string, where: string, params: string[]): Promise<number> {
  let deleted = 0;
  for (;;) {
    const ids = await core.db.all<{ id: string }>(`SELECT id FROM ${table} WHERE ${where} LIMIT ${RETENTION_BATCH}`, [
      ...params,
    ]);
    if (!ids.length) return deleted;
    deleted += await core.db.run(
      `DELETE FROM ${table} WHERE id IN (${ids.map(() => '?').join(', ')})`,
      ids.map((r) => r.id),
    );
    if (ids.length < RETENTION_BATCH) return deleted;
    // A turn of the event loop: webhooks, claims and settles queued on the connection go first.
    await new Promise((resolve) => setImmediate(resolve));
  }
}

export async function applyRetention(core: Core): Promise<number> {
  await purgeRevokedTokens(core.db, core.clock.now());
  const days = core.config.eventLogRetentionDays;
  if (days <= 0) return 0;
  const cutoff = new Date(core.clock.now().getTime() - days * 86_400_000).toISOString();
  const done = `created_at < ? AND dispatch_status IN ('dispatched', 'dropped', 'failed', 'partial')`;
  // A replay key outlives its event when the period is shorter than the key's lifetime: it moves to plugin_store, where
  // the plugin's check still finds it.
  await core.db.run(
    `INSERT INTO plugin_store (instance_id, key, value, expires_at)
    SELECT provider_id, replay_key, '1', replay_expires_at FROM event_log WHERE ${done} AND replay_key IS NOT NULL AND
    provider_id IS NOT NULL AND replay_expires_at > ?
    ON CONFLICT DO NOTHING`,
    [cutoff, core.clock.now().toISOString()],
  );
  const n = await deleteInBatches(core, 'event_log', done, [cutoff]);
  await core.db.run('DELETE FROM webhook_payload_log WHERE received_at < ?', [cutoff]);
  await core.db.run('DELETE FROM plugin_store WHERE expires_at IS NOT NULL AND expires_at < ?', [
    core.clock.now().toISOString(),
  ]);
  await core.db.run('DELETE FROM job_runs WHERE started_at < ?', [cutoff]);
  // Messages not followed up within the period are not edited any more (a later event posts anew).
  await core.db.run('DELETE FROM message_threads WHERE updated_at < ?', [cutoff]);
  return n;
}

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
    core.jobs.register('event-log-retention', {
      interval: 'every 1 day',
      runOnStart: true,
      run: async () => {
        await applyRetention(core);
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
