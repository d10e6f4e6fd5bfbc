/**
 * One row written by its column names instead of positional SQL: `insertRow` and `updateRow` build
 * the statement from the record's keys, so that a resource's columns are listed once, in its
 * definition, and an added field needs no edit of an INSERT or UPDATE. Values go as `?` parameters
 * (objects as JSON, booleans as the backend stores them: `Database` converts them); table and
 * column names must be the caller's own constants, never request data.
 */
import type { Queryable } from './database.ts';

/** `INSERT INTO table (...) VALUES (...)` of one row. */
export async function insertRow(q: Queryable, table: string, row: Record<string, unknown>): Promise<void> {
  const cols = Object.keys(row);
  await q.run(
    `INSERT INTO ${table} (${cols.join(', ')}) VALUES (${cols.map(() => '?').join(', ')})`,
    cols.map((c) => row[c]) as never[],
  );
}

/**
 * `INSERT ... ON CONFLICT (keys) DO UPDATE SET col = excluded.col, ...` of one row, on both backends:
 * the row goes in, or the row already holding the same `keys` takes its `update` columns' values.
 */
export async function upsertRow<R extends Record<string, unknown>>(
  q: Queryable,
  table: string,
  row: R,
  keys: readonly (keyof R & string)[],
  update: readonly (keyof R & string)[],
): Promise<void> {
  const cols = Object.keys(row);
  await q.run(
    `INSERT INTO ${table} (${cols.join(', ')}) VALUES (${cols.map(() => '?').join(', ')}) ` +
      `ON CONFLICT (${keys.join(', ')}) DO UPDATE SET ${update.map((c) => `${c} = excluded.${c}`).join(', ')}`,
    cols.map((c) => row[c]) as never[],
  );
}

/** `UPDATE table SET ... WHERE key = ? AND ...`. */
export async function updateRow(
  q: Queryable,
  table: string,
  set: Record<string, unknown>,
  where: Record<string, unknown>,
): Promise<void> {
  const cols = Object.keys(set);
  const keys = Object.keys(where);
  await q.run(
    `UPDATE ${table} SET ${cols.map((c) => `${c} = ?`).join(', ')} WHERE ${keys.map((k) => `${k} = ?`).join(' AND ')}`,
    [...cols.map((c) => set[c]), ...keys.map((k) => where[k])] as never[],
  );
}
