/**
 * The routing configuration the webhook path reads for every event (the provider a token names, the tracker → target
 * links of a provider and event type), kept in memory while it holds. Every write to those tables, whoever makes it
 * (the API, the command line, a restore, another replica), moves `config_version` in its own transaction (triggers of
 * migration 0036): a request reads that one row, and everything kept under an older version is forgotten. A load that
 * began before the cache was emptied is not kept (it may have read the older rows).
 */
import type { Database, Queryable } from '../db/database.ts';

/** Entries kept at most; the map is emptied when full (a burst reads a handful). */
const MAX_ENTRIES = 4096;

export class ConfigCache {
  private version: number | undefined;
  private generation = 0;
  private entries = new Map<string, unknown>();
  /** The read not issued yet, which callers of sync() on the same connection join (see sync). */
  private pending?: { db: Queryable; read: Promise<void> };

  /**
   * Reads the configuration's version; what was kept under another one is forgotten. The read is issued once the
   * event loop has run the I/O callbacks of its turn (setImmediate), and every call on the same connection until then
   * joins it: the requests of a burst that arrive together share one read. Each still sees every change committed
   * before it called, since the read it waits for is issued after its call.
   */
  sync(db: Queryable): Promise<void> {
    if (this.pending?.db === db) return this.pending.read;
    const read = new Promise<void>((resolve, reject) => {
      setImmediate(() => {
        if (this.pending?.read === read) this.pending = undefined;
        this.read(db).then(resolve, reject);
      });
    });
    this.pending = { db, read };
    return read;
  }

  private async read(db: Queryable): Promise<void> {
    const row = await db.get<{ v: number | string }>('SELECT v FROM config_version WHERE id = ?', [1]);
    const v = row ? Number(row.v) : Number.NaN;
    if (v !== this.version || Number.isNaN(v)) this.forget(v);
  }

  forget(version?: number): void {
    this.entries.clear();
    this.version = version;
    this.generation++;
  }

  /**
   * The value kept under `key`, else `load()`'s, kept (frozen, one level deep) when `keep` allows it and nothing
   * emptied the cache meanwhile. Call after {@link sync} in the same request.
   */
  async get<T>(key: string, load: () => Promise<T>, keep: (v: T) => boolean = () => true): Promise<T> {
    if (this.entries.has(key)) return this.entries.get(key) as T;
    const generation = this.generation;
    const value = await load();
    if (generation === this.generation && !Number.isNaN(this.version ?? Number.NaN) && keep(value)) {
      if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
      this.entries.set(key, freeze(value));
    }
    return value;
  }
}

/** Kept rows are shared by every request: freezing them makes a change to one an error instead of a leak. */
function freeze<T>(value: T): T {
  if (Array.isArray(value)) for (const v of value) if (v && typeof v === 'object') Object.freeze(v);
  return value && typeof value === 'object' ? Object.freeze(value) : value;
}

const caches = new WeakMap<Database, ConfigCache>();

/** The cache of one database (one per service; tests run several). */
export function configCacheOf(db: Database): ConfigCache {
  let c = caches.get(db);
  if (!c) {
    c = new ConfigCache();
    caches.set(db, c);
  }
  return c;
}
