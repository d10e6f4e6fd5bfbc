/**
 * Migration 0029 on a database as 0028 left it (`npm test` runs this file on SQLite and
 * PostgreSQL): the actions already scheduled survive the change of the kind constraint (SQLite
 * rebuilds the table), `ai_digest` becomes a kind while an unknown kind is still refused, and the
 * event search, the tool calls and `chats.event_id` come into being.
 */

import { randomUUID } from 'node:crypto';
import t from 'tap';
import { migrate } from '../../core/src/db/migrate.ts';
import { migrations } from '../../migrations/index.ts';
import { startService } from '../helpers/service.ts';

const ID = '0029_assistant_lab';

t.test(
  '0029 keeps the scheduled actions and adds the ai_digest kind, the event search and the tool calls',
  async (t) => {
    const s = await startService();
    t.teardown(() => s.stop());
    const db = s.service.core.db;
    const sqlite = db.dialect === 'sqlite';

    // Back to the schema of 0028.
    if (sqlite) {
      for (const trg of ['ai', 'ad', 'au']) await db.run(`DROP TRIGGER IF EXISTS event_search_fts_${trg}`);
      await db.run('DROP TABLE IF EXISTS event_search_fts');
      await db.run('ALTER TABLE chats DROP COLUMN event_id');
    } else {
      await db.run('ALTER TABLE chats DROP COLUMN event_id');
    }
    await db.run('DROP TABLE event_search');
    await db.run('DROP TABLE assistant_tool_calls');
    await db.run('DELETE FROM actions');
    if (sqlite) {
      await db.run('DROP TABLE actions');
      await db.run(
        `CREATE TABLE actions (
      id TEXT PRIMARY KEY, user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE, ` +
          `name TEXT NOT NULL,
      kind TEXT NOT NULL CHECK (kind IN ('digest', 'message')), schedule TEXT NOT NULL, ` +
          `timezone TEXT NOT NULL DEFAULT 'UTC',
      config TEXT NOT NULL DEFAULT '{}', enabled INTEGER NOT NULL DEFAULT 1, last_run_at TEXT NULL, ` +
          `last_status TEXT NULL, last_error TEXT NULL,
      next_run_at TEXT NULL, created_at TEXT NOT NULL, updated_at TEXT NOT NULL)`,
      );
      await db.run('CREATE INDEX IF NOT EXISTS actions_due ON actions (enabled, next_run_at)');
    } else {
      await db.run('ALTER TABLE actions DROP CONSTRAINT actions_kind_check');
      await db.run(`ALTER TABLE actions ADD CONSTRAINT actions_kind_check CHECK (kind IN ('digest', 'message'))`);
    }
    await db.run('DELETE FROM schema_migrations WHERE id = ?', [ID]);
    const now = new Date().toISOString();
    const insert = (kind: string) =>
      db.run(
        'INSERT INTO actions (id, user_id, name, kind, schedule, timezone, config, enabled, last_run_at, ' +
          `last_status, next_run_at, created_at, updated_at)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        [
          randomUUID(),
          s.admin.id,
          `a ${kind}`,
          kind,
          '0 9 * * *',
          'Europe/Berlin',
          { target_ids: [] },
          true,
          now,
          'ok',
          now,
          now,
          now,
        ],
      );
    await insert('message');
    await t.rejects(insert('ai_digest'), 'the old schema refuses the new kind');

    t.same(await migrate(db, migrations), [ID], 'the migration runs');
    const rows = await db.all('SELECT name, kind, schedule, timezone, last_status FROM actions');
    t.same(
      rows,
      [{ name: 'a message', kind: 'message', schedule: '0 9 * * *', timezone: 'Europe/Berlin', last_status: 'ok' }],
      'the scheduled action is kept as it was',
    );
    await insert('ai_digest');
    await t.rejects(insert('reboot'), 'an unknown kind is still refused');
    t.equal(Number((await db.get('SELECT COUNT(*) AS n FROM actions'))?.n), 2);
    t.ok(await db.get('SELECT COUNT(*) AS n FROM event_search'), 'the event search table');
    t.ok(await db.get('SELECT COUNT(*) AS n FROM assistant_tool_calls'), 'the tool calls table');
    await t.resolves(db.get('SELECT event_id FROM chats LIMIT 1'), 'chats.event_id');
    t.same(await migrate(db, migrations), [], 'nothing left to run');
  },
);
