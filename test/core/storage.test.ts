import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import BetterSqlite from 'better-sqlite3';
import type { Test } from 'tap';
import t from 'tap';
import { takeSqliteSnapshot } from '../../core/src/db/snapshot.ts';
import { startService, TEST_DB, testDatabaseUrl } from '../helpers/service.ts';

/**
 * A migration recorded as applied is forgotten, so the next boot has one to apply (it is idempotent: CREATE ... IF NOT
 * EXISTS).
 */
const PENDING = '0028_login_known_addresses';
function forgetMigration(file: string): void {
  const db = new BetterSqlite(file);
  try {
    db.prepare('DELETE FROM schema_migrations WHERE id = ?').run(PENDING);
  } finally {
    db.close();
  }
}

t.test('migrations are idempotent; a boot snapshots the database only when a migration is pending', async (t) => {
  if (TEST_DB === 'postgresql') return postgresSnapshots(t);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-storage-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const a = await startService({ SERVICE_PRE_MIGRATE_SNAPSHOT_KEEP: '2' }, { dataDir: dir });
  const db = a.service.core.db;
  t.equal((await db.get<{ journal_mode: string }>('PRAGMA journal_mode'))?.journal_mode, 'wal');
  t.equal(Number((await db.get<{ foreign_keys: number }>('PRAGMA foreign_keys'))?.foreign_keys), 1);
  t.equal(Number((await db.get<{ timeout: number }>('PRAGMA busy_timeout'))?.timeout), 10000);
  await a.stop();
  const listing = () =>
    fs.existsSync(path.join(dir, 'snapshots')) ? fs.readdirSync(path.join(dir, 'snapshots')).sort() : [];
  t.same(listing(), [], 'no snapshot of a brand-new database');
  for (let i = 0; i < 2; i++) {
    const b = await startService({ SERVICE_PRE_MIGRATE_SNAPSHOT_KEEP: '2' }, { dataDir: dir, setup: false });
    t.equal((await b.request('GET', '/api/setup')).body.needs_setup, false, 'data kept');
    t.notOk(
      b.logs().some((l) => /snapshot/.test(l.msg ?? '')),
      'nothing to migrate: no snapshot, nothing logged about one',
    );
    await b.stop();
  }
  t.same(listing(), [], 'boots with nothing to migrate take no snapshot');
  for (let i = 0; i < 3; i++) {
    forgetMigration(path.join(dir, 'herald.db'));
    const b = await startService({ SERVICE_PRE_MIGRATE_SNAPSHOT_KEEP: '2' }, { dataDir: dir, setup: false });
    const applied = await b.service.core.db.all<{ id: string }>('SELECT id FROM schema_migrations WHERE id = ?', [
      PENDING,
    ]);
    t.equal(applied.length, 1, 'the pending migration applied and recorded once');
    t.equal((await b.request('GET', '/api/setup')).body.needs_setup, false, 'data kept');
    t.ok(
      b.logs().some((l) => l.msg === 'pre-migration snapshot taken and verified'),
      'the boot logged its snapshot',
    );
    await b.stop();
    await new Promise((r) => setTimeout(r, 5));
  }
  const snaps = listing();
  t.equal(snaps.length, 2, 'only the newest SERVICE_PRE_MIGRATE_SNAPSHOT_KEEP kept');
  t.ok(
    snaps.every((f) => /^pre-migrate-\d{8}T\d{6}\d{3}Z\.db$/.test(f)),
    `no -wal or -shm left beside them (${snaps.join(', ')})`,
  );
  const copy = new BetterSqlite(path.join(dir, 'snapshots', snaps.at(-1)!), { readonly: true });
  t.equal(copy.pragma('integrity_check', { simple: true }), 'ok');
  t.equal((copy.prepare('SELECT COUNT(*) AS n FROM users').get() as { n: number }).n, 1, 'snapshot holds the data');
  copy.close();
  t.same(listing(), snaps, 'opening a snapshot leaves no side files either');
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
  await t.rejects(takeSqliteSnapshot(bad, path.join(dir, 'bad-s'), 3));
  t.same(fs.readdirSync(path.join(dir, 'bad-s')), [], 'nothing left of a failed copy');
});

t.test('a snapshot of a WAL database is one file, and pruning removes side files too', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-snap-wal-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'live.db');
  const live = new BetterSqlite(file);
  live.pragma('journal_mode = WAL');
  live.exec('CREATE TABLE t (a INTEGER); INSERT INTO t VALUES (1)');
  const snaps = path.join(dir, 's');
  fs.mkdirSync(snaps);
  // What earlier versions left: the side files of a pruned snapshot, and of a kept one.
  for (const f of ['pre-migrate-20240101T000000000Z.db-wal', 'pre-migrate-20240101T000000000Z.db-shm', 'unrelated.txt'])
    fs.writeFileSync(path.join(snaps, f), '');
  for (let i = 0; i < 4; i++) {
    const snap = await takeSqliteSnapshot(file, snaps, 2, new Date(Date.UTC(2030, 0, 1, 0, 0, i)));
    const copy = new BetterSqlite(snap!.file, { readonly: true });
    t.equal(copy.pragma('journal_mode', { simple: true }), 'delete', 'the copy keeps a rollback journal, not the WAL');
    t.equal((copy.prepare('SELECT COUNT(*) AS n FROM t').get() as { n: number }).n, 1);
    copy.close();
  }
  live.close();
  t.same(
    fs.readdirSync(snaps).sort(),
    ['pre-migrate-20300101T000002000Z.db', 'pre-migrate-20300101T000003000Z.db', 'unrelated.txt'],
    'two snapshots kept, no -wal or -shm of any snapshot left, other files untouched',
  );
});

/**
 * The PostgreSQL side of the first test: constraints enforced, the boot lock released, none for a
 * boot with nothing to migrate, a verified `pg_dump` custom-format snapshot per boot with a migration
 * pending (only the newest kept, and it restores), and a warning, not silence, when the client tools are missing.
 */
async function postgresSnapshots(t: Test): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-storage-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const a = await startService({ SERVICE_PRE_MIGRATE_SNAPSHOT_KEEP: '2' }, { dataDir: dir });
  const db = a.service.core.db;
  t.equal(db.dialect, 'postgresql');
  await t.rejects(
    db.run(
      `INSERT INTO trackers (id, user_id, provider_id, name, created_at, updated_at) VALUES ('x', 'nobody', ` +
        `'nothing', 'n', '', '')`,
    ),
    'foreign keys are enforced',
  );
  const locks = await db.get<{ n: number | string }>(
    `SELECT COUNT(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND database = (SELECT oid FROM pg_database ` +
      'WHERE datname = current_database()) AND pid <> pg_backend_pid() AND objid = ?',
    [7_226_371_900 % 2 ** 32],
  );
  t.equal(Number(locks?.n), 0, 'the boot lock is released once migrations ran');
  await a.stop();
  t.same(
    fs.existsSync(path.join(dir, 'snapshots')) ? fs.readdirSync(path.join(dir, 'snapshots')) : [],
    [],
    'no snapshot of a brand-new database',
  );
  const pg = (await import('pg')).default;
  const forget = async () => {
    const c = new pg.Client({ connectionString: (await testDatabaseUrl(dir))! });
    await c.connect();
    try {
      await c.query('DELETE FROM schema_migrations WHERE id = $1', [PENDING]);
    } finally {
      await c.end();
    }
  };
  const idle = await startService({ SERVICE_PRE_MIGRATE_SNAPSHOT_KEEP: '2' }, { dataDir: dir, setup: false });
  t.notOk(
    idle.logs().some((l) => /snapshot/.test(l.msg ?? '')),
    'nothing to migrate: no snapshot, nothing logged about one',
  );
  await idle.stop();
  t.same(
    fs.existsSync(path.join(dir, 'snapshots')) ? fs.readdirSync(path.join(dir, 'snapshots')) : [],
    [],
    'a boot with nothing to migrate takes no snapshot',
  );
  for (let i = 0; i < 3; i++) {
    await forget();
    const b = await startService({ SERVICE_PRE_MIGRATE_SNAPSHOT_KEEP: '2' }, { dataDir: dir, setup: false });
    const applied = await b.service.core.db.all('SELECT id FROM schema_migrations WHERE id = ?', [PENDING]);
    t.equal(applied.length, 1, 'the pending migration applied and recorded once');
    t.equal((await b.request('GET', '/api/setup')).body.needs_setup, false, 'data kept');
    t.ok(
      b.logs().some((l) => l.msg === 'pre-migration pg_dump snapshot taken and verified'),
      'the boot logged its snapshot',
    );
    await b.stop();
    await new Promise((r) => setTimeout(r, 5));
  }
  const snaps = fs
    .readdirSync(path.join(dir, 'snapshots'))
    .filter((f) => /^pre-migrate-\d{8}T\d{6}\d{3}Z\.dump$/.test(f));
  t.equal(snaps.length, 2, 'only the newest SERVICE_PRE_MIGRATE_SNAPSHOT_KEEP kept');
  t.same(
    fs.readdirSync(path.join(dir, 'snapshots')).filter((f) => f.endsWith('.partial')),
    [],
    'no half-written dump left',
  );
  const newest = path.join(dir, 'snapshots', snaps.at(-1)!);
  t.match(
    execFileSync('pg_restore', ['--list', newest], { encoding: 'utf8' }),
    /TABLE public users/,
    'a custom-format archive pg_restore can read',
  );
  const restored = await testDatabaseUrl();
  execFileSync('pg_restore', ['--no-owner', `--dbname=${restored}`, newest]);
  const c = new pg.Client({ connectionString: restored });
  await c.connect();
  const users = await c.query('SELECT COUNT(*) AS n FROM users');
  await c.end();
  t.equal(Number(users.rows[0].n), 1, 'the dump restores, with the data');

  const path0 = process.env.PATH;
  await forget();
  const bare = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-nopath-'));
  process.env.PATH = bare;
  let c2;
  try {
    c2 = await startService({ SERVICE_PRE_MIGRATE_SNAPSHOT_KEEP: '2' }, { dataDir: dir, setup: false });
  } finally {
    process.env.PATH = path0;
    fs.rmSync(bare, { recursive: true, force: true });
  }
  const warning = c2.logs().find((l) => /no pre-migration snapshot/.test(l.msg ?? ''));
  await c2.stop();
  t.ok(warning, "without pg_dump on PATH the boot warns that backups are the operator's job");
  t.equal(warning?.level, 'warn', 'at warning level');
  t.same(
    fs
      .readdirSync(path.join(dir, 'snapshots'))
      .filter((f) => f.endsWith('.dump'))
      .sort(),
    snaps,
    'and takes no snapshot',
  );

  // A pg_dump that fails refuses the boot, with the password masked in the reason.
  const fake = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-fakedump-'));
  fs.writeFileSync(
    path.join(fake, 'pg_dump'),
    '#!/bin/sh\necho "connection with password $PGPASSWORD refused" >&2\nexit 1\n',
    { mode: 0o755 },
  );
  fs.writeFileSync(path.join(fake, 'pg_restore'), '#!/bin/sh\nexit 0\n', { mode: 0o755 });
  const withPassword = new URL((await testDatabaseUrl(dir))!);
  withPassword.password = 'hunter2-secret';
  await forget();
  process.env.PATH = `${fake}:${path0}`;
  try {
    const refused = await startService(
      { SERVICE_PRE_MIGRATE_SNAPSHOT_KEEP: '2', SERVICE_DATABASE_URL: withPassword.toString() },
      { dataDir: dir, setup: false },
    ).then(
      async (svc) => {
        await svc.stop();
        return undefined;
      },
      (err: Error) => err.message,
    );
    t.match(
      refused,
      /pg_dump snapshot failed.*SERVICE_PRE_MIGRATE_SNAPSHOT_KEEP=0.*refused/s,
      'a failing pg_dump refuses the boot and says how to proceed',
    );
    t.notMatch(refused, /hunter2/, 'without the password');
    t.match(refused, /\*\*\*/, 'masked');
  } finally {
    process.env.PATH = path0;
    fs.rmSync(fake, { recursive: true, force: true });
  }
  t.same(
    fs.readdirSync(path.join(dir, 'snapshots')).filter((f) => !/\.dump$/.test(f)),
    [],
    'nothing half-written left behind',
  );
}

t.test(
  'a database killed mid-write, with a migration pending, boots with its snapshot taken, every committed write kept',
  async (t) => {
    if (TEST_DB === 'postgresql') return;
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-killed-'));
    t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
    const a = await startService({}, { dataDir: dir });
    await a.stop();
    // A process writes in WAL mode without checkpointing and is killed: the WAL stays hot.
    const file = path.join(dir, 'herald.db');
    const script =
      `const S = require(${JSON.stringify(createRequire(import.meta.url).resolve('better-sqlite3'))}); const db = ` +
      `new S(${JSON.stringify(file)}); db.pragma('wal_autocheckpoint = 0');
    db.prepare('DELETE FROM schema_migrations WHERE id = ?').run(${JSON.stringify(PENDING)});
    db.exec('CREATE TABLE IF NOT EXISTS scratch (v TEXT)'); const ins = db.prepare('INSERT INTO scratch ` +
      `VALUES (?)');
    for (let i = 0; i < 200; i++) db.transaction(() => { for (let j = 0; j < 50; j++) ` +
      `ins.run('x'.repeat(200)); })();
    process.kill(process.pid, 'SIGKILL');`;
    try {
      execFileSync(process.execPath, ['-e', script], { stdio: 'ignore' });
    } catch {
      /* killed, as meant */
    }
    t.ok(fs.existsSync(`${file}-wal`) && fs.statSync(`${file}-wal`).size > 0, 'the WAL was left behind');
    const started = Date.now();
    const b = await startService({ SERVICE_PRE_MIGRATE_SNAPSHOT_KEEP: '2' }, { dataDir: dir, setup: false });
    t.ok(Date.now() - started < 15_000, 'the service started');
    t.equal((await b.request('GET', '/api/ready')).status, 200, 'and is ready');
    t.equal(
      Number((await b.service.core.db.get<{ n: number }>('SELECT COUNT(*) AS n FROM scratch'))?.n),
      10_000,
      'every committed write survived',
    );
    await b.stop();
    t.same(
      fs
        .readdirSync(path.join(dir, 'snapshots'))
        .filter((f) => f.startsWith('pre-migrate-'))
        .map((f) => path.extname(f)),
      ['.db'],
      'the snapshot was taken and verified, one file',
    );
  },
);
