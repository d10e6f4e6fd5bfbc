/**
 * Scheduled polls grouped into ticks. A poll due at some moment runs at a tick boundary near it (a sixtieth of its
 * interval, at most a second), and every poll due at one boundary starts from one timer: 500 instances polling each
 * minute wake the process some 60 times a minute instead of 500. Each wake-up of an idle process costs about as much
 * CPU as the HTTP exchange of a poll itself (the event loop, timers, the first touch of cold code and data), so the
 * polls of one tick share it. Spreading over the interval still holds at the tick's granularity.
 */

/** The tick of a poll interval: a sixtieth of it, at least 1 ms and at most a second. */
export function pollTickMs(intervalMs: number): number {
  return Math.max(1, Math.min(1000, Math.floor(intervalMs / 60)));
}

/**
 * The delay from `now` to the boundary of `tickMs` nearest `now + delayMs` (or, with `notBefore`, the first at or
 * after it), always later than `now`. Boundaries are multiples of `tickMs` on the clock `now` is read from.
 */
export function tickDelayMs(now: number, delayMs: number, tickMs: number, notBefore = false): number {
  const due = now + delayMs;
  let at = (notBefore ? Math.ceil(due / tickMs) : Math.round(due / tickMs)) * tickMs;
  if (at <= now) at += tickMs * Math.ceil((now - at + 1) / tickMs);
  return at - now;
}

interface Tick {
  timer: NodeJS.Timeout;
  runs: Set<() => void>;
}

export class PollTicks {
  private ticks = new Map<number, Tick>();
  private now: () => number;
  constructor(now: () => number = () => performance.now()) {
    this.now = now;
  }

  /**
   * Runs `run` at the tick boundary of `tickMs` nearest `delayMs` from now (`notBefore`: not before `delayMs`);
   * returns what cancels it. A delay of 0 runs it at once (on the next turn of the event loop), outside any tick.
   */
  schedule(delayMs: number, tickMs: number, run: () => void, notBefore = false): () => void {
    if (delayMs <= 0) {
      const timer = setTimeout(run, 0);
      timer.unref();
      return () => clearTimeout(timer);
    }
    const now = this.now();
    const wait = tickDelayMs(now, delayMs, tickMs, notBefore);
    // Boundaries are whole milliseconds: the same boundary from two clocks' readings is the same key.
    const at = Math.round(now + wait);
    let tick = this.ticks.get(at);
    if (!tick) {
      const runs = new Set<() => void>();
      const timer = setTimeout(() => {
        this.ticks.delete(at);
        for (const r of runs) r();
      }, wait);
      timer.unref();
      tick = { timer, runs };
      this.ticks.set(at, tick);
    }
    const { runs } = tick;
    runs.add(run);
    return () => {
      runs.delete(run);
      if (!runs.size && this.ticks.get(at)?.runs === runs) {
        clearTimeout(this.ticks.get(at)!.timer);
        this.ticks.delete(at);
      }
    };
  }

  /** Timers waiting now (one per tick with a poll in it). */
  get pending(): number {
    return this.ticks.size;
  }
}
