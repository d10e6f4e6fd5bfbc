/**
 * Raw SQL on SQLite straight through better-sqlite3, with prepared statements kept and reused.
 *
 * MikroORM runs its queries through Kysely, which serialises every use of the one SQLite
 * connection with a mutex (a transaction holds it from BEGIN to COMMIT). Every call here takes that
 * same mutex for its duration, so a native statement never lands inside an ORM transaction and an
 * ORM query never lands inside one of ours: the one connection still sees one unit of work at a time.
 */
import type BetterSqlite3 from 'better-sqlite3';

type Statement = BetterSqlite3.Statement<unknown[], unknown>;
/** Runs `fn` while holding the ORM's connection. */
export type ConnectionLock = <T>(fn: () => Promise<T>) => Promise<T>;

const MAX_STATEMENTS = 500;

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

  constructor(db: BetterSqlite3.Database, lock: ConnectionLock) { this.db = db; this.lock = lock; }

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

  all(sql: string, params: unknown[]): Promise<any[]> { return this.lock(async () => this.allNow(sql, params)); }
  run(sql: string, params: unknown[]): Promise<number> { return this.lock(async () => this.runNow(sql, params)); }

  /**
   * Runs `fn` in one transaction while holding the connection. `fn` must use only what it is handed:
   * any other database call would wait for the connection this transaction holds.
   */
  tx<T>(fn: () => Promise<T>): Promise<T> {
    return this.lock(async () => {
      this.db.prepare('BEGIN IMMEDIATE').run();
      try {
        const r = await fn();
        this.db.prepare('COMMIT').run();
        return r;
      } catch (err) {
        if (this.db.inTransaction) this.db.prepare('ROLLBACK').run();
        throw err;
      }
    });
  }

  /** Forgets prepared statements (before the database closes). */
  reset(): void { this.statements.clear(); }
}
