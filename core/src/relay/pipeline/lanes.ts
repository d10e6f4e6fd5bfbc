/**
 * Per-target send lanes. Each target gets up to `limit` sends at once (its plugin's declared
 * `limits.concurrency`, 1 when it declares none), started strictly in the order rows were pushed.
 * A row pushed as `ordered` (a delivery released when quiet hours ended) waits until the lane is
 * idle and runs alone, so a released backlog reaches the channel in event order.
 */
interface Slot {
  ordered: boolean;
  start: () => Promise<void>;
  resolve: () => void;
}
interface Lane {
  active: number;
  exclusive: boolean;
  limit: number;
  queue: Slot[];
}

export const MAX_CONCURRENCY = 32;

export class TargetLanes {
  private lanes = new Map<string, Lane>();
  private waitingCount = 0;
  /** Called whenever a send finishes (the dispatcher may claim more). */
  onIdle?: () => void;

  /** Rows pushed but not started yet, over all targets. */
  get waiting(): number {
    return this.waitingCount;
  }

  /** Rows of one target pushed and not finished (waiting or running). */
  pending(targetId: string): number {
    const lane = this.lanes.get(targetId);
    return lane ? lane.active + lane.queue.length : 0;
  }

  /** Queues `send` on the target's lane; resolves when it has run (it never rejects). */
  push(targetId: string, limit: number, ordered: boolean, send: () => Promise<void>): Promise<void> {
    let lane = this.lanes.get(targetId);
    if (!lane) {
      lane = { active: 0, exclusive: false, limit: 1, queue: [] };
      this.lanes.set(targetId, lane);
    }
    lane.limit = Math.max(1, Math.min(MAX_CONCURRENCY, Math.floor(limit) || 1));
    const done = new Promise<void>((resolve) => {
      lane.queue.push({ ordered, start: send, resolve });
    });
    this.waitingCount++;
    this.pump(targetId, lane);
    return done;
  }

  private pump(targetId: string, lane: Lane): void {
    while (lane.queue.length && !lane.exclusive && lane.active < lane.limit) {
      const head = lane.queue[0]!;
      if (head.ordered && lane.active > 0) return;
      lane.queue.shift();
      this.waitingCount--;
      lane.active++;
      if (head.ordered) lane.exclusive = true;
      void head
        .start()
        .catch(() => {
          /* the sender records its own failures */
        })
        .finally(() => {
          lane.active--;
          if (head.ordered) lane.exclusive = false;
          head.resolve();
          if (!lane.active && !lane.queue.length) this.lanes.delete(targetId);
          else this.pump(targetId, lane);
          this.onIdle?.();
        });
    }
  }
}
