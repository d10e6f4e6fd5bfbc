/** A numbered schema migration. Statements must be idempotent (IF NOT EXISTS) so a re-run is harmless. */
export interface Migration {
  id: string;
  up(d: Dialect): string[];
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
  postgresql: { name: 'postgresql', bool: 'BOOLEAN', json: 'TEXT', bigint: 'BIGINT', blob: 'BYTEA', t: 'TRUE', f: 'FALSE' },
};
