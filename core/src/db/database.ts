import type { MikroORM } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/sql';
import type { NativeSqlite } from './sqlite-native.ts';

type Param = string | number | boolean | null | undefined | Date | Uint8Array | Record<string, unknown> | unknown[];

/** Raw SQL access bound to a connection or to an open transaction. `?` placeholders on both backends. */
export interface Queryable {
  readonly dialect: 'sqlite' | 'postgresql';
  all<T = Record<string, unknown>>(sql: string, params?: Param[]): Promise<T[]>;
  get<T = Record<string, unknown>>(sql: string, params?: Param[]): Promise<T | undefined>;
  /** Returns the number of rows changed. */
  run(sql: string, params?: Param[]): Promise<number>;
}

/** How long closing waits for the statements still under way before it closes the pool anyway. */
const CLOSE_WAIT_MS = 10_000;

/**
 * The database: raw SQL with `?` placeholders. On SQLite it runs natively through better-sqlite3
 * with reused prepared statements (see sqlite-native.ts), without the ORM; on PostgreSQL through
 * MikroORM's connection. Every statement takes the one connection in turn, so a transaction on
 * SQLite is never interleaved.
 */
export class Database implements Queryable {
  private ormRef?: MikroORM;
  readonly dialect: 'sqlite' | 'postgresql';
  private native?: NativeSqlite;
  private pending: Promise<unknown>[] = [];
  /** The pool's statements and transactions under way (PostgreSQL), which closing waits for. */
  private inflight = new Set<Promise<unknown>>();
  private closing = false;
  private closers: (() => Promise<void>)[] = [];

  /**
   * `orm` may be left out on SQLite when only raw SQL is used (the dispatch thread): `native` then
   * is the connection, and closing it is one of the `onClose` steps its opener registers.
   */
  constructor(orm: MikroORM | undefined, dialect: 'sqlite' | 'postgresql', native?: NativeSqlite) {
    if (!orm && !native) throw new Error('A database needs the ORM or a native SQLite connection.');
    this.ormRef = orm;
    this.dialect = dialect;
    this.native = native;
  }

  get orm(): MikroORM {
    if (!this.ormRef) throw new Error('This connection was opened without the ORM (raw SQL only).');
    return this.ormRef;
  }

  /** A fresh entity manager for one unit of work (one request, one job run). */
  em(): EntityManager {
    return this.orm.em.fork() as unknown as EntityManager;
  }

  private get conn() {
    return (this.orm.em as unknown as EntityManager).getConnection();
  }

  private params(params: Param[]): unknown[] {
    return params.map((p) => {
      if (p === undefined) return null;
      if (typeof p === 'boolean') return this.dialect === 'sqlite' ? (p ? 1 : 0) : p;
      if (p instanceof Date) return p.toISOString();
      if (p !== null && typeof p === 'object' && !(p instanceof Uint8Array)) return JSON.stringify(p);
      if (this.dialect === 'postgresql') {
        // PostgreSQL text cannot hold NUL (SQLite can): keep the rest of the string rather than fail the statement.
        if (typeof p === 'string' && p.includes('\u0000')) return p.replaceAll('\u0000', '\uFFFD');
        // The values are inlined as literals; only a Buffer renders as bytea there.
        if (p instanceof Uint8Array && !Buffer.isBuffer(p)) return Buffer.from(p.buffer, p.byteOffset, p.byteLength);
      }
      return p;
    });
  }

  private bound(trx?: unknown): Queryable {
    const self = this;
    const native = this.native;
    if (native) {
      // Outside a transaction each call takes the connection; inside one (trx === true) it is already held.
      const held = trx === true;
      return {
        dialect: this.dialect,
        async all(sql, params = []) {
          const p = self.params(params);
          return held ? native.allNow(sql, p) : native.all(sql, p);
        },
        async get(sql, params = []) {
          const p = self.params(params);
          return (held ? native.allNow(sql, p) : await native.all(sql, p))[0];
        },
        async run(sql, params = []) {
          const p = self.params(params);
          return held ? native.runNow(sql, p) : native.run(sql, p);
        },
      };
    }
    // Outside a transaction each statement is one the close waits for; inside one, the transaction is.
    const track =
      trx === undefined ? <T>(run: () => Promise<T>) => self.track(run) : <T>(run: () => Promise<T>) => run();
    return {
      dialect: this.dialect,
      all(sql, params = []) {
        return track(async () => (await self.conn.execute(sql, self.params(params), 'all', trx as never)) as any[]);
      },
      get(sql, params = []) {
        return track(
          async () => ((await self.conn.execute(sql, self.params(params), 'all', trx as never)) as any[])[0],
        );
      },
      run(sql, params = []) {
        return track(async () => {
          const r = (await self.conn.execute(sql, self.params(params), 'run', trx as never)) as {
            affectedRows?: number;
          };
          return r.affectedRows ?? 0;
        });
      },
    };
  }

  /**
   * Runs one statement or transaction of the pool (PostgreSQL) as work that {@link close} waits for, or refuses it
   * once the close has begun. Closing the pool while a statement was being handed its connection failed that
   * statement inside the driver, never gave the connection back, and left the pool's end waiting for it forever.
   */
  private track<T>(run: () => Promise<T>): Promise<T> {
    if (this.closing) return Promise.reject(new Error('the database is closed (the service is stopping)'));
    const p = run();
    this.inflight.add(p);
    const settled = () => this.inflight.delete(p);
    p.then(settled, settled);
    return p;
  }

  private plain?: Queryable;
  all<T = Record<string, unknown>>(sql: string, params: Param[] = []): Promise<T[]> {
    return (this.plain ??= this.bound()).all<T>(sql, params);
  }
  get<T = Record<string, unknown>>(sql: string, params: Param[] = []): Promise<T | undefined> {
    return (this.plain ??= this.bound()).get<T>(sql, params);
  }
  run(sql: string, params: Param[] = []): Promise<number> {
    return (this.plain ??= this.bound()).run(sql, params);
  }

  /** Runs `fn` in one transaction; rolls back when it throws. */
  tx<T>(fn: (q: Queryable) => Promise<T>): Promise<T> {
    if (this.native) return this.native.tx(() => fn(this.bound(true)));
    return this.track(() => this.conn.transactional((trx) => fn(this.bound(trx))));
  }

  /**
   * `fn` and then `then.run` in one transaction. On SQLite the units of one group commit with the same `then.key`
   * share one run of `then.run`, after all of them (sqlite-native.ts, txThen); on PostgreSQL each transaction
   * commits alone and runs its own. Resolves with `fn`'s result and the step's.
   */
  txThen<T, F>(
    fn: (q: Queryable) => Promise<T>,
    then: { key: string; run: (q: Queryable) => Promise<F> },
  ): Promise<[T, F]> {
    if (this.native) {
      const q = this.bound(true);
      return this.native.txThen(() => fn(q), { key: then.key, run: () => then.run(q) });
    }
    return this.tx(async (q) => [await fn(q), await then.run(q)] as [T, F]);
  }

  /** Boolean column value as JS boolean (SQLite stores 0/1). */
  static bool(v: unknown): boolean {
    return v === true || v === 1 || v === '1' || v === 't';
  }

  /** JSON text column as a value. */
  static json<T>(v: unknown, fallback: T): T {
    if (v === null || v === undefined) return fallback;
    if (typeof v !== 'string') return v as T;
    try {
      return JSON.parse(v) as T;
    } catch {
      return fallback;
    }
  }

  /** Work started at boot that closing must wait for (the check of a pre-migration snapshot). */
  waitOnClose(p: Promise<unknown>): void {
    this.pending.push(p);
  }

  /**
   * Runs at close (stops helpers such as the checkpointer, closes a native handle). The last
   * registered runs first: a helper registered after the handle it uses stops before it closes.
   */
  onClose(fn: () => Promise<void>): void {
    this.closers.push(fn);
  }

  async close(): Promise<void> {
    await Promise.allSettled(this.pending);
    // The closing steps may still write (the poll times held in memory).
    for (const fn of [...this.closers].reverse()) await fn().catch(() => {});
    // Then nothing new starts, and what the pool still runs finishes first (a statement that hangs is not waited for
    // past CLOSE_WAIT_MS).
    this.closing = true;
    await Promise.race([
      Promise.allSettled([...this.inflight]),
      new Promise((r) => setTimeout(r, CLOSE_WAIT_MS).unref()),
    ]);
    this.native?.reset();
    await this.ormRef?.close(true);
  }
}
