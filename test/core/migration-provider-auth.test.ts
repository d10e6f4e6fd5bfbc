/**
 * Migration 0005 folds the providers' old `auth_mode` / `acknowledge_unauthenticated` columns into
 * the generic webhook's config and drops them (`npm test` runs this file on SQLite and PostgreSQL).
 */

import { randomUUID } from 'node:crypto';
import t from 'tap';
import { Database as Db } from '../../core/src/db/database.ts';
import { migrate } from '../../core/src/db/migrate.ts';
import { migrations } from '../../migrations/index.ts';
import { dialects } from '../../migrations/types.ts';
import { startService, TEST_PLUGINS } from '../helpers/service.ts';

const ID = '0005_provider_auth_in_config';

t.test('a database with the old auth columns and rows migrates into plugin config', async (t) => {
  const s = await startService({ SERVICE_PLUGINS: `${TEST_PLUGINS},@herald/provider-webhook` });
  t.teardown(() => s.stop());
  const db = s.service.core.db;
  const d = dialects[db.dialect];
  const columns = async () =>
    Object.keys((await db.get('SELECT * FROM providers WHERE kind = ? ORDER BY id LIMIT 1', ['webhook'])) ?? {});

  // The schema as 0002 made it, with rows written by the old providers API.
  await db.run('ALTER TABLE providers ADD COLUMN auth_mode TEXT NULL');
  await db.run(`ALTER TABLE providers ADD COLUMN acknowledge_unauthenticated ${d.bool} NOT NULL DEFAULT ${d.f}`);
  await db.run('DELETE FROM schema_migrations WHERE id = ?', [ID]);
  const now = new Date().toISOString();
  const insert = async (kind: string, config: unknown, authMode: string | null, ack: boolean) => {
    const id = randomUUID();
    await db.run(
      'INSERT INTO providers (id, user_id, kind, name, config, enabled, webhook_token, auth_mode, ' +
        `acknowledge_unauthenticated, status, created_at, updated_at)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        id,
        s.admin.id,
        kind,
        kind,
        typeof config === 'string' ? config : JSON.stringify(config),
        false,
        randomUUID().replaceAll('-', ''),
        authMode,
        ack,
        'disabled',
        now,
        now,
      ],
    );
    return id;
  };
  const mapping = { title: 'title' };
  // Created before the config carried the settings: only the columns know them.
  const open = await insert('webhook', { mapping }, 'none', true);
  // The columns were what the API showed; they win over a stale copy in the config.
  const stale = await insert(
    'webhook',
    { mapping, secret: '0123456789abcdef', auth_mode: 'hmac_sha256', acknowledge_unauthenticated: true },
    'bearer',
    false,
  );
  // An unacknowledged "none" keeps its value: the plugin refuses its requests until the opt-in.
  const unacked = await insert('webhook', { mapping }, 'none', false);
  const example = await insert('example', { shared_token: 'sharedtoken1' }, null, false);
  const broken = await insert('webhook', '[]', 'bearer', false);
  t.ok((await columns()).includes('auth_mode'), 'the old columns are there before');

  t.same(await migrate(db, migrations), [ID], 'the migration runs');
  const cols = await columns();
  t.notOk(cols.includes('auth_mode'), 'auth_mode column dropped');
  t.notOk(cols.includes('acknowledge_unauthenticated'), 'acknowledge_unauthenticated column dropped');
  const config = async (id: string) =>
    Db.json<Record<string, unknown>>((await db.get('SELECT config FROM providers WHERE id = ?', [id]))!.config, {});
  t.same(
    await config(open),
    { mapping, auth_mode: 'none', acknowledge_unauthenticated: true },
    'folded into the config',
  );
  t.same(
    await config(stale),
    { mapping, secret: '0123456789abcdef', auth_mode: 'bearer', acknowledge_unauthenticated: false },
    'the columns win; the rest of the config is kept',
  );
  t.same(await config(unacked), { mapping, auth_mode: 'none', acknowledge_unauthenticated: false });
  t.same(await config(example), { shared_token: 'sharedtoken1' }, 'a kind without auth settings is untouched');
  t.same(
    await config(broken),
    { auth_mode: 'bearer', acknowledge_unauthenticated: false },
    'a config that is not an object becomes one',
  );

  const shown = await s.request('GET', `/api/providers/${open}`, { token: s.admin.token });
  t.equal(shown.body.auth_mode, 'none', 'the API still answers the top-level fields, from the config');
  t.equal(shown.body.acknowledge_unauthenticated, true);
  const other = await s.request('GET', `/api/providers/${example}`, { token: s.admin.token });
  t.notOk('auth_mode' in other.body, 'kinds without the alias do not carry it');

  t.same(await migrate(db, migrations), [], 'recorded: a second boot does nothing');
  await db.run('DELETE FROM schema_migrations WHERE id = ?', [ID]);
  t.same(await migrate(db, migrations), [ID], 'with the record lost it runs again…');
  t.same(
    await config(stale),
    { mapping, secret: '0123456789abcdef', auth_mode: 'bearer', acknowledge_unauthenticated: false },
    '…and changes nothing: the columns are gone',
  );
});
