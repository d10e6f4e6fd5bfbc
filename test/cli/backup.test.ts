/**
 * `herald backup …` on a configured service's data (SQLite file, or PostgreSQL in the second pass):
 * create writes what the API's export holds (the same configuration and checksum), with or without
 * secrets; stage checks and plans a backup as prepare-restore does, and the next start of the
 * service applies it (bad files: backup-input.test.ts).
 */
import t from 'tap';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startService } from '../helpers/service.ts';
import { configure, exportNow, SECRETS } from '../backup/support.ts';
import { herald, serviceEnv } from './support.ts';

t.test('backup create, list, stage, and the staged restore applied at the next start', async (t) => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-cli-backup-'));
  t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  let s = await startService({}, { dataDir });
  t.teardown(() => s.stop());
  const admin = s.admin;
  const c = await configure(s);
  const env = await serviceEnv(dataDir);
  const backups = path.join(dataDir, 'backups');

  // While the service runs: the same export code, so the same configuration, byte for byte.
  const made = await herald(['backup', 'create', '--secrets', 'include'], env);
  t.equal(made.code, 0, made.stderr);
  const [, file] = /^Backup written: (\S+) \(\d+(?:\.\d)? KiB\)\n/.exec(made.stdout) ?? [];
  t.ok(file && path.dirname(file) === backups, `written into the backups folder: ${made.stdout}`);
  t.match(made.stdout, /It holds the secrets \(sealed with SERVICE_SECRET_KEY\) and the password hashes/);
  t.equal(fs.statSync(file!).mode & 0o777, 0o600, 'owner-only, as the service writes backups');
  const written = JSON.parse(fs.readFileSync(file!, 'utf8'));
  const api = await exportNow(s, 'include');
  t.equal(written.checksum, api.checksum, 'the checksum of what the API exports now');
  t.same(written.configuration, api.configuration, 'the same configuration');
  t.match(written, { format: 'herald-config-backup', secrets_mode: 'include', trigger: 'manual' });

  const plain = await herald(['backup', 'create'], env);
  t.equal(plain.code, 0, plain.stderr);
  t.match(plain.stdout, /Secrets and password hashes were left out/);
  const plainFile = /^Backup written: (\S+) /.exec(plain.stdout)![1]!;
  const plainText = fs.readFileSync(plainFile, 'utf8');
  t.notOk(plainText.includes('enc:v1:') || plainText.includes(SECRETS.api) || plainText.includes('$2'), 'no secret, sealed or not, and no password hash');
  t.equal(JSON.parse(plainText).checksum, (await exportNow(s, 'exclude')).checksum);

  const listed = await herald(['backup', 'list', '--json'], env);
  t.equal(listed.code, 0, listed.stderr);
  t.same(JSON.parse(listed.stdout).files.map((f: { filename: string }) => path.join(backups, f.filename)), [plainFile, file], 'newest first');

  t.test('stage with the service stopped; the next start applies it', async (t) => {
    // Changes made after the backup, which the restore undoes.
    t.equal((await s.request('PATCH', `/api/providers/${c.provider.id}`, { token: c.user.token, body: { name: 'Renamed after the backup' } })).status, 200);
    t.equal((await s.request('DELETE', `/api/targets/${c.target.id}`, { token: c.user.token })).status, 204);
    await s.stop();

    const staged = await herald(['backup', 'stage', file!, '--conflict-mode', 'overwrite'], env);
    t.equal(staged.code, 0, staged.stderr);
    t.match(staged.stdout, new RegExp(`^The restore of ${file!.replace(/[.]/g, '\\.')} \\(made .*\\) is staged, conflict mode overwrite\\.\\nIt will create [1-9]\\d*, replace [1-9]\\d*, `));
    t.match(staged.stdout, /\nIt is applied when the service next starts: restart it/);
    const pending = path.join(dataDir, 'restore', 'pending.json');
    t.equal(fs.statSync(pending).mode & 0o777, 0o600, 'the pending file is owner-only');
    t.match(JSON.parse(fs.readFileSync(pending, 'utf8')), { state: 'staged', staged_by: 'command-line', conflict_mode: 'overwrite', source: { filename: path.basename(file!) } });

    const twice = await herald(['backup', 'stage', file!], env);
    t.equal(twice.code, 1);
    t.equal(twice.stderr, 'herald: a restore is staged already; cancel it (herald backup unstage) before staging another.\n');
    t.match((await herald(['backup', 'list'], env)).stdout, /\nA restore is staged \(backup-\d+T\d+Z\.json, staged .*, conflict mode overwrite\)/);
    const cancelled = await herald(['backup', 'unstage'], env);
    t.equal(cancelled.stdout, 'The staged restore is cancelled.\n');
    t.notOk(fs.existsSync(pending), 'unstaged');
    t.equal((await herald(['backup', 'stage', file!, '--conflict-mode', 'overwrite'], env)).code, 0, 'staged again');

    s = await startService({}, { dataDir, setup: false });
    s.admin = admin;
    t.match(s.logs().find((l) => l.msg === 'staged restore applied'), { conflict_mode: 'overwrite' }, 'applied at boot');
    const login = await s.request('POST', '/api/auth/login', { body: { email: c.user.email, password: 'user password 1' } });
    t.equal(login.status, 200);
    const mine = await s.request('GET', `/api/providers/${c.provider.id}`, { token: login.body.access_token });
    t.equal(mine.body.name, c.provider.name, 'the provider\'s name is back');
    t.equal((await s.request('GET', `/api/targets/${c.target.id}`, { token: login.body.access_token })).status, 200, 'the deleted target is back');
    t.ok(fs.readdirSync(path.join(dataDir, 'restore')).some((f) => /^applied-.*\.json$/.test(f)), 'archived as applied');

    const nothing = await herald(['backup', 'unstage'], env);
    t.equal(nothing.code, 1);
    t.equal(nothing.stderr, 'herald: no restore is staged.\n');
  });
});
