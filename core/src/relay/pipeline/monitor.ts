import type { Core } from '../../core.ts';
import { Database } from '../../db/database.ts';
import type { TrackerView } from '../../plugin-api/index.ts';
import type { ProviderRow } from '../../plugins/host.ts';
import {
  type SelfMonitoringSignal,
  type SelfMonitoringSignals,
  selfMonitoringOf,
} from '../../plugins/self-monitoring.ts';

/** Raises one self-monitoring signal for a user (through the receiving plugin's event type). */
export type SignalEmitter = <S extends SelfMonitoringSignal>(
  userId: string,
  signal: S,
  payload: SelfMonitoringSignals[S],
) => Promise<unknown>;

/** How long the time of a successful poll that changed nothing else waits in memory before it is written. */
const POLL_TIMES_FLUSH_MS = 60_000;
/** Providers per statement when those times are written. */
const POLL_TIMES_BATCH = 500;

interface SelfRow {
  id: string;
  poll_failure_threshold: number;
  deferred_backlog_threshold: number;
  target_failure_threshold: number;
  track_poll_failures: unknown;
  track_deferred_backlog: unknown;
  track_target_failures: unknown;
  backlog_latched: unknown;
}

/**
 * Self-monitoring counters, kept in the database (so every replica sees the same numbers):
 * consecutive poll failures per tracker, consecutive 5xx/network failures per target, and the
 * deferred-backlog latch, which re-arms when the user's pending deferred count falls below the threshold.
 */
export class SelfMonitor {
  private core: Core;
  private emit: SignalEmitter;
  /**
   * Provider id → the time of its last successful poll, not yet in its trackers' `last_poll_at`: a
   * poll that changes nothing else (no failure to clear, every tracker polled before) is not a write
   * commit of its own; these are written together, one statement a minute and at close.
   */
  private pollTimes = new Map<string, string>();
  private flushTimer?: NodeJS.Timeout;
  /**
   * The trackers (their ids) of a running provider instance (its row object, new at each start) found or left with
   * nothing to clear by its last successful poll: no failure counted, no error, polled before. Only this instance's
   * polls write those columns while it runs, so its next success with the same trackers needs no read to know that
   * only the time moves. A failure drops the entry; an instance started again (a change, another replica having led
   * meanwhile) has a new row and reads again.
   */
  private clean = new WeakMap<ProviderRow, string>();

  constructor(core: Core, emit: SignalEmitter) {
    this.core = core;
    this.emit = emit;
    // Runs before the connection closes (closers run last registered first).
    core.db.onClose(() => this.flushPollTimes());
  }

  /**
   * The time of a provider's last successful poll when this replica holds a newer one than its
   * trackers' stored `last_poll_at` (read through by whoever shows it), else undefined.
   */
  lastPollAt(providerId: string): string | undefined {
    return this.pollTimes.get(providerId);
  }

  /** Writes the poll times held in memory into the trackers' `last_poll_at`, one statement per batch of providers. */
  async flushPollTimes(): Promise<void> {
    clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    const written = new Map<string, string>();
    for (;;) {
      // Taken from the map as each statement is queued: a failure recorded meanwhile removed its
      // provider, and its own write, queued later, is the newer one.
      const part = [...this.pollTimes].filter(([id]) => !written.has(id)).slice(0, POLL_TIMES_BATCH);
      if (!part.length) break;
      for (const [id, at] of part) written.set(id, at);
      await this.core.db.run(
        `UPDATE trackers SET last_poll_at = CASE provider_id ${part.map(() => 'WHEN ? THEN ?').join(' ')} END ` +
          `WHERE provider_id IN (${part.map(() => '?').join(', ')})`,
        [...part.flat(), ...part.map(([id]) => id)],
      );
    }
    // A poll that succeeded while the statements ran keeps its newer time for the next write.
    for (const [id, at] of written) if (this.pollTimes.get(id) === at) this.pollTimes.delete(id);
  }

  private scheduleFlush(): void {
    if (this.flushTimer) return;
    this.flushTimer = setTimeout(() => {
      this.flushTimer = undefined;
      void this.flushPollTimes().catch((err) =>
        this.core.logs.get('relay').warn({ err }, 'writing the last poll times failed; retried with the next'),
      );
    }, POLL_TIMES_FLUSH_MS);
    this.flushTimer.unref();
  }

  /** The user's self-monitoring provider (thresholds, switches, latch); none without a receiving plugin. */
  private async self(userId: string): Promise<SelfRow | undefined> {
    const receiver = selfMonitoringOf(this.core);
    if (!receiver) return undefined;
    return this.core.db.get<SelfRow>('SELECT * FROM providers WHERE user_id = ? AND kind = ?', [userId, receiver.kind]);
  }

  async pollResult(provider: ProviderRow, trackers: TrackerView[], error?: unknown): Promise<void> {
    const db = this.core.db;
    const now = this.core.clock.now().toISOString();
    if (!error) {
      if (!trackers.length) return;
      const ids = trackers.map((t) => t.id).join(' ');
      // A failure to clear or a tracker never polled: a change of state, written now. Else only the time moves.
      const changes =
        this.clean.get(provider) === ids
          ? undefined
          : await db.get<{ id: string }>(
              'SELECT id FROM trackers WHERE provider_id = ? AND (consecutive_poll_failures <> 0 OR ' +
                'last_poll_error IS NOT NULL OR last_poll_at IS NULL) LIMIT 1',
              [provider.id],
            );
      if (!changes) {
        this.pollTimes.set(provider.id, now);
        this.clean.set(provider, ids);
        this.scheduleFlush();
        return;
      }
      this.pollTimes.delete(provider.id);
      this.clean.delete(provider);
      await db.run(
        'UPDATE trackers SET consecutive_poll_failures = 0, last_poll_at = ?, last_poll_error = NULL ' +
          'WHERE provider_id = ?',
        [now, provider.id],
      );
      this.clean.set(provider, ids);
      return;
    }
    // The failure's own time, written below, is the newer one.
    this.pollTimes.delete(provider.id);
    this.clean.delete(provider);
    this.core.metrics.pollFailures.inc({ provider_type: provider.kind });
    const message = (error as Error)?.message ?? String(error);
    const self = await this.self(provider.user_id);
    for (const t of trackers) {
      const row = await db.tx(async (q) => {
        await q.run(
          'UPDATE trackers SET consecutive_poll_failures = consecutive_poll_failures + 1, last_poll_at = ' +
            '?, last_poll_error = ? WHERE id = ?',
          [now, message.slice(0, 500), t.id],
        );
        return q.get<{ consecutive_poll_failures: number }>(
          'SELECT consecutive_poll_failures FROM trackers WHERE id = ?',
          [t.id],
        );
      });
      if (!self || !row || !Database.bool(self.track_poll_failures)) continue;
      if (row.consecutive_poll_failures >= self.poll_failure_threshold) {
        const reset = await db.run(
          'UPDATE trackers SET consecutive_poll_failures = 0 WHERE id = ? AND consecutive_poll_failures >= ?',
          [t.id, self.poll_failure_threshold],
        );
        if (reset)
          await this.emit(provider.user_id, 'pollFailures', {
            tracker_id: t.id,
            tracker_name: t.name,
            provider_id: provider.id,
            provider_name: provider.name,
            provider_kind: provider.kind,
            failures: row.consecutive_poll_failures,
            threshold: self.poll_failure_threshold,
            last_error: message.slice(0, 500),
          });
      }
    }
  }

  /** After a failed send that was a 5xx or a network failure. */
  async targetFailed(
    userId: string,
    target: { id: string; name: string; kind: string },
    message: string,
    statusCode: number,
  ): Promise<void> {
    const db = this.core.db;
    await db.run('UPDATE targets SET consecutive_failures = consecutive_failures + 1, last_error = ? WHERE id = ?', [
      message.slice(0, 500),
      target.id,
    ]);
    const self = await this.self(userId);
    if (!self || !Database.bool(self.track_target_failures)) return;
    const row = await db.get<{ consecutive_failures: number }>(
      'SELECT consecutive_failures FROM targets WHERE id = ?',
      [target.id],
    );
    if (!row || row.consecutive_failures < self.target_failure_threshold) return;
    const reset = await db.run(
      'UPDATE targets SET consecutive_failures = 0 WHERE id = ? AND consecutive_failures >= ?',
      [target.id, self.target_failure_threshold],
    );
    if (reset)
      await this.emit(userId, 'targetFailures', {
        target_id: target.id,
        target_name: target.name,
        target_kind: target.kind,
        failures: row.consecutive_failures,
        threshold: self.target_failure_threshold,
        last_error: message.slice(0, 500),
        status_code: statusCode,
      });
  }

  async targetSucceeded(targetId: string): Promise<void> {
    await this.core.db.run(
      'UPDATE targets SET consecutive_failures = 0, last_error = NULL WHERE id = ? AND consecutive_failures <> 0',
      [targetId],
    );
  }

  /** Backlog latch: raise once when the count reaches the threshold; re-arm when it falls below. */
  async checkBacklog(userId: string): Promise<void> {
    const self = await this.self(userId);
    if (!self) return;
    const n = Number(
      (await this.core.db.get<{ n: number }>('SELECT COUNT(*) AS n FROM deferred_dispatch WHERE user_id = ?', [userId]))
        ?.n ?? 0,
    );
    if (n >= self.deferred_backlog_threshold) {
      if (Database.bool(self.backlog_latched)) return;
      const won = await this.core.db.run(
        'UPDATE providers SET backlog_latched = ? WHERE id = ? AND backlog_latched = ?',
        [true, self.id, false],
      );
      if (won && Database.bool(self.track_deferred_backlog))
        await this.emit(userId, 'deferredBacklog', { pending: n, threshold: self.deferred_backlog_threshold });
    } else if (Database.bool(self.backlog_latched)) {
      await this.core.db.run('UPDATE providers SET backlog_latched = ? WHERE id = ?', [false, self.id]);
    }
  }
}
