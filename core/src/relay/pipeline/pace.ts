/**
 * Per-target pacing for targets that declare `limits.ratePerSecond`: a generic cell rate algorithm
 * (a token bucket of `burst` sends refilled at `ratePerSecond`) whose state, one theoretical
 * arrival time per target, lives in the database. Every send to a paced target first reserves its
 * slot there with one atomic upsert, so the pace holds across replicas and across restarts; the
 * same algorithm kept in memory on the actual send times keeps one replica strictly within it even
 * when a database reply or a timer comes late. Targets without a declared rate never get here.
 *
 * Wall-clock time (Date.now()) is used on purpose, not the service clock: the pace is what the
 * channel sees.
 */
import type { Database } from '../../db/database.ts';
import type { TargetLimits } from '../../plugin-api/index.ts';

/**
 * Margin added to the interval between sends: 1 / ratePerSecond plus 5 %, so that network jitter
 * between Herald and the channel does not make a channel that counts arrivals see one send too many.
 */
export const PACE_MARGIN = 1.05;

export interface Pace {
  /** Milliseconds between sends. */
  intervalMs: number;
  /** Burst tolerance: how far ahead of the theoretical arrival time a send may go, in ms. */
  toleranceMs: number;
}

/** The pace a target's limits declare, or undefined when it declares no rate. */
export function paceOf(limits: TargetLimits | undefined): Pace | undefined {
  const rate = limits?.ratePerSecond;
  if (!rate || !(rate > 0) || !Number.isFinite(rate)) return undefined;
  const intervalMs = Math.ceil((1000 / rate) * PACE_MARGIN);
  const burst = Math.max(1, Math.floor(limits?.burst ?? 1));
  return { intervalMs, toleranceMs: (burst - 1) * intervalMs };
}

/** The send was not made: the dispatcher is stopping. The delivery goes back to the queue untouched. */
export class PacingAborted extends Error {}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(new PacingAborted('stopping'));
      return;
    }
    const onAbort = () => {
      clearTimeout(t);
      reject(new PacingAborted('stopping'));
    };
    const t = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

export class Pacer {
  /** Per target: theoretical arrival time of the next send on this replica, from actual send times. */
  private local = new Map<string, number>();

  private db: Database;

  constructor(db: Database) {
    this.db = db;
  }

  /**
   * Reserves the next slot of the target in the database and returns the earliest time (epoch ms)
   * a send in it may start.
   */
  async reserve(targetId: string, pace: Pace, now = Date.now()): Promise<number> {
    const max = this.db.dialect === 'postgresql' ? 'GREATEST' : 'MAX';
    const row = await this.db.get<{ tat: number | string }>(
      `INSERT INTO target_pacing (target_id, tat) VALUES (?, ?)
       ON CONFLICT (target_id) DO UPDATE SET tat = ${max}(target_pacing.tat, ?) + ?
       RETURNING tat`,
      [targetId, now + pace.intervalMs, now, pace.intervalMs],
    );
    const slot = Number(row?.tat ?? now + pace.intervalMs) - pace.intervalMs;
    return slot - pace.toleranceMs;
  }

  /** Waits for the target's next slot (database and local pace both), then counts the send as made. */
  async wait(targetId: string, pace: Pace, signal: AbortSignal): Promise<void> {
    const earliest = await this.reserve(targetId, pace);
    for (;;) {
      const local = this.local.get(targetId) ?? 0;
      const at = Math.max(earliest, local - pace.toleranceMs);
      const now = Date.now();
      if (now < at) {
        await sleep(at - now, signal);
        continue;
      }
      if (signal.aborted) throw new PacingAborted('stopping');
      // Decided and counted in one synchronous step: concurrent sends to the target cannot both pass.
      this.local.set(targetId, Math.max(local, now) + pace.intervalMs);
      if (this.local.size > 10_000) this.prune(now);
      return;
    }
  }

  /** How long (ms) the target's local pace is booked ahead of now. */
  bookedAhead(targetId: string): number {
    return Math.max(0, (this.local.get(targetId) ?? 0) - Date.now());
  }

  private prune(now: number): void {
    for (const [id, tat] of this.local) if (tat < now) this.local.delete(id);
  }
}
