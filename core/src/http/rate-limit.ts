/** Fixed-window counter per key: `limit` requests per `windowMs`. Per process (each replica counts on its own). */
export class WindowLimiter {
  private windows = new Map<string, { start: number; count: number }>();
  private limit: number;
  private windowMs: number;
  constructor(limit: number, windowMs = 60_000) { this.limit = limit; this.windowMs = windowMs; }

  /** 0 when allowed (and counted), else seconds until the window resets. */
  take(key: string, now = Date.now()): number {
    let w = this.windows.get(key);
    if (!w || now - w.start >= this.windowMs) {
      w = { start: now, count: 0 };
      this.windows.set(key, w);
      if (this.windows.size > 100_000) for (const [k, v] of this.windows) if (now - v.start >= this.windowMs) this.windows.delete(k);
    }
    if (w.count >= this.limit) return Math.max(1, Math.ceil((w.start + this.windowMs - now) / 1000));
    w.count++;
    return 0;
  }
}
