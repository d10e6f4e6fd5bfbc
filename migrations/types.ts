/** A numbered schema migration. Statements must be idempotent (IF NOT EXISTS) so a re-run is harmless. */
export interface Migration {
  id: string;
  up(d: Dialect): string[];
  /**
   * For changes SQL cannot guard itself (SQLite has no `DROP COLUMN IF EXISTS`): a query answering
   * one row `n`, the count of what is left to change. When it is 0 the statements are skipped and
   * the migration is recorded as applied.
   */
  pending?(d: Dialect): string;
}

/** Column types per backend, so one migration text serves SQLite and PostgreSQL. */
export interface Dialect {
  name: 'sqlite' | 'postgresql';
  bool: string;
  json: string;
  bigint: string;
  blob: string;
  /** `true`/`false` literal for defaults. */
  t: string;
  f: string;
}

export const dialects: Record<Dialect['name'], Dialect> = {
  sqlite: { name: 'sqlite', bool: 'INTEGER', json: 'TEXT', bigint: 'INTEGER', blob: 'BLOB', t: '1', f: '0' },
  postgresql: {
    name: 'postgresql',
    bool: 'BOOLEAN',
    json: 'TEXT',
    bigint: 'BIGINT',
    blob: 'BYTEA',
    t: 'TRUE',
    f: 'FALSE',
  },
};
