/**
 * Fixed-window counter per key: `limit` requests per `windowMs`. Per process (each replica counts on
 * its own). The caller passes the time from the service's clock (`core.clock`), never the wall
 * clock, so a window can be tested to end exactly when it should.
 */
export class WindowLimiter {
  private windows = new Map<string, { start: number; count: number }>();
  private limit: number;
  private windowMs: number;
  constructor(limit: number, windowMs = 60_000) {
    this.limit = limit;
    this.windowMs = windowMs;
  }

  /** 0 when allowed (and counted), else seconds until the window resets; `now` in ms from the service's clock. */
  take(key: string, now: number): number {
    let w = this.windows.get(key);
    if (!w || now - w.start >= this.windowMs) {
      w = { start: now, count: 0 };
      this.windows.set(key, w);
      if (this.windows.size > 100_000)
        for (const [k, v] of this.windows) if (now - v.start >= this.windowMs) this.windows.delete(k);
    }
    if (w.count >= this.limit) return Math.max(1, Math.ceil((w.start + this.windowMs - now) / 1000));
    w.count++;
    return 0;
  }
}
