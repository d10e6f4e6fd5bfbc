/**
 * The failed-login throttle, built so that an attacker cannot lock the real user out.
 *
 * Three counters of failures, each with a free allowance; past it, the key is locked for a short
 * time that doubles with every further failure (30 s, 1 min, 2 min, ... at most 15 min). Attempts
 * refused while locked are not checked and not counted. A counter is forgotten one hour after its
 * last failure.
 *
 * - **account and address** (5 free): guessing one account's password from one address. This is
 *   the lock an attacker runs into; the same account from any other address is untouched.
 * - **address** (20 free): one address trying many accounts (password spraying).
 * - **account** (10 free, counted in *distinct addresses*): one account guessed from many
 *   addresses at once. An address adds to it only with its first failure, so one address, however
 *   persistent, never locks the account. When it is locked, only addresses that logged in to the
 *   account successfully within the last 30 days still get through: the real user from a known
 *   address gets in; one on a new address waits out the lock like everyone else.
 *
 * A success clears the account-and-address counter and remembers the address as known for the
 * account; it does not clear the address or account counters (an attacker logging in to an account
 * of their own must not reset their spraying count). Every attempt is counted as a failure when it
 * starts, before the password is checked, and taken back if it succeeds: parallel requests cannot
 * slip through while the first ones are still being checked.
 *
 * The counters are kept per process: behind several replicas each one throttles on its own, which
 * makes the allowances a small multiple without weakening the doubling locks; a restart forgets
 * them. The known addresses are not: the caller reads them from the database
 * (`login_known_addresses`, see {@link KnownAddresses}) when {@link LoginLimiter.accountLocked} says
 * the answer matters, and passes it to `begin`, so a restart or another replica never locks the
 * real user out of an address he used.
 */
import type { Queryable } from '../db/database.ts';

export interface LockPolicy {
  /** Failures allowed before the first lock. */
  free: number;
  /** The first lock; each further failure doubles it. */
  baseMs: number;
}

export interface LoginLimiterOptions {
  pair?: LockPolicy;
  address?: LockPolicy;
  /** `free` counts distinct failing addresses. */
  account?: LockPolicy;
  /** Longest lock. */
  capMs?: number;
  /** A counter is forgotten this long after its last failure (longer than `capMs`). */
  forgetMs?: number;
  /** How long a successful login keeps an address known to the account. */
  knownMs?: number;
  /** Entries kept per map; the least recently touched go first beyond it. */
  maxEntries?: number;
}

interface Counter {
  n: number;
  last: number;
}

/** One attempt in progress: counted as a failure until `succeeded` takes it back. */
export interface LoginAttempt {
  account: string;
  address: string;
  newAddress: boolean;
}

export class LoginLimiter {
  private pairs = new Map<string, Counter>();
  private addresses = new Map<string, Counter>();
  private accounts = new Map<string, Counter>();
  /** `account \n address` → time of the last successful login from there. */
  private known = new Map<string, number>();
  private o: Required<LoginLimiterOptions>;

  constructor(o: LoginLimiterOptions = {}) {
    this.o = {
      pair: { free: 5, baseMs: 30_000 },
      address: { free: 20, baseMs: 30_000 },
      account: { free: 10, baseMs: 30_000 },
      capMs: 15 * 60_000,
      forgetMs: 60 * 60_000,
      knownMs: 30 * 86_400_000,
      maxEntries: 100_000,
      ...o,
    };
  }

  /** Whether the account counter locks the account now: only then does it matter whether an address is known. */
  accountLocked(account: string, now = Date.now()): boolean {
    return this.lockedUntil(this.current(this.accounts, account, now), this.o.account) > now;
  }

  /** How long a successful login keeps an address known to the account. */
  get knownMs(): number {
    return this.o.knownMs;
  }

  /**
   * Starts an attempt: `{ wait }` in seconds when the account, the address or the pair is locked
   * (nothing is counted), otherwise the attempt, already counted as a failure. `known`: the address
   * logged in to the account successfully within `knownMs`, as the database says (this process also
   * remembers the successes it saw).
   */
  begin(account: string, address: string, now = Date.now(), known = false): { wait: number; attempt?: LoginAttempt } {
    const pairKey = `${account}\n${address}`;
    const pair = this.current(this.pairs, pairKey, now);
    const addr = this.current(this.addresses, address, now);
    const acct = this.current(this.accounts, account, now);
    const knownAt = this.known.get(pairKey);
    const isKnown = known || (knownAt !== undefined && now - knownAt < this.o.knownMs);
    const until = Math.max(
      this.lockedUntil(pair, this.o.pair),
      this.lockedUntil(addr, this.o.address),
      isKnown ? 0 : this.lockedUntil(acct, this.o.account),
    );
    if (until > now) return { wait: Math.ceil((until - now) / 1000) };
    const newAddress = !pair;
    this.count(this.pairs, pairKey, now);
    this.count(this.addresses, address, now);
    if (newAddress) this.count(this.accounts, account, now);
    return { wait: 0, attempt: { account, address, newAddress } };
  }

  /** The attempt's password was right: take its failure back and remember the address as known. */
  succeeded(a: LoginAttempt, now = Date.now()): void {
    const pairKey = `${a.account}\n${a.address}`;
    this.pairs.delete(pairKey);
    this.uncount(this.addresses, a.address);
    if (a.newAddress) this.uncount(this.accounts, a.account);
    this.touch(this.known, pairKey, now);
  }

  /** The counter under `key`, or undefined once it has been forgotten. */
  private current(map: Map<string, Counter>, key: string, now: number): Counter | undefined {
    const c = map.get(key);
    if (c && now - c.last >= this.o.forgetMs) {
      map.delete(key);
      return undefined;
    }
    return c;
  }

  private lockedUntil(c: Counter | undefined, p: LockPolicy): number {
    if (!c || c.n < p.free) return 0;
    return c.last + Math.min(this.o.capMs, p.baseMs * 2 ** Math.min(c.n - p.free, 30));
  }

  private count(map: Map<string, Counter>, key: string, now: number): void {
    this.touch(map, key, { n: (map.get(key)?.n ?? 0) + 1, last: now });
  }

  private uncount(map: Map<string, Counter>, key: string): void {
    const c = map.get(key);
    if (!c) return;
    if (c.n <= 1) map.delete(key);
    else c.n--;
  }

  /** Sets `key` as the most recently touched entry, dropping the least recently touched beyond the limit. */
  private touch<V>(map: Map<string, V>, key: string, value: V): void {
    map.delete(key);
    map.set(key, value);
    if (map.size > this.o.maxEntries)
      for (const k of map.keys()) {
        map.delete(k);
        if (map.size <= this.o.maxEntries) break;
      }
  }
}

/** The durable list of addresses each account logged in from (`login_known_addresses`). */
export const KnownAddresses = {
  async has(q: Queryable, account: string, address: string, since: Date): Promise<boolean> {
    return Boolean(
      await q.get(
        'SELECT 1 AS ok FROM login_known_addresses WHERE account = ? AND address = ? AND last_success_at >= ?',
        [account, address, since.toISOString()],
      ),
    );
  },
  /** Records a successful login from `address`, and forgets the account's addresses unused for longer than `keepMs`. */
  async remember(q: Queryable, account: string, address: string, at: Date, keepMs: number): Promise<void> {
    await q.run(
      `INSERT INTO login_known_addresses (account, address, last_success_at) VALUES (?, ?, ?)
      ON CONFLICT (account, address) DO UPDATE SET last_success_at = excluded.last_success_at`,
      [account, address, at.toISOString()],
    );
    await q.run('DELETE FROM login_known_addresses WHERE account = ? AND last_success_at < ?', [
      account,
      new Date(at.getTime() - keepMs).toISOString(),
    ]);
  },
};
