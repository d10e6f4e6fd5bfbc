/**
 * The first administrator made from the command line on an empty database (a new SQLite file, or an
 * empty PostgreSQL database in the second pass), with their self-monitoring provider; other commands
 * refuse a database that is not there, and one whose schema is behind unless --migrate; then the
 * service starts on that database and the administrator logs in.
 */

import fs from 'node:fs';
import t from 'tap';
import { readStoppedDatabase, startService } from '../helpers/service.ts';
import { emptyDataDir, herald, randomEmail, runOnDatabase, serviceEnv } from './support.ts';

t.test(
  'an administrator created on an empty database, with their self-monitoring provider; the service then starts on it',
  async (t) => {
    const dir = await emptyDataDir();
    t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
    const env = await serviceEnv(dir);
    const email = randomEmail('first-admin');

    const list = await herald(['user', 'list'], env);
    t.equal(list.code, 1, 'other commands refuse a database that is not there');
    t.match(
      list.stderr,
      new RegExp(
        '^herald: (' +
          /there is no database at .*Check SERVICE_DATA_DIR and SERVICE_DATABASE_URL/.source +
          '|' +
          /the PostgreSQL database .* has no Herald tables\. Check SERVICE_DATABASE_URL/.source +
          ')',
      ),
    );

    const made = await herald(
      ['user', 'create', '--admin', email.toUpperCase(), '--password-stdin'],
      env,
      'first admin password\n',
    );
    t.equal(made.code, 0, made.stderr);
    t.equal(made.stdout, `Administrator ${email} created. They can log in now.\n`);
    t.match(made.stderr, /A new database was set up at/);

    const row = await readStoppedDatabase(dir, 'SELECT id, role, is_active, password_hash FROM users WHERE email = ?', [
      email,
    ]);
    t.equal(row?.role, 'admin');
    t.match(String(row?.password_hash), /^\$2[aby]\$/, 'a bcrypt hash');
    const own = await readStoppedDatabase<{ n: number | string }>(
      dir,
      'SELECT COUNT(*) AS n FROM providers p JOIN trackers t ON t.provider_id = p.id WHERE p.user_id = ?',
      [row!.id],
    );
    t.equal(
      Number(own?.n),
      1,
      'the self-monitoring provider and its tracker were made with the user, as the API makes them',
    );

    const again = await herald(['user', 'create', email, '--password-stdin'], env, 'another password\n');
    t.equal(again.code, 1);
    t.equal(
      again.stderr,
      `herald: a user with the email ${email} exists already; to set their password: herald user reset-password ` +
        `${email}\n`,
    );

    // A database behind this version (as after an upgrade, before the service's start migrates it) is refused unless
    // --migrate.
    const { migrations } = await import('../../migrations/index.ts');
    const newest = migrations.at(-1)!.id;
    t.equal(await runOnDatabase(dir, 'DELETE FROM schema_migrations WHERE id = ?', [newest]), 1);
    const behind = await herald(['user', 'list'], env);
    t.equal(behind.code, 1);
    t.match(
      behind.stderr,
      new RegExp(
        `^herald: the database .* is behind this version: 1 migration is not applied \\(${newest}\\)\\. Start or ` +
          `restart the service once .* run this command again with --migrate\\.\\n$`,
      ),
    );
    const migrated = await herald(['--migrate', 'user', 'list'], env);
    t.equal(migrated.code, 0, migrated.stderr);
    t.match(migrated.stderr, /was brought to this version's schema first \(1 migration\), as the service's start does/);
    t.match(migrated.stdout, new RegExp(`^Email .*\\n${email.replace(/[.]/g, '\\.')} +administrator `));
    t.ok(
      await readStoppedDatabase(dir, 'SELECT id FROM schema_migrations WHERE id = ?', [newest]),
      'the migration is recorded again',
    );

    const s = await startService({}, { dataDir: dir, setup: false });
    t.teardown(() => s.stop());
    t.same((await s.request('GET', '/api/setup')).body, { needs_setup: false }, 'first-run setup is done');
    const login = await s.request('POST', '/api/auth/login', { body: { email, password: 'first admin password' } });
    t.equal(login.status, 200, login.text);
    t.equal(login.body.user.role, 'admin');
  },
);
