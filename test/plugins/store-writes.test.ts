/**
 * The plugin instance store writes only what changes: a value set again as it is stored (same JSON,
 * no expiry) issues no write statement, so a plugin that saves its state after every poll costs a
 * read, not a write commit. A changed value, a value with a time to live, a plain value set sealed
 * (and back) are written. Runs on SQLite and PostgreSQL.
 */

import type { Test } from 'tap';
import t from 'tap';
import type { Queryable } from '../../core/src/db/database.ts';
import { DbInstanceStore } from '../../core/src/plugins/store.ts';
import { startService, type TestService } from '../helpers/service.ts';

const INSTANCE = 'store_writes_instance';
type Params = Parameters<Queryable['run']>[1];

/** A store over the service's database whose write statements (run) are recorded. */
function counted(s: TestService): { store: DbInstanceStore; writes: string[] } {
  const db = s.service.core.db;
  const writes: string[] = [];
  const q: Queryable = {
    dialect: db.dialect,
    all: <T>(sql: string, params?: Params) => db.all<T>(sql, params),
    get: <T>(sql: string, params?: Params) => db.get<T>(sql, params),
    run: (sql: string, params?: Params) => {
      writes.push(sql.trim().split(/\s+/)[0]!);
      return db.run(sql, params);
    },
  };
  return { store: new DbInstanceStore(q, INSTANCE, () => new Date(), s.service.core.atRest), writes };
}

const service = async (t: Test) => {
  const s = await startService();
  t.teardown(() => s.stop());
  return s;
};

const stored = async (s: TestService, key: string) =>
  s.service.core.db.get<{ value: string; expires_at: string | null }>(
    'SELECT value, expires_at FROM plugin_store WHERE instance_id = ? AND key = ?',
    [INSTANCE, key],
  );

t.test('a value set again unchanged issues no write; a changed one is written', async (t) => {
  const s = await service(t);
  const { store, writes } = counted(s);
  await store.set('albums', ['a', 'b']);
  t.same(writes, ['INSERT'], 'the first set writes');
  writes.length = 0;
  await store.set('albums', ['a', 'b']);
  await store.set('albums', ['a', 'b']);
  t.same(writes, [], 'setting the same value again writes nothing');
  t.same(await store.get('albums'), ['a', 'b']);
  await store.set('albums', ['b', 'a']);
  t.same(writes, ['INSERT'], 'a different value (even in another order) is written');
  t.same(await store.get('albums'), ['b', 'a']);
  writes.length = 0;
  await store.set('nothing', undefined);
  await store.set('nothing', null);
  t.same(writes, ['INSERT'], 'undefined is stored as null, and null again is the same');
});

t.test('values with a time to live are always written (the expiry moves); a later plain set clears it', async (t) => {
  const s = await service(t);
  const { store, writes } = counted(s);
  await store.set('seen', 1, { ttlSeconds: 60 });
  await store.set('seen', 1, { ttlSeconds: 60 });
  t.same(writes, ['INSERT', 'INSERT'], 'each set with a time to live writes its expiry');
  t.ok((await stored(s, 'seen'))?.expires_at, 'an expiry is stored');
  writes.length = 0;
  await store.set('seen', 1);
  t.same(writes, ['INSERT'], 'the same value without a time to live is written: the expiry goes');
  t.equal((await stored(s, 'seen'))?.expires_at ?? null, null);
  writes.length = 0;
  await store.set('seen', 1);
  t.same(writes, [], 'and after that it is unchanged');
});

t.test('sealed values: unchanged and sealed with the current key, not written; plain to sealed, written', async (t) => {
  const s = await service(t);
  const { store, writes } = counted(s);
  await store.set('device', { key: 'k1' });
  await store.set('device', { key: 'k1' }, { sealed: true });
  t.same(writes, ['INSERT', 'INSERT'], 'a plain value set sealed is written sealed');
  t.match((await stored(s, 'device'))?.value, /^enc:v1:/);
  const sealedText = (await stored(s, 'device'))?.value;
  writes.length = 0;
  await store.set('device', { key: 'k1' }, { sealed: true });
  t.same(writes, [], 'the same value sealed again writes nothing');
  t.equal((await stored(s, 'device'))?.value, sealedText, 'the sealed text is the one stored before');
  await store.set('device', { key: 'k2' }, { sealed: true });
  t.same(writes, ['INSERT'], 'a changed sealed value is written');
  t.same(await store.get('device'), { key: 'k2' });
  writes.length = 0;
  await store.set('device', { key: 'k2' });
  t.same(writes, ['INSERT'], 'set plain again: written plain');
  t.equal((await stored(s, 'device'))?.value, '{"key":"k2"}');
});
