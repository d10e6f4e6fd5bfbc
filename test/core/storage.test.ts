import t from 'tap';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import BetterSqlite from 'better-sqlite3';
import { startService } from '../helpers/service.ts';
import { takeSqliteSnapshot } from '../../core/src/db/snapshot.ts';

t.test('migrations are idempotent; each boot of an existing database snapshots it first', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-storage-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const a = await startService({ SERVICE_PRE_MIGRATE_SNAPSHOT_KEEP: '2' }, { dataDir: dir });
  const db = a.service.core.db;
  t.equal((await db.get<{ journal_mode: string }>('PRAGMA journal_mode'))?.journal_mode, 'wal');
  t.equal(Number((await db.get<{ foreign_keys: number }>('PRAGMA foreign_keys'))?.foreign_keys), 1);
  t.equal(Number((await db.get<{ timeout: number }>('PRAGMA busy_timeout'))?.timeout), 10000);
  await a.stop();
  t.same(fs.existsSync(path.join(dir, 'snapshots')) ? fs.readdirSync(path.join(dir, 'snapshots')) : [], [], 'no snapshot of a brand-new database');
  for (let i = 0; i < 3; i++) {
    const b = await startService({ SERVICE_PRE_MIGRATE_SNAPSHOT_KEEP: '2' }, { dataDir: dir, setup: false });
    const applied = await b.service.core.db.all('SELECT id FROM schema_migrations');
    t.ok(applied.length >= 2, 'migrations recorded once');
    t.equal((await b.request('GET', '/api/setup')).body.needs_setup, false, 'data kept');
    await b.stop();
    await new Promise((r) => setTimeout(r, 5));
  }
  const snaps = fs.readdirSync(path.join(dir, 'snapshots')).filter((f) => /^pre-migrate-\d{8}T\d{6}\d{3}Z\.db$/.test(f));
  t.equal(snaps.length, 2, 'only the newest SERVICE_PRE_MIGRATE_SNAPSHOT_KEEP kept');
  const copy = new BetterSqlite(path.join(dir, 'snapshots', snaps.at(-1)!), { readonly: true });
  t.equal(copy.pragma('integrity_check', { simple: true }), 'ok');
  t.equal((copy.prepare('SELECT COUNT(*) AS n FROM users').get() as { n: number }).n, 1, 'snapshot holds the data');
  copy.close();
});

t.test('snapshots disabled with 0; a corrupt source fails the integrity check', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-snap-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'x.db');
  const db = new BetterSqlite(file);
  db.exec('CREATE TABLE t (a); INSERT INTO t VALUES (1)');
  db.close();
  t.equal(await takeSqliteSnapshot(file, path.join(dir, 's'), 0), undefined);
  const ok = await takeSqliteSnapshot(file, path.join(dir, 's'), 3);
  t.ok(ok && fs.existsSync(ok.file));
  const bad = path.join(dir, 'bad.db');
  fs.writeFileSync(bad, Buffer.concat([Buffer.from('SQLite format 3\0'), Buffer.alloc(4096, 7)]));
  await t.rejects(takeSqliteSnapshot(bad, path.join(dir, 's'), 3));
});
