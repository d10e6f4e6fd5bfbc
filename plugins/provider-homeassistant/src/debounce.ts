/**
 * Per-entity debounce of state changes: the first change in a quiet entity goes out at once; later
 * changes inside `intervalMs` are held and only the latest is sent when the window ends, and only
 * if it differs from the last state sent. A flapping entity therefore yields at most one
 * notification per window and the final state is never lost.
 */

/** A state change ready to be relayed. */
export interface StateChange {
  entityId: string;
  friendlyName: string;
  oldState: string;
  newState: string;
  unit?: string;
  occurredAt?: Date;
}

interface Slot {
  lastSentAt: number;
  lastSentState: string;
  pending?: StateChange;
  timer?: NodeJS.Timeout;
}

/** Entities idle for longer than the window are forgotten once the map grows past this size. */
const PRUNE_ABOVE = 5_000;

export class EntityDebouncer {
  private readonly slots = new Map<string, Slot>();
  private readonly intervalMs: number;
  private readonly send: (change: StateChange) => void;
  private readonly now: () => number;

  constructor(intervalMs: number, send: (change: StateChange) => void, now: () => number = () => performance.now()) {
    this.intervalMs = intervalMs;
    this.send = send;
    this.now = now;
  }

  offer(change: StateChange): void {
    if (this.intervalMs <= 0) {
      this.send(change);
      return;
    }
    const now = this.now();
    const slot = this.slots.get(change.entityId);
    if (!slot || (!slot.timer && now - slot.lastSentAt >= this.intervalMs)) {
      if (this.slots.size > PRUNE_ABOVE) this.prune(now);
      this.slots.set(change.entityId, { lastSentAt: now, lastSentState: change.newState });
      this.send(change);
      return;
    }
    slot.pending = change;
    slot.timer ??= setTimeout(() => this.flush(change.entityId), Math.max(0, slot.lastSentAt + this.intervalMs - now));
  }

  private flush(entityId: string): void {
    const slot = this.slots.get(entityId);
    if (!slot) return;
    slot.timer = undefined;
    const pending = slot.pending;
    slot.pending = undefined;
    if (!pending || pending.newState === slot.lastSentState) return;
    const out = { ...pending, oldState: slot.lastSentState };
    slot.lastSentAt = this.now();
    slot.lastSentState = pending.newState;
    this.send(out);
  }

  private prune(now: number): void {
    for (const [id, slot] of this.slots)
      if (!slot.timer && now - slot.lastSentAt >= this.intervalMs) this.slots.delete(id);
  }

  /** Drops held changes and timers (on stop). */
  clear(): void {
    for (const slot of this.slots.values()) clearTimeout(slot.timer);
    this.slots.clear();
  }
}
