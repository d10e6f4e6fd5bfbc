/**
 * The raw-SQL layer behaves the same on SQLite and PostgreSQL (`npm test` runs this file on both):
 * `?` placeholders with awkward values, booleans, affected-row counts, RETURNING, ON CONFLICT,
 * COUNT(*) as numbers, JSON text, binary values, NUL characters, rollback.
 */
import t from 'tap';
import { Database } from '../../core/src/db/database.ts';
import { dialects } from '../../migrations/types.ts';
import { startService, TEST_DB } from '../helpers/service.ts';

t.test('raw SQL means the same on both backends', async (t) => {
  const s = await startService({}, { setup: false });
  t.teardown(() => s.stop());
  const db = s.service.core.db;
  t.equal(db.dialect, TEST_DB, `running on ${TEST_DB}`);
  const d = dialects[db.dialect];
  await db.run(
    `CREATE TABLE probe (id TEXT PRIMARY KEY, flag ${d.bool} NOT NULL DEFAULT ${d.f}, n INTEGER NOT NULL DEFAULT ` +
      `0, doc ${d.json} NULL, bin ${d.blob} NULL)`,
  );

  const awkward = `it's a "?" and ?? and \\? with a back\\slash, кириллица, 🚀`;
  await db.run('INSERT INTO probe (id, flag, doc) VALUES (?, ?, ?)', ['a', true, { text: awkward }]);
  await db.run('INSERT INTO probe (id, flag, doc) VALUES (?, ?, ?)', [awkward, false, null]);
  const a = await db.get('SELECT * FROM probe WHERE id = ?', ['a']);
  t.equal(Database.bool(a?.flag), true, 'a boolean comes back true');
  t.same(Database.json(a?.doc, {}), { text: awkward }, 'an object is stored as JSON text and parsed back');
  const odd = await db.get<{ id: string; flag: unknown }>('SELECT id, flag FROM probe WHERE id = ?', [awkward]);
  t.equal(odd?.id, awkward, 'quotes, question marks, backslashes and non-ASCII survive as a parameter');
  t.equal(Database.bool(odd?.flag), false);
  t.equal(
    (await db.all('SELECT id FROM probe WHERE flag = ?', [true])).length,
    1,
    'a boolean parameter compares with a boolean column',
  );

  t.equal(await db.run('UPDATE probe SET n = n + 1'), 2, 'run() counts the rows changed');
  t.equal(
    await db.run('INSERT INTO probe (id) VALUES (?) ON CONFLICT DO NOTHING', ['a']),
    0,
    'ON CONFLICT DO NOTHING changes nothing',
  );
  t.equal(
    await db.run('INSERT INTO probe (id) VALUES (?) ON CONFLICT (id) DO UPDATE SET n = probe.n + 10', ['a']),
    1,
    'an upsert changes one row',
  );
  const returned = await db.all<{ id: string; n: number }>('UPDATE probe SET n = n + 1 WHERE id = ? RETURNING id, n', [
    'a',
  ]);
  t.same(returned, [{ id: 'a', n: 12 }], 'RETURNING gives the new values, integers as numbers');
  const count = await db.get<{ n: number | string }>('SELECT COUNT(*) AS n FROM probe');
  t.equal(Number(count?.n), 2, 'COUNT(*) is a number once wrapped with Number() (PostgreSQL returns a string)');

  const bytes = Buffer.from([0, 1, 2, 250, 255]);
  await db.run('UPDATE probe SET bin = ? WHERE id = ?', [bytes, 'a']);
  const bin = (await db.get<{ bin: Uint8Array }>('SELECT bin FROM probe WHERE id = ?', ['a']))?.bin;
  t.same(Buffer.from(bin!), bytes, 'binary values round-trip');

  await db.run('INSERT INTO probe (id) VALUES (?)', ['nul\u0000byte']);
  const nul = await db.get<{ id: string }>('SELECT id FROM probe WHERE id LIKE ?', ['nul%']);
  t.equal(
    nul?.id,
    TEST_DB === 'sqlite' ? 'nul\u0000byte' : 'nul\uFFFDbyte',
    'a NUL character is stored (PostgreSQL text cannot hold one: it becomes U+FFFD)',
  );

  await t.rejects(
    db.tx(async (q) => {
      await q.run('DELETE FROM probe');
      throw new Error('changed my mind');
    }),
  );
  t.equal(
    Number((await db.get<{ n: number | string }>('SELECT COUNT(*) AS n FROM probe'))?.n),
    3,
    'a failed transaction leaves nothing behind',
  );
});

t.test('an inbound webhook with a NUL in its body is refused as a client error, not a server error', async (t) => {
  const s = await startService();
  t.teardown(() => s.stop());
  const prov = await s.request('POST', '/api/providers', {
    token: s.admin.token,
    body: { kind: 'example', name: 'Ex', config: { shared_token: 'sharedtoken1' } },
  });
  const hook = new URL(prov.body.webhook_url).pathname;
  // With the right token, so that the body is read (a wrong one is refused before the body is).
  const r = await s.request('POST', hook, {
    raw: Buffer.from('not json \u0000 at all'),
    headers: { 'content-type': 'text/plain', 'x-example-token': 'sharedtoken1' },
  });
  t.equal(r.status, 422, 'rejected by the plugin, and the rejection is logged');
  const log = await s.request('GET', `/api/providers/${prov.body.id}/webhook-log`, { token: s.admin.token });
  t.equal(log.body.entries.length, 1);
  t.match(log.body.entries[0].payload_excerpt, /^not json .* at all$/, 'with the body excerpt');
});
