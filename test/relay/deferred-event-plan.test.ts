/**
 * Deleting an event (the retention's batches, a deleted event) cascades to `deferred_dispatch`, whose lookup by
 * `event_id` is read from its index (migration 0035) instead of scanning the table once for every event deleted.
 * Checked on the plan each database makes for that lookup (PostgreSQL with sequential scans off, since a table this
 * small would otherwise be read whole).
 */
import t from 'tap';
import type { Queryable } from '../../core/src/db/database.ts';
import { startService } from '../helpers/service.ts';

t.test("an event's deferred deliveries are found by the event's id from an index", async (t) => {
  const s = await startService();
  t.teardown(() => s.stop());
  const db = s.service.core.db;
  const sql = 'SELECT id FROM deferred_dispatch WHERE event_id = ?';
  const plan =
    db.dialect === 'sqlite'
      ? (await db.all<{ detail: string }>(`EXPLAIN QUERY PLAN ${sql}`, ['e'])).map((r) => r.detail).join(' | ')
      : await db.tx(async (q: Queryable) => {
          await q.run('SET LOCAL enable_seqscan = off');
          const rows = await q.all<{ 'QUERY PLAN': string }>(`EXPLAIN ${sql}`, ['e']);
          return rows.map((r) => r['QUERY PLAN']).join(' | ');
        });
  t.match(plan, /deferred_event/, `read from deferred_event: ${plan}`);
  t.notMatch(plan, /SCAN deferred_dispatch(?! USING)|Seq Scan on deferred_dispatch/, 'no scan of the table');
});
