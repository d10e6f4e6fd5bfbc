import type { Migration } from '../../../migrations/types.ts';
import { dialects } from '../../../migrations/types.ts';
import type { Queryable } from './database.ts';

/** Applies every migration not yet recorded, each in its own transaction. Safe to run at every boot. */
export async function migrate(
  db: Queryable & { tx<T>(fn: (q: Queryable) => Promise<T>): Promise<T> },
  list: Migration[],
): Promise<string[]> {
  const d = dialects[db.dialect];
  await db.run(`CREATE TABLE IF NOT EXISTS schema_migrations (id TEXT PRIMARY KEY, applied_at TEXT NOT NULL)`);
  const done = new Set((await db.all<{ id: string }>('SELECT id FROM schema_migrations')).map((r) => r.id));
  const applied: string[] = [];
  for (const m of list) {
    if (done.has(m.id)) continue;
    await db.tx(async (q) => {
      const left = m.pending ? Number((await q.get<{ n: unknown }>(m.pending(d)))?.n ?? 0) : 1;
      if (left > 0) for (const stmt of m.up(d)) await q.run(stmt);
      await q.run('INSERT INTO schema_migrations (id, applied_at) VALUES (?, ?)', [m.id, new Date().toISOString()]);
    });
    applied.push(m.id);
  }
  return applied;
}

export async function pendingMigrations(db: Queryable, list: Migration[]): Promise<string[]> {
  try {
    const done = new Set((await db.all<{ id: string }>('SELECT id FROM schema_migrations')).map((r) => r.id));
    return list.filter((m) => !done.has(m.id)).map((m) => m.id);
  } catch {
    return list.map((m) => m.id);
  }
}
