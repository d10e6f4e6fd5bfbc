/**
 * Failed-login throttle: after `max` failures within `windowMs` for one address or one account, further
 * attempts are refused until the window passes. Kept per process; behind several replicas each one
 * throttles on its own, which only makes the effective limit a small multiple.
 */
export class LoginLimiter {
  private failures = new Map<string, number[]>();
  private max: number;
  private windowMs: number;
  constructor(max = 10, windowMs = 15 * 60_000) { this.max = max; this.windowMs = windowMs; }

  private recent(key: string, now: number): number[] {
    const list = (this.failures.get(key) ?? []).filter((t) => now - t < this.windowMs);
    if (list.length) this.failures.set(key, list); else this.failures.delete(key);
    return list;
  }

  /** Seconds until another attempt is allowed, or 0. */
  retryAfter(keys: string[], now = Date.now()): number {
    let wait = 0;
    for (const k of keys) {
      const list = this.recent(k, now);
      if (list.length >= this.max) wait = Math.max(wait, Math.ceil((list[0]! + this.windowMs - now) / 1000));
    }
    return wait;
  }

  fail(keys: string[], now = Date.now()): void {
    for (const k of keys) { const l = this.recent(k, now); l.push(now); this.failures.set(k, l); }
    if (this.failures.size > 50_000) this.failures.clear();
  }

  succeed(keys: string[]): void { for (const k of keys) this.failures.delete(k); }
}
