/**
 * Drops the config fields a plugin's schema does not declare from stored provider, tracker and
 * target records, at boot before anything reads them. The API and restores refuse such fields;
 * this clears the ones saved before they did (a `webhook_token` pasted into a config was shown and
 * backed up unmasked, since only declared `Secret()` fields are masked), and those of records
 * whose plugin comes back after being disabled. It runs at every boot for that reason; records
 * of kinds that are not enabled are left alone, since nothing says what their fields are.
 */
import type { Queryable } from '../db/database.ts';
import { Database as Db } from '../db/database.ts';
import type { Logger } from '../logging/logger.ts';
import { undeclaredFields, withoutFields } from '../plugin-api/index.ts';
import type { PluginHost } from './host.ts';

type Named = { id: string; kind: string; config: unknown };

/** Rewrites every stored config that has undeclared fields; returns how many were rewritten. */
export async function dropUndeclaredConfigFields(db: Queryable, plugins: PluginHost, log: Logger): Promise<number> {
  const tables: [string, string, (kind: string) => unknown][] = [
    ['providers', 'SELECT id, kind, config FROM providers', (k) => plugins.provider(k)?.def.manifest.configSchema],
    [
      'trackers',
      'SELECT t.id, p.kind, t.config FROM trackers t JOIN providers p ON p.id = t.provider_id',
      (k) => plugins.provider(k)?.trackerSchema,
    ],
    ['targets', 'SELECT id, kind, config FROM targets', (k) => plugins.target(k)?.def.manifest.configSchema],
  ];
  let changed = 0;
  for (const [table, sql, schemaOf] of tables) {
    for (const row of await db.all<Named>(sql)) {
      const schema = schemaOf(row.kind);
      if (!schema) continue;
      const config = Db.json<unknown>(row.config, {});
      const fields = undeclaredFields(schema, config);
      if (!fields.length) continue;
      // updated_at stays: nothing the plugin reads changed, so running instances need no restart.
      await db.run(`UPDATE ${table} SET config = ? WHERE id = ?`, [
        withoutFields(config as Record<string, unknown>, fields),
        row.id,
      ]);
      log.warn(
        { table, id: row.id, kind: row.kind, fields },
        'dropped configuration fields its plugin does not declare',
      );
      changed++;
    }
  }
  return changed;
}
