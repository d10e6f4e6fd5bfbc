/**
 * Raw SQL on SQLite straight through better-sqlite3, with prepared statements kept and reused.
 *
 * Every call takes the connection's lock (native-connect.ts: one holder at a time, in arrival
 * order; a transaction holds it from BEGIN to COMMIT), so the one connection sees one unit of work
 * at a time.
 *
 * Writes outside an explicit transaction, and explicit transactions, are group-committed: what is
 * queued while the event loop is busy runs in one transaction, each unit under its own savepoint
 * (a failing unit rolls back alone), and every promise resolves only after the COMMIT. A commit in
 * WAL mode writes every page it touched, so one commit for many small writes is far cheaper.
 */
import type BetterSqlite3 from 'better-sqlite3';

type Statement = BetterSqlite3.Statement<unknown[], unknown>;
/** Runs `fn` while holding the connection. */
export type ConnectionLock = <T>(fn: () => Promise<T>) => Promise<T>;

const MAX_STATEMENTS = 500;
/** Units in one group commit at most; the rest go to the next one. */
const MAX_GROUP = 500;
/** A write within this long of the last commit waits COMMIT_DELAY_MS for company (see write()). */
const COMMIT_DELAY_WINDOW_MS = 5;
const COMMIT_DELAY_MS = 2;

/** `single`: one statement, atomic by itself (SQLite undoes a failed statement alone), so no savepoint. */
interface Unit {
  work: () => unknown;
  single: boolean;
  /** A last step of the unit; the units of one group with the same `key` share one run of it (see txThen). */
  then?: { key: string; run: () => unknown };
  resolve: (v: any) => void;
  reject: (e: unknown) => void;
}

/** A unit that ran; `v` is what it resolves with at the COMMIT. */
interface Done {
  u: Unit;
  v: unknown;
}

/** What a step of the group did when its error ended the whole transaction: the error and the units it did not run. */
interface Lost {
  err: unknown;
  unrun: Unit[];
}

/** A value better-sqlite3 binds as the ORM would have written it (integers as INTEGER, not REAL). */
function bindable(p: unknown): unknown {
  if (typeof p === 'number') return Number.isInteger(p) ? BigInt(p) : p;
  if (p instanceof Uint8Array && !Buffer.isBuffer(p)) return Buffer.from(p.buffer, p.byteOffset, p.byteLength);
  return p;
}

export class NativeSqlite {
  private db: BetterSqlite3.Database;
  private lock: ConnectionLock;
  private statements = new Map<string, Statement>();
  private queue: Unit[] = [];
  private scheduled = false;
  private lastCommitAt = -Infinity;
  /** Called after every group commit (the WAL checkpointer watches for writes). */
  onCommit?: () => void;

  constructor(db: BetterSqlite3.Database, lock: ConnectionLock) {
    this.db = db;
    this.lock = lock;
  }

  private prepare(sql: string): Statement {
    let s = this.statements.get(sql);
    if (!s) {
      // Statements with generated IN lists vary; keep the cache bounded.
      if (this.statements.size >= MAX_STATEMENTS) this.statements.clear();
      s = this.db.prepare(sql) as Statement;
      this.statements.set(sql, s);
    }
    return s;
  }

  /** Executes one statement; the caller holds the connection. */
  allNow(sql: string, params: unknown[]): any[] {
    const s = this.prepare(sql);
    const args = params.map(bindable);
    if (s.reader) return s.all(...args) as any[];
    s.run(...args);
    return [];
  }

  runNow(sql: string, params: unknown[]): number {
    const s = this.prepare(sql);
    const args = params.map(bindable);
    if (s.reader) return s.all(...args).length;
    return s.run(...args).changes;
  }

  /**
   * Statement timing for diagnostics (HERALD_SQL_PROFILE=1): wall time, the thread's CPU time and count per SQL text,
   * printed at close. The wall time also counts what the machine's other work kept the thread off a CPU meanwhile;
   * the CPU time does not.
   */
  private profile?: Map<string, { n: number; ms: number; max: number; cpuMs: number }>;
  enableProfile(): void {
    if (this.profile) return;
    const prof = (this.profile = new Map());
    // The three methods every statement goes through are wrapped, so the hot path pays nothing when profiling is off.
    for (const name of ['allNow', 'runNow', 'stmt'] as const) {
      const orig = (this[name] as (sql: string, ...rest: unknown[]) => unknown).bind(this);
      (this as any)[name] = (sql: string, ...rest: unknown[]) => {
        const t = performance.now();
        const c = process.threadCpuUsage();
        try {
          return orig(sql, ...rest);
        } finally {
          const d = performance.now() - t;
          const c2 = process.threadCpuUsage(c);
          const e = prof.get(sql) ?? { n: 0, ms: 0, max: 0, cpuMs: 0 };
          e.n++;
          e.ms += d;
          e.cpuMs += (c2.user + c2.system) / 1000;
          e.max = Math.max(e.max, d);
          prof.set(sql, e);
        }
      };
    }
  }
  /**
   * Hands every statement this connection runs (transaction control and checkpoints included) to
   * `fn` before it runs: SERVICE_DEBUG's SQL echo. The same three methods as the profile are
   * wrapped, so the hot path pays nothing when the echo is off.
   */
  echo(fn: (sql: string) => void): void {
    for (const name of ['allNow', 'runNow', 'stmt'] as const) {
      const orig = (this[name] as (sql: string, ...rest: unknown[]) => unknown).bind(this);
      (this as any)[name] = (sql: string, ...rest: unknown[]) => {
        fn(sql);
        return orig(sql, ...rest);
      };
    }
    const checkpoint = this.checkpoint.bind(this);
    this.checkpoint = () => {
      fn('PRAGMA wal_checkpoint(PASSIVE)');
      return checkpoint();
    };
  }
  profileReport(): string {
    if (!this.profile) return '';
    return [...this.profile]
      .sort((a, b) => b[1].ms - a[1].ms)
      .slice(0, 25)
      .map(
        ([sql, e]) =>
          `${e.ms.toFixed(0).padStart(7)} ms ${String(e.n).padStart(7)}× ` +
          `${((1000 * e.ms) / e.n).toFixed(0).padStart(6)} µs max ${e.max.toFixed(1).padStart(6)} ms ` +
          `cpu ${e.cpuMs.toFixed(0).padStart(6)} ms  ` +
          `${sql.replace(/\s+/g, ' ').slice(0, 140)}`,
      )
      .join('\n');
  }

  /** A read runs as soon as the connection is free; a write joins the next group commit. */
  all(sql: string, params: unknown[]): Promise<any[]> {
    if (this.prepare(sql).readonly) return this.lock(async () => this.allNow(sql, params));
    return this.write(() => this.allNow(sql, params), true);
  }

  run(sql: string, params: unknown[]): Promise<number> {
    if (this.prepare(sql).readonly) return this.lock(async () => this.runNow(sql, params));
    return this.write(() => this.runNow(sql, params), true);
  }

  /**
   * Runs `fn` as one atomic unit of the next group commit. `fn` must use only the queryable it is
   * handed: any other database call would wait for the connection the group holds.
   */
  tx<T>(fn: () => Promise<T>): Promise<T> {
    return this.write(fn, false);
  }

  /**
   * Like tx(), with a last step `then.run` in the same transaction. The units of one group commit with the same
   * `then.key` run one after another where the first of them was queued, and then share one run of it: a step that
   * recomputes a row from rows the units change (an event's status from its deliveries) runs once for them, not once
   * each, and still after all of them. Each resolves with its own result and the shared step's. The units and their
   * step are atomic together: when the step fails, all of them roll back and reject with its error.
   */
  txThen<T, F>(fn: () => Promise<T>, then: { key: string; run: () => Promise<F> }): Promise<[T, F]> {
    return new Promise<[T, F]>((resolve, reject) => this.enqueue({ work: fn, single: false, then, resolve, reject }));
  }

  private write<T>(work: () => T | Promise<T>, single: boolean): Promise<T> {
    return new Promise<T>((resolve, reject) => this.enqueue({ work, single, resolve, reject }));
  }

  private enqueue(unit: Unit): void {
    this.queue.push(unit);
    if (!this.scheduled) {
      this.scheduled = true;
      // Under a steady stream of writes (the last commit was moments ago), wait a moment to gather
      // more units into this commit: each commit writes every page it touched to the WAL, and
      // consecutive small writes touch the same pages, so a commit of several units costs little
      // more than one. An isolated write commits at once.
      if (performance.now() - this.lastCommitAt < COMMIT_DELAY_WINDOW_MS)
        setTimeout(() => {
          void this.flush();
        }, COMMIT_DELAY_MS);
      else
        setImmediate(() => {
          void this.flush();
        });
    }
  }

  private stmt(sql: string): void {
    this.prepare(sql).run();
  }

  private async flush(): Promise<void> {
    try {
      await this.flushLocked();
    } catch (err) {
      // The connection could not be had (closed): fail what waits instead of leaving it hanging.
      this.scheduled = false;
      for (const u of this.queue.splice(0)) u.reject(err);
    }
  }

  private async flushLocked(): Promise<void> {
    await this.lock(async () => {
      const units = this.queue.splice(0, MAX_GROUP);
      this.scheduled = this.queue.length > 0;
      if (this.scheduled)
        setImmediate(() => {
          void this.flush();
        });
      if (!units.length) return;
      try {
        this.stmt('BEGIN IMMEDIATE');
      } catch (err) {
        for (const u of units) u.reject(err);
        return;
      }
      const done: Done[] = [];
      const ran = new Set<Unit>();
      const shared = new Map<string, Unit[]>();
      for (const u of units)
        if (u.then) {
          const members = shared.get(u.then.key);
          if (members) members.push(u);
          else shared.set(u.then.key, [u]);
        }
      for (const u of units) {
        if (ran.has(u)) continue;
        const members = u.then ? shared.get(u.then.key)! : [u];
        for (const m of members) ran.add(m);
        const lost = members.length === 1 ? await this.runOne(u, done) : await this.runShared(members, done);
        if (lost) {
          // The error ended the whole transaction (disk full, I/O): nothing done so far is kept; the units not yet
          // run go back to the queue.
          for (const d of done) d.u.reject(lost.err);
          this.queue.unshift(...lost.unrun, ...units.filter((x) => !ran.has(x)));
          if (this.queue.length && !this.scheduled) {
            this.scheduled = true;
            setImmediate(() => {
              void this.flush();
            });
          }
          return;
        }
      }
      try {
        this.stmt('COMMIT');
      } catch (err) {
        if (this.db.inTransaction) this.stmt('ROLLBACK');
        for (const d of done) d.u.reject(err);
        return;
      }
      this.lastCommitAt = performance.now();
      for (const d of done) d.u.resolve(d.v);
      this.onCommit?.();
    });
  }

  /**
   * Runs one unit (and its last step) under a savepoint, none for a single statement; a failing unit rolls back
   * alone. Returns what was lost when its error ended the transaction.
   */
  private async runOne(u: Unit, done: Done[]): Promise<Lost | null> {
    if (!u.single) this.stmt('SAVEPOINT unit');
    try {
      let v = u.single ? u.work() : await u.work();
      if (u.then) v = [v, await u.then.run()];
      if (!u.single) this.stmt('RELEASE unit');
      done.push({ u, v });
      return null;
    } catch (err) {
      u.reject(err);
      if (!this.db.inTransaction) return { err, unrun: [] };
      if (!u.single) {
        this.stmt('ROLLBACK TO unit');
        this.stmt('RELEASE unit');
      }
      return null;
    }
  }

  /**
   * Units sharing a last step (txThen): each under its own savepoint inside one for them all, then the step once.
   * When the step fails, the savepoint of them all rolls back and each rejects with its error.
   */
  private async runShared(members: Unit[], done: Done[]): Promise<Lost | null> {
    this.stmt('SAVEPOINT shared');
    const ok: Done[] = [];
    const lose = (err: unknown, unrun: Unit[]): Lost => {
      for (const d of ok) d.u.reject(err);
      return { err, unrun };
    };
    for (let i = 0; i < members.length; i++) {
      const m = members[i]!;
      this.stmt('SAVEPOINT unit');
      try {
        ok.push({ u: m, v: await m.work() });
        this.stmt('RELEASE unit');
      } catch (err) {
        m.reject(err);
        if (!this.db.inTransaction) return lose(err, members.slice(i + 1));
        if (ok.at(-1)?.u === m) ok.pop();
        this.stmt('ROLLBACK TO unit');
        this.stmt('RELEASE unit');
      }
    }
    if (!ok.length) {
      this.stmt('RELEASE shared');
      return null;
    }
    try {
      const f = await ok.at(-1)!.u.then!.run();
      this.stmt('RELEASE shared');
      for (const d of ok) done.push({ u: d.u, v: [d.v, f] });
      return null;
    } catch (err) {
      if (!this.db.inTransaction) return lose(err, []);
      this.stmt('ROLLBACK TO shared');
      this.stmt('RELEASE shared');
      for (const d of ok) d.u.reject(err);
      return null;
    }
  }

  /**
   * A PASSIVE WAL checkpoint on this connection (copies what no reader still needs; never waits for writers).
   * Resolves to the number of frames the WAL held (SQLite's `log`; -1 outside WAL mode).
   */
  checkpoint(): Promise<number> {
    return this.lock(async () => {
      const [r] = this.db.pragma('wal_checkpoint(PASSIVE)') as { log: number }[];
      return r?.log ?? -1;
    });
  }

  /** Forgets prepared statements (before the database closes). */
  reset(): void {
    this.statements.clear();
  }
}
